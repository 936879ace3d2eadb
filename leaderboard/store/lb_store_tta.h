/* The time-to-accuracy board in the store: finished tta runs (schema version 3, mode "tta")
 * kept with their scores in tta_runs (one row per run of runs, migration 6), and the queries of
 * their own tables, one per model, variant, dataset and target, ranked by time to target
 * (lower first; runs that did not reach it last). Never mixed with the throughput rankings:
 * their runs have no throughput and are in none of lb_store_index.h's tables. */
#ifndef LB_STORE_TTA_H
#define LB_STORE_TTA_H

#include <stddef.h>

#include "base/errmsg.h"
#include "db/lb_db.h"
#include "store/lb_store.h"

/* One time-to-accuracy table. */
struct lb_tta_group {
    char model[LB_NAME_MAX + 1], variant[LB_NAME_MAX + 1], dataset[LB_NAME_MAX + 1];
    double target;
    long long n_runs;       /* results in it */
    long long n_submitters; /* distinct submitters among them */
};

/* Keeps run `run_id` (a row of runs of `model`/`variant`, uploaded with token `token_id`) on
 * the board with the scores t (t->has set). XPB_IO_ERROR on a database failure. */
xpb_status lb_store_tta_keep(struct lb_db *db, long long run_id, long long token_id,
                             const char *model, const char *variant, const struct lb_tta_row *t,
                             xpb_err *err);

/* The id of run `run_index` of submission `submission_id` and its submission's token, for
 * lb_store_tta_keep of a run stored before (the migration). XPB_NOT_FOUND when there is none. */
xpb_status lb_store_tta_run_of(long long *run_id, long long *token_id, struct lb_db *db,
                               long long submission_id, int run_index, xpb_err *err);

/* The tables, those with the most submitters first, then the one opened first (so that a new
 * submitter's many new tables come after the others'), `offset` skipped, at most `limit`;
 * *total_out counts them all. *out malloc'ed (caller frees). */
xpb_status lb_store_tta_groups(struct lb_tta_group **out, size_t *n_out, long long *total_out,
                               struct lb_db *db, size_t limit, size_t offset, xpb_err *err);

/* The ranked results of table g: the shortest time to target first, those that did not reach
 * it (no Olympic mean) last, most runs converged first among them; at most `per_submitter` of
 * each submitter (their fastest); the first `limit`. Each row has its run's columns and its
 * scores in row.tta. *total_out counts the whole ranked set. *rows_out malloc'ed (caller
 * frees). */
xpb_status lb_store_tta_runs(struct lb_run_row **rows_out, size_t *n_out, long long *total_out,
                             struct lb_db *db, const struct lb_tta_group *g, size_t per_submitter,
                             size_t limit, xpb_err *err);

#endif
