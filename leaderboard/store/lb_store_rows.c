/* Run rows out of query results, the filter that selects them, and one-row answers (see
 * lb_store_rows.h). */
#include "store/lb_store_rows.h"

#include <stdlib.h>
#include <string.h>

xpb_status lb_store_db_error(struct lb_db *db, const char *what, xpb_err *err)
{
    return xpb_err_set(err, XPB_IO_ERROR, "database: %s: %s", what, lb_db_errmsg(db));
}

xpb_status lb_store_int(long long *out, struct lb_db *db, struct lb_stmt *s, const char *what,
                        xpb_err *err)
{
    int rc = lb_stmt_step(s);
    *out = rc == LB_STEP_ROW ? lb_col_int(s, 0) : 0;
    xpb_status st = rc == LB_STEP_ROW ? XPB_OK : lb_store_db_error(db, what, err);
    lb_stmt_done(s);
    return st;
}

void lb_bind_count(struct lb_stmt *s, int i, long long v)
{
    if (v > 0)
        lb_stmt_int(s, i, v);
    else
        lb_stmt_text(s, i, NULL);
}

void lb_bind_table(struct lb_stmt *s, const char *model, const char *variant, const char *mode,
                   const char *precision, long long world_size)
{
    lb_stmt_text(s, 1, model);
    lb_stmt_text(s, 2, variant);
    lb_stmt_text(s, 3, mode);
    lb_stmt_text(s, 4, precision);
    lb_stmt_int(s, 5, world_size);
}

void lb_bind_filter(struct lb_stmt *s, const struct lb_filter *f)
{
    lb_stmt_text(s, 1, f ? f->model : NULL);
    lb_stmt_text(s, 2, f ? f->variant : NULL);
    lb_stmt_text(s, 3, f ? f->mode : NULL);
    lb_stmt_text(s, 4, f ? f->precision : NULL);
    lb_stmt_text(s, 5, f ? f->backend : NULL);
    lb_bind_count(s, 6, f ? f->batch : 0);
    lb_bind_count(s, 7, f ? f->world_size : 0);
    lb_stmt_text(s, 8, f ? f->submitter : NULL);
}

void lb_read_run_row(struct lb_run_row *r, struct lb_stmt *s)
{
    memset(r, 0, sizeof *r);
    r->submission_id = lb_col_int(s, 0);
    r->run_index = (int)lb_col_int(s, 1);
    lb_col_text(r->run_id, sizeof r->run_id, s, 2);
    lb_col_text(r->status, sizeof r->status, s, 3);
    lb_col_text(r->model, sizeof r->model, s, 4);
    lb_col_text(r->variant, sizeof r->variant, s, 5);
    lb_col_text(r->mode, sizeof r->mode, s, 6);
    lb_col_text(r->precision, sizeof r->precision, s, 7);
    lb_col_text(r->backend, sizeof r->backend, s, 8);
    lb_col_text(r->transfer, sizeof r->transfer, s, 9);
    r->batch = lb_col_int(s, 10);
    r->threads = lb_col_int(s, 11);
    r->fusion = (int)lb_col_int(s, 12);
    lb_col_text(r->device_kind, sizeof r->device_kind, s, 13);
    lb_col_text(r->device, sizeof r->device, s, 14);
    r->throughput = lb_col_real(s, 15);
    r->step_p50 = lb_col_real(s, 16);
    r->step_p95 = lb_col_real(s, 17);
    r->flops_per_s = lb_col_real(s, 18);
    r->energy_measured = (int)lb_col_int(s, 19);
    r->samples_per_joule = lb_col_real(s, 20);
    r->verified = lb_col_null(s, 21) ? -1 : (int)lb_col_int(s, 21);
    lb_col_text(r->submitter, sizeof r->submitter, s, 22);
    lb_col_text(r->received, sizeof r->received, s, 23);
    lb_col_text(r->cpu_model, sizeof r->cpu_model, s, 24);
    lb_col_text(r->os, sizeof r->os, s, 25);
    r->world_size = lb_col_int(s, 26);
    r->ci_low = lb_col_real(s, 27);
    r->ci_high = lb_col_real(s, 28);
    r->disturbed = (int)lb_col_int(s, 29);
}

xpb_status lb_collect_runs(struct lb_run_row **rows_out, size_t *n_out, struct lb_db *db,
                           struct lb_stmt *s, size_t limit, xpb_err *err)
{
    return lb_collect_runs_counted(rows_out, n_out, NULL, db, s, limit, err);
}

/* The scores of LB_TTA_COLUMNS, from column c of the current row of s. */
static void read_tta(struct lb_tta_row *t, struct lb_stmt *s, int c)
{
    t->has = 1;
    lb_col_text(t->dataset, sizeof t->dataset, s, c);
    t->target = lb_col_real(s, c + 1);
    t->seconds = lb_col_real(s, c + 2);
    t->seconds_min = lb_col_real(s, c + 3);
    t->seconds_max = lb_col_real(s, c + 4);
    t->joules = lb_col_real(s, c + 5);
    t->epochs = lb_col_real(s, c + 6);
    t->reference_epochs = lb_col_real(s, c + 7);
    t->converged = lb_col_int(s, c + 8);
    t->runs = lb_col_int(s, c + 9);
    t->outside = lb_col_int(s, c + 10);
}

/* The rows of s, with the count after LB_RUN_COLUMNS when total_out is not NULL, and the
 * scores after it when `tta`. */
static xpb_status collect(struct lb_run_row **rows_out, size_t *n_out, long long *total_out,
                          int tta, struct lb_db *db, struct lb_stmt *s, size_t limit, xpb_err *err)
{
    *rows_out = NULL;
    *n_out = 0;
    if (total_out)
        *total_out = 0;
    struct lb_run_row *rows = NULL;
    size_t n = 0, cap = 0;
    int rc = LB_STEP_DONE;
    while (n < limit && (rc = lb_stmt_step(s)) == LB_STEP_ROW) {
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 32;
            struct lb_run_row *grown = realloc(rows, ncap * sizeof *grown);
            if (!grown) {
                free(rows);
                lb_stmt_done(s);
                return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
            }
            rows = grown;
            cap = ncap;
        }
        if (total_out && n == 0)
            *total_out = lb_col_int(s, LB_RUN_N_COLUMNS);
        lb_read_run_row(&rows[n], s);
        if (tta)
            read_tta(&rows[n].tta, s, LB_RUN_N_COLUMNS + 1);
        n++;
    }
    if (rc == LB_STEP_ERROR) {
        free(rows);
        xpb_status st = lb_store_db_error(db, "query failed", err);
        lb_stmt_done(s);
        return st;
    }
    lb_stmt_done(s);
    *rows_out = rows;
    *n_out = n;
    return XPB_OK;
}

xpb_status lb_collect_runs_counted(struct lb_run_row **rows_out, size_t *n_out,
                                   long long *total_out, struct lb_db *db, struct lb_stmt *s,
                                   size_t limit, xpb_err *err)
{
    return collect(rows_out, n_out, total_out, 0, db, s, limit, err);
}

xpb_status lb_collect_tta_runs(struct lb_run_row **rows_out, size_t *n_out, long long *total_out,
                               struct lb_db *db, struct lb_stmt *s, size_t limit, xpb_err *err)
{
    return collect(rows_out, n_out, total_out, 1, db, s, limit, err);
}
