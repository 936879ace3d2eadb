/* Storing a submission (see lb_store.h): one write transaction with the duplicate check, the
 * token's daily quota, the submission, its runs and the token's last use. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "store/lb_store.h"
#include "store/lb_store_index.h"
#include "store/lb_store_rows.h"
#include "store/lb_store_tta.h"

/* The window of the daily quota. */
#define QUOTA_WINDOW_S (24 * 3600)

static const char SQL_FIND_HASH[] = "SELECT id FROM submissions WHERE content_hash = $1";
static const char SQL_FIND_KEY[] =
    "SELECT id, content_hash FROM submissions WHERE idempotency_key = $1 LIMIT 1";
static const char SQL_RECENT[] =
    "SELECT count(*) FROM submissions WHERE token_id = $1 AND received > $2";
static const char SQL_INSERT_SUBMISSION[] =
    "INSERT INTO submissions(content_hash, idempotency_key, token_id, received, created, "
    "tool_version, scenario, os, cpu_model, accelerators, n_runs, document, schema_version, "
    "document_bytes) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) "
    "RETURNING id";
static const char SQL_INSERT_RUN[] =
    "INSERT INTO runs(submission_id, run_index, run_id, status, model, variant, mode, precision, "
    "backend, batch, fusion, threads, transfer, device, is_cpu, throughput, step_p50, step_p95, "
    "flops_per_s, energy_measured, samples_per_joule, verified, device_kind, world_size, "
    "ci95_low, ci95_high, token_id, disturbed) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, "
    "$19, $20, $21, $22, $23, $24, $25, $26, $27, $28) RETURNING id";
static const char SQL_TOUCH_TOKEN[] =
    "UPDATE tokens SET last_used = $2 WHERE id = $1 AND (last_used < $2 OR last_used IS NULL)";

/* Looks the results up by content hash, then by idempotency key. Returns 1 and the id when
 * stored, 0 when new, -1 on a database error, -2 when the key belongs to other results. */
static int find_existing(long long *id, struct lb_db *db, const char *hash, const char *key,
                         xpb_err *err)
{
    struct lb_stmt *s = lb_db_stmt(db, SQL_FIND_HASH, err);
    if (!s)
        return -1;
    lb_stmt_text(s, 1, hash);
    int rc = lb_stmt_step(s);
    if (rc == LB_STEP_ROW)
        *id = lb_col_int(s, 0);
    lb_stmt_done(s);
    if (rc == LB_STEP_ROW)
        return 1;
    if (rc != LB_STEP_DONE) {
        lb_store_db_error(db, "duplicate lookup", err);
        return -1;
    }
    if (!key)
        return 0;
    if (!(s = lb_db_stmt(db, SQL_FIND_KEY, err)))
        return -1;
    lb_stmt_text(s, 1, key);
    rc = lb_stmt_step(s);
    int result = 0;
    if (rc == LB_STEP_ROW) {
        *id = lb_col_int(s, 0);
        result = -2;
    } else if (rc != LB_STEP_DONE) {
        lb_store_db_error(db, "idempotency lookup", err);
        result = -1;
    }
    lb_stmt_done(s);
    return result;
}

xpb_status lb_store_recent(long long *count_out, struct lb_db *db, long long token_id, xpb_err *err)
{
    *count_out = 0;
    char since[32];
    lb_utc_time(since, QUOTA_WINDOW_S);
    struct lb_stmt *s = lb_db_stmt(db, SQL_RECENT, err);
    if (!s)
        return XPB_IO_ERROR;
    lb_stmt_int(s, 1, token_id);
    lb_stmt_text(s, 2, since);
    return lb_store_int(count_out, db, s, "quota count", err);
}

/* Inserts run r of submission `id` (token token_id); its row's id into *run_id. */
static xpb_status insert_run(long long *run_id, struct lb_db *db, long long id,
                             const struct lb_run_row *r, long long token_id, xpb_err *err)
{
    struct lb_stmt *s = lb_db_stmt(db, SQL_INSERT_RUN, err);
    if (!s)
        return XPB_IO_ERROR;
    lb_stmt_int(s, 1, id);
    lb_stmt_int(s, 2, r->run_index);
    lb_stmt_text(s, 3, r->run_id);
    lb_stmt_text(s, 4, r->status);
    lb_stmt_text(s, 5, r->model);
    lb_stmt_text(s, 6, r->variant);
    lb_stmt_text(s, 7, r->mode);
    lb_stmt_text(s, 8, r->precision);
    lb_stmt_text(s, 9, r->backend);
    lb_stmt_int(s, 10, r->batch);
    lb_stmt_int(s, 11, r->fusion);
    lb_stmt_int(s, 12, r->threads);
    lb_stmt_text(s, 13, r->transfer);
    lb_stmt_text(s, 14, r->device);
    lb_stmt_int(s, 15, lb_kind_is_cpu(r->device_kind));
    lb_stmt_real(s, 16, r->throughput);
    lb_stmt_real(s, 17, r->step_p50);
    lb_stmt_real(s, 18, r->step_p95);
    lb_stmt_real(s, 19, r->flops_per_s);
    lb_stmt_int(s, 20, r->energy_measured);
    lb_stmt_real(s, 21, r->samples_per_joule);
    if (r->verified >= 0)
        lb_stmt_int(s, 22, r->verified);
    else
        lb_stmt_text(s, 22, NULL);
    lb_stmt_text(s, 23, r->device_kind);
    lb_stmt_int(s, 24, r->world_size);
    lb_stmt_real(s, 25, r->ci_low);
    lb_stmt_real(s, 26, r->ci_high);
    lb_stmt_int(s, 27, token_id);
    lb_stmt_int(s, 28, r->disturbed);
    return lb_store_int(run_id, db, s, "cannot store a run", err);
}

