/* Results documents: one JSON document per invocation (schema "xpubench-results", version 2;
 * version 1 still reads; described field by field in docs/results.md). The runner builds the
 * document with jansson, these functions create, validate, write, load, summarise and compare it.
 * The CLI and the leaderboard validate with the same function. */
#ifndef XPB_CORE_RESULTS_H
#define XPB_CORE_RESULTS_H

#include <stdio.h>

#include <jansson.h>

#include "base/errmsg.h"
#include "results/comparisons.h"
#include "results/interval.h"
#include "results/results_limits.h"
#include "results/results_validate.h"

/* A new document holding "schema", "schema_version", "tool" {name, version}, "created" (now,
 * UTC, "YYYY-MM-DDTHH:MM:SSZ"), an empty "environment" object and empty "runs" and
 * "comparisons" arrays. The caller fills in "scenario", "environment" and the runs (it does not
 * validate until they are there), and owns the reference: release it with json_decref.
 * NULL when out of memory. */
json_t *xpb_results_new(void);

/* Appends `run` (a run object of docs/results.md; the reference is stolen, also on failure) to
 * doc's "runs". XPB_INVALID_ARGUMENT when doc has no "runs" array, XPB_OUT_OF_MEMORY. */
xpb_status xpb_results_append_run(json_t *doc, json_t *run);

/* How many runs doc's "runs" holds (0 when it has none). */
size_t xpb_results_run_count(const json_t *doc);

/* Marks doc "interrupted": true: the invocation that writes it has not finished every run (it
 * is still running, or it was stopped, killed or crashed). `xpubench run` writes its document
 * marked from the first write on and clears the mark only in its last write. Returns 1 when
 * it was not marked before, 0 when it was (or when out of memory). */
int xpb_results_mark_interrupted(json_t *doc);

/* Removes the mark: every run of the invocation finished. */
void xpb_results_mark_complete(json_t *doc);

/* 1 when doc does not carry the mark (its invocation finished every run), else 0. */
int xpb_results_complete(const json_t *doc);

/* Adds library `name` at `version` (copied) to doc's environment.libraries, replacing one of
 * that name. XPB_INVALID_ARGUMENT when doc has no environment.libraries object,
 * XPB_OUT_OF_MEMORY. */
xpb_status xpb_results_add_library(json_t *doc, const char *name, const char *version);

/* Validates `doc`, serialises it (2-space indent, top-level keys in the schema's order,
 * every other object in insertion order, reals with 17 significant digits so that they read
 * back identical, final newline) and writes it to `path` atomically (xpb_atomic_write:
 * parent directories are created, an old file is replaced only by a complete new one).
 * Returns XPB_PARSE_ERROR (invalid document, or beyond a limit of results_limits.h, which no
 * reader would accept; nothing written), XPB_OUT_OF_MEMORY or the status of xpb_atomic_write. */
xpb_status xpb_results_write(const json_t *doc, const char *path, xpb_err *err);

/* xpb_results_write that never replaces a file: the document appears at `path` complete, or
 * XPB_INVALID_ARGUMENT when something is there already ("<path>: exists already"; nothing
 * written), as xpb_atomic_create. */
xpb_status xpb_results_create(const json_t *doc, const char *path, xpb_err *err);

/* Reads `path` (at most XPB_RESULTS_MAX_BYTES), measures it (at most XPB_RESULTS_MAX_NODES
 * values and keys, XPB_RESULTS_MAX_DEPTH levels: refused before a tree is built), parses it
 * strictly (duplicate keys rejected) and validates it. On success *out is a new reference
 * owned by the caller (json_decref); on failure *out is NULL. Errors, all naming the file:
 *   XPB_IO_ERROR     cannot open or read ("results.json: cannot open: No such file ...")
 *   XPB_PARSE_ERROR  not JSON ("results.json:3:14: ..."), beyond a limit (saying the limit and
 *                    what the file has), or invalid against the schema
 *                    ("results.json: runs[0].id: ...") */
xpb_status xpb_results_load(json_t **out, const char *path, xpb_err *err);

/* Prints the human summary of `doc` to `f`: a table with one row per run (id, status,
 * model/variant, mode, batch, precision, backend, fused, threads, median throughput with its
 * min-max spread, step time p50/p95/p99 in ms, coefficient of variation in %, GFLOP/s, loss of
 * the first and last timed steps, host peak RSS in MiB), then the comparisons, then one line
 * per run that did not finish with its error. Missing or mistyped fields print as "-", so a
 * document that does not validate still prints. Returns XPB_INVALID_ARGUMENT when `doc` is not
 * an object, XPB_IO_ERROR when writing to `f` fails, otherwise XPB_OK. */
xpb_status xpb_results_print_table(FILE *f, const json_t *doc);

/* Prints, for every run of `doc` that has a "profile" (profile: true on a backend with
 * profile_read), where a step's time goes: a header with the run, its backend, precision and
 * fusion, the step's time in kernels (sum over ops of seconds / calls) and how many ops were
 * fused into others; one line per op kind (ops, fused, ms per step, share), largest first;
 * then the `top` slowest ops with their layers (none when top is 0). Entries with missing or
 * mistyped fields are skipped. *printed (may be NULL) receives the number of runs reported.
 * Returns XPB_INVALID_ARGUMENT when `doc` is not an object, XPB_OUT_OF_MEMORY, XPB_IO_ERROR
 * when writing fails, otherwise XPB_OK. */
xpb_status xpb_results_print_profiles(FILE *f, const json_t *doc, unsigned top, unsigned *printed);

/* The canonical text of a results document (compact, keys sorted, reals with 17 significant
 * digits) and its SHA-256 hex: the upload's idempotency key, and what the leaderboard stores
 * and hashes to deduplicate. *text_out is malloc'ed and owned by the caller (NUL-terminated,
 * *len_out bytes). Returns XPB_OUT_OF_MEMORY or XPB_OK. */
xpb_status xpb_results_canonical(char **text_out, size_t *len_out, char key_out[65],
                                 const json_t *doc, xpb_err *err);

#endif
