/* What the store's query modules share (internal to lb_store_*.c): the filter parameters, the
 * columns of a run row, reading them, collecting a statement's rows, and reading an answer of
 * one row (a count, a new row's id). */
#ifndef LB_STORE_ROWS_H
#define LB_STORE_ROWS_H

#include "store/lb_store.h"

/* The columns lb_read_run_row reads, from a relation `r` of runs joined with its submission
 * `s` and token `t`. */
#define LB_RUN_COLUMNS                                                                             \
    "r.submission_id, r.run_index, r.run_id, r.status, r.model, r.variant, r.mode, r.precision, "  \
    "r.backend, r.transfer, r.batch, r.threads, r.fusion, r.device_kind, r.device, r.throughput, " \
    "r.step_p50, r.step_p95, r.flops_per_s, r.energy_measured, r.samples_per_joule, "              \
    "r.verified, t.name, s.received, s.cpu_model, s.os, r.world_size, r.ci95_low, r.ci95_high, "   \
    "r.disturbed "
#define LB_RUN_N_COLUMNS 30
#define LB_RUN_JOINS                                                                               \
    "JOIN submissions s ON s.id = r.submission_id JOIN tokens t ON t.id = s.token_id "

/* The scores of a time-to-accuracy run (lb_store_tta.h) that lb_collect_tta_runs reads after
 * LB_RUN_COLUMNS and the count, from its row `x` of tta_runs. */
#define LB_TTA_COLUMNS                                                                             \
    "x.dataset, x.target_accuracy, x.time_s, x.time_min_s, x.time_max_s, x.energy_j, x.epochs, "   \
    "x.reference_epochs, x.converged, x.n_runs, x.outside_reference "

/* Binds a count that filters (a batch, a world size) to parameter i of s: v when it is above 0,
 * else NULL (any). */
void lb_bind_count(struct lb_stmt *s, int i, long long v);

/* Binds the key of one ranking table to parameters 1..5 of s, in the order model, variant,
 * mode, precision, world size. */
void lb_bind_table(struct lb_stmt *s, const char *model, const char *variant, const char *mode,
                   const char *precision, long long world_size);

/* Binds filter f (NULL: none) to parameters 1..8 of s, in the order model, variant, mode,
 * precision, backend, batch, world size, submitter; an unset filter binds NULL. */
void lb_bind_filter(struct lb_stmt *s, const struct lb_filter *f);

/* Reads the LB_RUN_COLUMNS of the current row of s. */
void lb_read_run_row(struct lb_run_row *r, struct lb_stmt *s);

/* Steps s (already bound) to the end or to `limit` rows, collecting them; ends the use of s.
 * *rows_out malloc'ed (caller frees). */
xpb_status lb_collect_runs(struct lb_run_row **rows_out, size_t *n_out, struct lb_db *db,
                           struct lb_stmt *s, size_t limit, xpb_err *err);

/* The same for rows that carry one more column after LB_RUN_COLUMNS, a count over the whole
 * result (count(*) OVER ()): its value goes to *total_out (0 without rows). */
xpb_status lb_collect_runs_counted(struct lb_run_row **rows_out, size_t *n_out,
                                   long long *total_out, struct lb_db *db, struct lb_stmt *s,
                                   size_t limit, xpb_err *err);

/* lb_collect_runs_counted for rows that carry LB_TTA_COLUMNS after the count: each row's scores
 * go to its tta (tta.has set). */
xpb_status lb_collect_tta_runs(struct lb_run_row **rows_out, size_t *n_out, long long *total_out,
                               struct lb_db *db, struct lb_stmt *s, size_t limit, xpb_err *err);

/* Steps s (already bound), whose answer is one row (a count, or the id an INSERT ... RETURNING
 * gives), reads the integer in its first column into *out and ends the use of s. XPB_IO_ERROR
 * (lb_store_db_error with `what`) when there is no row; *out is then 0. */
xpb_status lb_store_int(long long *out, struct lb_db *db, struct lb_stmt *s, const char *what,
                        xpb_err *err);

/* XPB_IO_ERROR with "database: <what>: <the driver's message>". */
xpb_status lb_store_db_error(struct lb_db *db, const char *what, xpb_err *err);

#endif
