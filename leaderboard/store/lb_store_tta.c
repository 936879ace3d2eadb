/* The time-to-accuracy board in the store (see lb_store_tta.h). */
#include "store/lb_store_tta.h"

#include <stdlib.h>
#include <string.h>

#include "store/lb_store_rows.h"

static const char SQL_KEEP[] =
    "INSERT INTO tta_runs(run_id, token_id, model, variant, dataset, target_accuracy, time_s, "
    "time_min_s, time_max_s, energy_j, epochs, reference_epochs, converged, n_runs, "
    "outside_reference) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)";
static const char SQL_RUN_OF[] =
    "SELECT r.id, s.token_id FROM runs r JOIN submissions s ON s.id = r.submission_id "
    "WHERE r.submission_id = $1 AND r.run_index = $2";

#define GROUP_KEY "model, variant, dataset, target_accuracy"
static const char SQL_GROUPS[] =
    "SELECT " GROUP_KEY ", count(*), count(DISTINCT token_id) "
    "FROM tta_runs GROUP BY " GROUP_KEY " "
    "ORDER BY count(DISTINCT token_id) DESC, min(run_id), " GROUP_KEY " LIMIT $1 OFFSET $2";
static const char SQL_GROUP_COUNT[] =
    "SELECT count(*) FROM (SELECT 1 FROM tta_runs GROUP BY " GROUP_KEY ") g";

/* the order of a table: reached first, by time; then by runs converged */
#define TTA_ORDER "(x.time_s IS NULL), x.time_s, x.converged DESC, x.run_id"
/* a table's ranked set, each submitter's fastest $5, with the whole set's size (column
 * LB_RUN_N_COLUMNS) and the scores after it */
static const char SQL_RUNS[] =
    "SELECT " LB_RUN_COLUMNS ", count(*) OVER (), " LB_TTA_COLUMNS
    "FROM (SELECT x.*, ROW_NUMBER() OVER (PARTITION BY x.token_id ORDER BY " TTA_ORDER
    ") AS nth FROM tta_runs x WHERE x.model = $1 AND x.variant = $2 AND x.dataset = $3 AND "
    "x.target_accuracy = $4) x JOIN runs r ON r.id = x.run_id " LB_RUN_JOINS "WHERE x.nth <= $5 "
    "ORDER BY " TTA_ORDER " LIMIT $6";

xpb_status lb_store_tta_keep(struct lb_db *db, long long run_id, long long token_id,
                             const char *model, const char *variant, const struct lb_tta_row *t,
                             xpb_err *err)
{
    struct lb_stmt *s = lb_db_stmt(db, SQL_KEEP, err);
    if (!s)
        return XPB_IO_ERROR;
    lb_stmt_int(s, 1, run_id);
    lb_stmt_int(s, 2, token_id);
    lb_stmt_text(s, 3, model);
    lb_stmt_text(s, 4, variant);
    lb_stmt_text(s, 5, t->dataset);
    lb_stmt_real(s, 6, t->target);
    lb_stmt_real(s, 7, t->seconds);
    lb_stmt_real(s, 8, t->seconds_min);
    lb_stmt_real(s, 9, t->seconds_max);
    lb_stmt_real(s, 10, t->joules);
    lb_stmt_real(s, 11, t->epochs);
    lb_stmt_real(s, 12, t->reference_epochs);
    lb_stmt_int(s, 13, t->converged);
    lb_stmt_int(s, 14, t->runs);
    lb_stmt_int(s, 15, t->outside);
    int rc = lb_stmt_step(s);
    lb_stmt_done(s);
    return rc == LB_STEP_DONE ? XPB_OK
                              : lb_store_db_error(db, "cannot keep a time-to-accuracy run", err);
}

xpb_status lb_store_tta_run_of(long long *run_id, long long *token_id, struct lb_db *db,
                               long long submission_id, int run_index, xpb_err *err)
{
    *run_id = *token_id = 0;
    struct lb_stmt *s = lb_db_stmt(db, SQL_RUN_OF, err);
    if (!s)
        return XPB_IO_ERROR;
    lb_stmt_int(s, 1, submission_id);
    lb_stmt_int(s, 2, run_index);
    int rc = lb_stmt_step(s);
    if (rc == LB_STEP_ROW) {
        *run_id = lb_col_int(s, 0);
        *token_id = lb_col_int(s, 1);
    }
    lb_stmt_done(s);
    if (rc == LB_STEP_DONE)
        return xpb_err_set(err, XPB_NOT_FOUND, "no run %d in submission %lld", run_index,
                           submission_id);
    return rc == LB_STEP_ROW ? XPB_OK : lb_store_db_error(db, "run lookup", err);
}

xpb_status lb_store_tta_groups(struct lb_tta_group **out, size_t *n_out, long long *total_out,
                               struct lb_db *db, size_t limit, size_t offset, xpb_err *err)
{
    *out = NULL;
    *n_out = 0;
    struct lb_stmt *s = lb_db_stmt(db, SQL_GROUP_COUNT, err);
    if (!s)
        return XPB_IO_ERROR;
    xpb_status st = lb_store_int(total_out, db, s, "counting time-to-accuracy tables", err);
    if (st != XPB_OK || limit == 0)
        return st;
    if (!(s = lb_db_stmt(db, SQL_GROUPS, err)))
        return XPB_IO_ERROR;
    lb_stmt_int(s, 1, (long long)limit);
    lb_stmt_int(s, 2, (long long)offset);
    struct lb_tta_group *groups = calloc(limit, sizeof *groups);
    if (!groups) {
        lb_stmt_done(s);
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    }
    size_t n = 0;
    int rc = LB_STEP_DONE;
    while (n < limit && (rc = lb_stmt_step(s)) == LB_STEP_ROW) {
        struct lb_tta_group *g = &groups[n++];
        lb_col_text(g->model, sizeof g->model, s, 0);
        lb_col_text(g->variant, sizeof g->variant, s, 1);
        lb_col_text(g->dataset, sizeof g->dataset, s, 2);
        g->target = lb_col_real(s, 3);
        g->n_runs = lb_col_int(s, 4);
        g->n_submitters = lb_col_int(s, 5);
    }
    if (rc == LB_STEP_ERROR) {
        st = lb_store_db_error(db, "listing time-to-accuracy tables", err);
        free(groups);
        groups = NULL;
        n = 0;
    }
    lb_stmt_done(s);
    *out = groups;
    *n_out = n;
    return st;
}

xpb_status lb_store_tta_runs(struct lb_run_row **rows_out, size_t *n_out, long long *total_out,
                             struct lb_db *db, const struct lb_tta_group *g, size_t per_submitter,
                             size_t limit, xpb_err *err)
{
    *rows_out = NULL;
    *n_out = 0;
    *total_out = 0;
    struct lb_stmt *s = lb_db_stmt(db, SQL_RUNS, err);
    if (!s)
        return XPB_IO_ERROR;
    lb_stmt_text(s, 1, g->model);
    lb_stmt_text(s, 2, g->variant);
    lb_stmt_text(s, 3, g->dataset);
    lb_stmt_real(s, 4, g->target);
    lb_stmt_int(s, 5, (long long)per_submitter);
    lb_stmt_int(s, 6, (long long)limit);
    return lb_collect_tta_runs(rows_out, n_out, total_out, db, s, limit, err);
}
