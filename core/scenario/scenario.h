/* Scenarios: YAML files that name benchmark runs (docs/scenarios.md is the reference).
 *
 * A scenario has a name, optional defaults and a list of runs; any list-valued run key is a
 * sweep axis and a run expands to the cartesian product of its axes. --set options override
 * the defaults and every run. Loading validates everything the format can check on its own
 * (keys, types, ranges, sweep size) and expands the runs; model parameters are checked later
 * against the model. Every error message names the position:
 * "<file>:<line>:<column>: <key>: expected <what>, found <what was found>". */
#ifndef XPB_CORE_SCENARIO_H
#define XPB_CORE_SCENARIO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/errmsg.h"
#include "scenario/run_config.h"
#include "scenario/scenario_limits.h"

typedef struct xpb_scenario {
    char *path;        /* as given to load/parse */
    char *name;        /* [A-Za-z0-9_.-]+ */
    char *description; /* NULL when absent */
    char *output;      /* default results path, NULL when absent */
    /* The backend every backend comparison is over (`baseline:`), NULL: the fastest CPU
     * backend of each group of runs (docs/results.md, "Comparisons"). */
    char *baseline;
    /* SHA-256 (hex) of the file's bytes, followed for each --set option, in order, by a NUL
     * byte and the option's text. Without options it is the file's plain sha256sum. */
    char sha256[65];
    /* `max_runs:` the runs `xpubench run` may start without --yes (scenario_guard.h); 0: not
     * set (XPB_SCENARIO_CONFIRM_RUNS) */
    uint32_t max_runs;
    xpb_run_config *runs; /* expanded, in file order then sweep order */
    size_t n_runs;
} xpb_scenario;

/* Reads and parses the scenario file at `path` with the --set options `overrides` ("key=value"
 * strings, may be NULL when n_overrides is 0). On success *out is a new scenario owned by the
 * caller (free with xpb_scenario_free); every string in it, in its runs and their params is
 * owned by the scenario and lives until then. On failure *out is NULL, err holds the message
 * and the status is XPB_IO_ERROR (cannot read), XPB_PARSE_ERROR (bad content, too large),
 * XPB_INVALID_ARGUMENT (a bad --set option) or XPB_OUT_OF_MEMORY. */
xpb_status xpb_scenario_load(xpb_scenario **out, const char *path, const char *const *overrides,
                             size_t n_overrides, xpb_err *err);

/* Like xpb_scenario_load for `len` bytes of `text` already in memory (need not be
 * NUL-terminated). `path_for_messages` names the text in messages and becomes s->path
 * (NULL: "<scenario>"). */
xpb_status xpb_scenario_parse(xpb_scenario **out, const char *path_for_messages, const char *text,
                              size_t len, const char *const *overrides, size_t n_overrides,
                              xpb_err *err);

/* Frees a scenario and everything it owns (NULL is a no-op). */
void xpb_scenario_free(xpb_scenario *s);

/* Prints every run key to `f`: name, help, what it accepts and its default (for --help). */
void xpb_scenario_print_keys(FILE *f);

#endif