/* Inserts every run, and keeps the rankings of the finished ones up to date: those with a
 * throughput in the throughput tables, the time-to-accuracy ones on their own board. */
static xpb_status insert_runs(struct lb_db *db, long long id, const struct lb_run_row *rows,
                              size_t n, long long token_id, xpb_err *err)
{
    for (size_t i = 0; i < n; i++) {
        const struct lb_run_row *r = &rows[i];
        long long run_id = 0;
        xpb_status st = insert_run(&run_id, db, id, r, token_id, err);
        if (st == XPB_OK && !strcmp(r->status, "ok") && !isnan(r->throughput))
            st = lb_store_index_run(db, run_id, id, r, token_id, err);
        if (st == XPB_OK && r->tta.has)
            st = lb_store_tta_keep(db, run_id, token_id, r->model, r->variant, &r->tta, err);
        if (st != XPB_OK)
            return st;
    }
    return XPB_OK;
}

/* Inserts the submission row; its id into *id. */
static xpb_status insert_submission(long long *id, struct lb_db *db,
                                    const struct lb_submission_info *info, const char *canonical,
                                    const char *hash, const char *key, long long token_id,
                                    const char *now, xpb_err *err)
{
    struct lb_stmt *s = lb_db_stmt(db, SQL_INSERT_SUBMISSION, err);
    if (!s)
        return XPB_IO_ERROR;
    lb_stmt_text(s, 1, hash);
    lb_stmt_text(s, 2, key);
    lb_stmt_int(s, 3, token_id);
    lb_stmt_text(s, 4, now);
    lb_stmt_text(s, 5, info->created);
    lb_stmt_text(s, 6, info->tool_version);
    lb_stmt_text(s, 7, info->scenario);
    lb_stmt_text(s, 8, info->os);
    lb_stmt_text(s, 9, info->cpu_model);
    lb_stmt_text(s, 10, info->accelerators);
    lb_stmt_int(s, 11, info->n_runs);
    lb_stmt_text(s, 12, canonical);
    lb_stmt_int(s, 13, info->schema_version);
    lb_stmt_int(s, 14, (long long)strlen(canonical));
    return lb_store_int(id, db, s, "cannot store the submission", err);
}

static xpb_status touch_token(struct lb_db *db, long long token_id, const char *now, xpb_err *err)
{
    struct lb_stmt *s = lb_db_stmt(db, SQL_TOUCH_TOKEN, err);
    if (!s)
        return XPB_IO_ERROR;
    lb_stmt_int(s, 1, token_id);
    lb_stmt_text(s, 2, now);
    int rc = lb_stmt_step(s);
    lb_stmt_done(s);
    return rc == LB_STEP_DONE ? XPB_OK
                              : lb_store_db_error(db, "cannot record the token's use", err);
}

/* Inside the write transaction: the checks, then the rows. */
static xpb_status store_locked(struct lb_submit_result *out, struct lb_db *db,
                               const struct lb_submission_info *info, const struct lb_run_row *rows,
                               size_t n, const char *canonical, const char *hash, const char *key,
                               long long token_id, const struct lb_submit_limits *limits,
                               xpb_err *err)
{
    long long id = 0;
    int found = find_existing(&id, db, hash, key, err);
    if (found == 1) {
        out->outcome = LB_SUBMIT_DUPLICATE;
        out->id = id;
        return XPB_OK;
    }
    if (found == -2)
        return xpb_err_set(err, XPB_REJECTED,
                           "Idempotency-Key was already used for different results (submission "
                           "%lld)",
                           id);
    if (found < 0)
        return XPB_IO_ERROR;
    if (limits->max_per_day > 0) {
        long long recent;
        xpb_status st = lb_store_recent(&recent, db, token_id, err);
        if (st != XPB_OK)
            return st;
        if (recent >= limits->max_per_day) {
            out->outcome = LB_SUBMIT_OVER_QUOTA;
            return XPB_OK;
        }
    }
    char now[32];
    lb_utc_time(now, 0);
    xpb_status st = insert_submission(&id, db, info, canonical, hash, key, token_id, now, err);
    if (st == XPB_OK)
        st = insert_runs(db, id, rows, n, token_id, err);
    if (st == XPB_OK)
        st = touch_token(db, token_id, now, err);
    if (st == XPB_OK) {
        out->outcome = LB_SUBMIT_STORED;
        out->id = id;
    }
    return st;
}

xpb_status lb_store_submit(struct lb_submit_result *out, struct lb_db *db, const json_t *doc,
                           const char *canonical, const char *content_hash,
                           const char *idempotency_key, long long token_id,
                           const struct lb_submit_limits *limits, xpb_err *err)
{
    memset(out, 0, sizeof *out);
    struct lb_submission_info info;
    struct lb_run_row *rows = NULL;
    size_t n = 0;
    xpb_status st = lb_extract(&info, &rows, &n, doc, limits->max_runs, err);
    if (st != XPB_OK)
        return st;
    st = lb_db_begin_write(db, err);
    if (st != XPB_OK)
        goto done_rows;
    st = store_locked(out, db, &info, rows, n, canonical, content_hash, idempotency_key, token_id,
                      limits, err);
    if (st == XPB_OK && out->outcome == LB_SUBMIT_STORED)
        st = lb_db_commit(db, err);
    if (st != XPB_OK || out->outcome != LB_SUBMIT_STORED)
        lb_db_rollback(db); /* nothing to keep: a failure, a duplicate or over the quota */
    if (st != XPB_OK)
        memset(out, 0, sizeof *out);
done_rows:
    free(rows);
    return st;
}
