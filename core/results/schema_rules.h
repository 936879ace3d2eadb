/* The rules of the results schema that tie fields together (docs/results.md, "Rules across
 * fields"): what a run's status requires, metrics that must agree (min <= median <= max,
 * p50 <= p95 <= p99, one repeat entry per repeat, energy all null or none), a multi-rank run's
 * parallel metrics, unique run ids and comparisons that name two different runs with an
 * interval that holds their speedup. They run after the walker (schema_walk.h) has checked
 * every field's own type, so they read the document without checking types again. */
#ifndef XPB_CORE_SCHEMA_RULES_H
#define XPB_CORE_SCHEMA_RULES_H

#include <jansson.h>

#include "results/schema_walk.h"

/* The rules of one run; the walk's path must be at the run ("runs[3]"). Returns 0, or -1 with
 * the problem in c->err. */
int xpb_schema_check_run(struct xpb_schema_walk *c, const json_t *run);

/* Unique run ids, and comparisons that name two different existing runs (and, from version
 * 2, hold their speedup in their interval). The walk's path must be at the root. Returns 0, or
 * -1 with the problem in c->err. */
int xpb_schema_check_ids(struct xpb_schema_walk *c, const json_t *doc);

#endif
