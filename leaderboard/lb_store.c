/* Submissions in the database (see lb_store.h). */
#include "lb_store.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char SQL_FIND_HASH[] = "SELECT id FROM submissions WHERE content_hash = ?1";
static const char SQL_FIND_KEY[] =
    "SELECT id, content_hash FROM submissions WHERE idempotency_key = ?1 LIMIT 1";
static const char SQL_INSERT_SUBMISSION[] =
    "INSERT INTO submissions(content_hash, idempotency_key, token_id, received, created, "
    "tool_version, scenario, os, cpu_model, accelerators, n_runs, document) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)";
static const char SQL_INSERT_RUN[] =
    "INSERT INTO runs(submission_id, run_index, run_id, status, model, variant, mode, precision, "
    "backend, batch, fusion, threads, transfer, device, is_cpu, throughput, step_p50, step_p95, "
    "flops_per_s, energy_measured, samples_per_joule, verified) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, "
    "?19, ?20, ?21, ?22)";
static const char SQL_TOUCH_TOKEN[] =
    "UPDATE tokens SET last_used = ?2 WHERE id = ?1 AND (last_used IS NULL OR last_used < ?2)";

#define RUN_COLUMNS                                                                                \
    "r.submission_id, r.run_index, r.run_id, r.status, r.model, r.variant, r.mode, r.precision, "  \
    "r.backend, r.transfer, r.batch, r.threads, r.fusion, r.is_cpu, r.device, r.throughput, "      \
    "r.step_p50, r.step_p95, r.flops_per_s, r.energy_measured, r.samples_per_joule, "              \
    "r.verified, t.name, s.received, s.cpu_model, s.os "                                           \
    "FROM runs r JOIN submissions s ON s.id = r.submission_id JOIN tokens t ON t.id = s.token_id "

#define FILTER_CLAUSE                                                                              \
    "(?1 IS NULL OR r.model = ?1) AND (?2 IS NULL OR r.variant = ?2) AND "                         \
    "(?3 IS NULL OR r.mode = ?3) AND (?4 IS NULL OR r.precision = ?4) AND "                        \
    "(?5 IS NULL OR r.backend = ?5) AND (?6 IS NULL OR r.batch = ?6)"

static const char SQL_RUNS[] = "SELECT " RUN_COLUMNS "WHERE r.status = 'ok' AND " FILTER_CLAUSE
                               " ORDER BY r.model, r.variant, r.mode, r.precision, "
                               "r.throughput DESC, r.submission_id LIMIT ?7";
static const char SQL_SUBMISSION_RUNS[] =
    "SELECT " RUN_COLUMNS "WHERE r.submission_id = ?1 ORDER BY r.run_index";
static const char SQL_BEST_CPU[] =
    "SELECT max(throughput) FROM runs WHERE status = 'ok' AND is_cpu = 1 AND model = ?1 AND "
    "variant = ?2 AND mode = ?3 AND precision = ?4 AND batch = ?5";

#define SUBMISSION_COLUMNS                                                                         \
    "s.id, s.content_hash, s.received, s.created, t.name, s.tool_version, s.scenario, s.os, "      \
    "s.cpu_model, s.accelerators, s.n_runs "

static const char SQL_SUBMISSION[] = "SELECT " SUBMISSION_COLUMNS ", s.document "
                                     "FROM submissions s JOIN tokens t ON t.id = s.token_id "
                                     "WHERE s.id = ?1";
#define LIST_WHERE                                                                                 \
    "WHERE ?7 = 0 OR EXISTS (SELECT 1 FROM runs r WHERE r.submission_id = s.id AND "               \
    "r.status = 'ok' AND " FILTER_CLAUSE ") "
static const char SQL_LIST[] =
    "SELECT " SUBMISSION_COLUMNS "FROM submissions s JOIN tokens t ON t.id = s.token_id " LIST_WHERE
    "ORDER BY s.id DESC LIMIT ?8 OFFSET ?9";
static const char SQL_COUNT[] = "SELECT count(*) FROM submissions s " LIST_WHERE;

static const char SQL_DISTINCT_MODEL[] =
    "SELECT DISTINCT model FROM runs WHERE status = 'ok' ORDER BY 1";
static const char SQL_DISTINCT_VARIANT[] =
    "SELECT DISTINCT variant FROM runs WHERE status = 'ok' ORDER BY 1";
static const char SQL_DISTINCT_MODE[] =
    "SELECT DISTINCT mode FROM runs WHERE status = 'ok' ORDER BY 1";
static const char SQL_DISTINCT_PRECISION[] =
    "SELECT DISTINCT precision FROM runs WHERE status = 'ok' ORDER BY 1";
static const char SQL_DISTINCT_BACKEND[] =
    "SELECT DISTINCT backend FROM runs WHERE status = 'ok' ORDER BY 1";

static xpb_status db_error(struct lb_db *db, const char *what, xpb_err *err)
{
    return xpb_err_set(err, XPB_IO_ERROR, "database: %s: %s", what,
                       sqlite3_errmsg(lb_db_handle(db)));
}

static void bind_real(sqlite3_stmt *s, int i, double v)
{
    if (isnan(v))
        sqlite3_bind_null(s, i);
    else
        sqlite3_bind_double(s, i, v);
}

static double column_real(sqlite3_stmt *s, int i)
{
    return sqlite3_column_type(s, i) == SQLITE_NULL ? NAN : sqlite3_column_double(s, i);
}

/* Looks the results up by content hash, then by idempotency key. Returns 1 and the id when
 * stored, 0 when new, -1 on a database error, -2 when the key belongs to other results. */
static int find_existing(long long *id, struct lb_db *db, const char *hash, const char *key,
                         xpb_err *err)
{
    sqlite3_stmt *s = lb_db_stmt(db, SQL_FIND_HASH, err);
    if (!s)
        return -1;
    lb_db_bind_text(s, 1, hash);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        *id = sqlite3_column_int64(s, 0);
    lb_db_done(s);
    if (rc == SQLITE_ROW)
        return 1;
    if (rc != SQLITE_DONE) {
        db_error(db, "duplicate lookup", err);
        return -1;
    }
    if (!key)
        return 0;
    s = lb_db_stmt(db, SQL_FIND_KEY, err);
    if (!s)
        return -1;
    lb_db_bind_text(s, 1, key);
    rc = sqlite3_step(s);
    int result = 0;
    if (rc == SQLITE_ROW) {
        *id = sqlite3_column_int64(s, 0);
        result = -2;
    } else if (rc != SQLITE_DONE) {
        db_error(db, "idempotency lookup", err);
        result = -1;
    }
    lb_db_done(s);
    return result;
}

static xpb_status insert_runs(struct lb_db *db, long long id, const struct lb_run_row *rows,
                              size_t n, xpb_err *err)
{
    for (size_t i = 0; i < n; i++) {
        const struct lb_run_row *r = &rows[i];
        sqlite3_stmt *s = lb_db_stmt(db, SQL_INSERT_RUN, err);
        if (!s)
            return XPB_IO_ERROR;
        sqlite3_bind_int64(s, 1, id);
        sqlite3_bind_int(s, 2, r->run_index);
        lb_db_bind_text(s, 3, r->run_id);
        lb_db_bind_text(s, 4, r->status);
        lb_db_bind_text(s, 5, r->model);
        lb_db_bind_text(s, 6, r->variant);
        lb_db_bind_text(s, 7, r->mode);
        lb_db_bind_text(s, 8, r->precision);
        lb_db_bind_text(s, 9, r->backend);
        sqlite3_bind_int64(s, 10, r->batch);
        sqlite3_bind_int(s, 11, r->fusion);
        sqlite3_bind_int64(s, 12, r->threads);
        lb_db_bind_text(s, 13, r->transfer);
        lb_db_bind_text(s, 14, r->device);
        sqlite3_bind_int(s, 15, r->is_cpu);
        bind_real(s, 16, r->throughput);
        bind_real(s, 17, r->step_p50);
        bind_real(s, 18, r->step_p95);
        bind_real(s, 19, r->flops_per_s);
        sqlite3_bind_int(s, 20, r->energy_measured);
        bind_real(s, 21, r->samples_per_joule);
        if (r->verified < 0)
            sqlite3_bind_null(s, 22);
        else
            sqlite3_bind_int(s, 22, r->verified);
        int rc = sqlite3_step(s);
        lb_db_done(s);
        if (rc != SQLITE_DONE)
            return db_error(db, "cannot store a run", err);
    }
    return XPB_OK;
}

xpb_status lb_store_submit(struct lb_submit_result *out, struct lb_db *db, const json_t *doc,
                           const char *canonical, const char *content_hash,
                           const char *idempotency_key, long long token_id, xpb_err *err)
{
    memset(out, 0, sizeof *out);
    struct lb_submission_info info;
    struct lb_run_row *rows = NULL;
    size_t n = 0;
    xpb_status st = lb_extract(&info, &rows, &n, doc, err);
    if (st != XPB_OK)
        return st;
    /* IMMEDIATE: the duplicate check and the insert see the same database state */
    st = lb_db_exec(db, "BEGIN IMMEDIATE", err);
    if (st != XPB_OK)
        goto fail_rows;
    long long id = 0;
    int found = find_existing(&id, db, content_hash, idempotency_key, err);
    if (found == 1) {
        out->id = id;
        out->duplicate = 1;
        st = lb_db_exec(db, "COMMIT", err);
        goto fail_rows; /* not a failure: nothing to store */
    }
    if (found == -2) {
        st = xpb_err_set(err, XPB_REJECTED,
                         "Idempotency-Key was already used for different results (submission "
                         "%lld)",
                         id);
        goto fail_txn;
    }
    if (found < 0) {
        st = XPB_IO_ERROR;
        goto fail_txn;
    }
    char now[32];
    lb_utc_now(now);
    sqlite3_stmt *s = lb_db_stmt(db, SQL_INSERT_SUBMISSION, err);
    if (!s) {
        st = XPB_IO_ERROR;
        goto fail_txn;
    }
    lb_db_bind_text(s, 1, content_hash);
    lb_db_bind_text(s, 2, idempotency_key);
    sqlite3_bind_int64(s, 3, token_id);
    lb_db_bind_text(s, 4, now);
    lb_db_bind_text(s, 5, info.created);
    lb_db_bind_text(s, 6, info.tool_version);
    lb_db_bind_text(s, 7, info.scenario);
    lb_db_bind_text(s, 8, info.os);
    lb_db_bind_text(s, 9, info.cpu_model);
    lb_db_bind_text(s, 10, info.accelerators);
    sqlite3_bind_int(s, 11, info.n_runs);
    lb_db_bind_text(s, 12, canonical);
    int rc = sqlite3_step(s);
    lb_db_done(s);
    if (rc != SQLITE_DONE) {
        st = db_error(db, "cannot store the submission", err);
        goto fail_txn;
    }
    id = sqlite3_last_insert_rowid(lb_db_handle(db));
    st = insert_runs(db, id, rows, n, err);
    if (st != XPB_OK)
        goto fail_txn;
    s = lb_db_stmt(db, SQL_TOUCH_TOKEN, err);
    if (!s) {
        st = XPB_IO_ERROR;
        goto fail_txn;
    }
    sqlite3_bind_int64(s, 1, token_id);
    lb_db_bind_text(s, 2, now);
    rc = sqlite3_step(s);
    lb_db_done(s);
    if (rc != SQLITE_DONE) {
        st = db_error(db, "cannot record the token's use", err);
        goto fail_txn;
    }
    st = lb_db_exec(db, "COMMIT", err);
    if (st != XPB_OK)
        goto fail_txn;
    out->id = id;
    free(rows);
    return XPB_OK;

fail_txn:
    sqlite3_exec(lb_db_handle(db), "ROLLBACK", NULL, NULL, NULL);
fail_rows:
    free(rows);
    return st;
}

static void read_run_row(struct lb_run_row *r, sqlite3_stmt *s)
{
    memset(r, 0, sizeof *r);
    r->submission_id = sqlite3_column_int64(s, 0);
    r->run_index = sqlite3_column_int(s, 1);
    lb_db_column_text(r->run_id, sizeof r->run_id, s, 2);
    lb_db_column_text(r->status, sizeof r->status, s, 3);
    lb_db_column_text(r->model, sizeof r->model, s, 4);
    lb_db_column_text(r->variant, sizeof r->variant, s, 5);
    lb_db_column_text(r->mode, sizeof r->mode, s, 6);
    lb_db_column_text(r->precision, sizeof r->precision, s, 7);
    lb_db_column_text(r->backend, sizeof r->backend, s, 8);
    lb_db_column_text(r->transfer, sizeof r->transfer, s, 9);
    r->batch = sqlite3_column_int64(s, 10);
    r->threads = sqlite3_column_int64(s, 11);
    r->fusion = sqlite3_column_int(s, 12);
    r->is_cpu = sqlite3_column_int(s, 13);
    lb_db_column_text(r->device, sizeof r->device, s, 14);
    r->throughput = column_real(s, 15);
    r->step_p50 = column_real(s, 16);
    r->step_p95 = column_real(s, 17);
    r->flops_per_s = column_real(s, 18);
    r->energy_measured = sqlite3_column_int(s, 19);
    r->samples_per_joule = column_real(s, 20);
    r->verified = sqlite3_column_type(s, 21) == SQLITE_NULL ? -1 : sqlite3_column_int(s, 21);
    lb_db_column_text(r->submitter, sizeof r->submitter, s, 22);
    lb_db_column_text(r->received, sizeof r->received, s, 23);
    lb_db_column_text(r->cpu_model, sizeof r->cpu_model, s, 24);
    lb_db_column_text(r->os, sizeof r->os, s, 25);
}

/* Steps `s` to the end, collecting run rows (at most `limit`). */
static xpb_status collect_runs(struct lb_run_row **rows_out, size_t *n_out, struct lb_db *db,
                               sqlite3_stmt *s, size_t limit, xpb_err *err)
{
    struct lb_run_row *rows = NULL;
    size_t n = 0, cap = 0;
    int rc = SQLITE_DONE;
    while (n < limit && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 32;
            struct lb_run_row *grown = realloc(rows, ncap * sizeof *grown);
            if (!grown) {
                free(rows);
                lb_db_done(s);
                return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
            }
            rows = grown;
            cap = ncap;
        }
        read_run_row(&rows[n++], s);
    }
    if (n < limit && rc != SQLITE_DONE) {
        free(rows);
        xpb_status st = db_error(db, "query failed", err);
        lb_db_done(s);
        return st;
    }
    lb_db_done(s);
    *rows_out = rows;
    *n_out = n;
    return XPB_OK;
}

static void bind_filter(sqlite3_stmt *s, const struct lb_filter *f)
{
    lb_db_bind_text(s, 1, f ? f->model : NULL);
    lb_db_bind_text(s, 2, f ? f->variant : NULL);
    lb_db_bind_text(s, 3, f ? f->mode : NULL);
    lb_db_bind_text(s, 4, f ? f->precision : NULL);
    lb_db_bind_text(s, 5, f ? f->backend : NULL);
    if (f && f->batch > 0)
        sqlite3_bind_int64(s, 6, f->batch);
    else
        sqlite3_bind_null(s, 6);
}

static int filter_set(const struct lb_filter *f)
{
    return f && (f->model || f->variant || f->mode || f->precision || f->backend || f->batch > 0);
}

xpb_status lb_store_runs(struct lb_run_row **rows_out, size_t *n_out, struct lb_db *db,
                         const struct lb_filter *f, size_t limit, xpb_err *err)
{
    *rows_out = NULL;
    *n_out = 0;
    sqlite3_stmt *s = lb_db_stmt(db, SQL_RUNS, err);
    if (!s)
        return XPB_IO_ERROR;
    bind_filter(s, f);
    sqlite3_bind_int64(s, 7, (sqlite3_int64)limit);
    return collect_runs(rows_out, n_out, db, s, limit, err);
}

xpb_status lb_store_submission_runs(struct lb_run_row **rows_out, size_t *n_out, struct lb_db *db,
                                    long long id, xpb_err *err)
{
    *rows_out = NULL;
    *n_out = 0;
    sqlite3_stmt *s = lb_db_stmt(db, SQL_SUBMISSION_RUNS, err);
    if (!s)
        return XPB_IO_ERROR;
    sqlite3_bind_int64(s, 1, id);
    return collect_runs(rows_out, n_out, db, s, (size_t)-1, err);
}

double lb_store_best_cpu(struct lb_db *db, const struct lb_run_row *row)
{
    sqlite3_stmt *s = lb_db_stmt(db, SQL_BEST_CPU, NULL);
    if (!s)
        return NAN;
    lb_db_bind_text(s, 1, row->model);
    lb_db_bind_text(s, 2, row->variant);
    lb_db_bind_text(s, 3, row->mode);
    lb_db_bind_text(s, 4, row->precision);
    sqlite3_bind_int64(s, 5, row->batch);
    double best = NAN;
    if (sqlite3_step(s) == SQLITE_ROW)
        best = column_real(s, 0);
    lb_db_done(s);
    return best;
}

static void read_submission(struct lb_submission_info *info, sqlite3_stmt *s)
{
    memset(info, 0, sizeof *info);
    info->id = sqlite3_column_int64(s, 0);
    lb_db_column_text(info->content_hash, sizeof info->content_hash, s, 1);
    lb_db_column_text(info->received, sizeof info->received, s, 2);
    lb_db_column_text(info->created, sizeof info->created, s, 3);
    lb_db_column_text(info->submitter, sizeof info->submitter, s, 4);
    lb_db_column_text(info->tool_version, sizeof info->tool_version, s, 5);
    lb_db_column_text(info->scenario, sizeof info->scenario, s, 6);
    lb_db_column_text(info->os, sizeof info->os, s, 7);
    lb_db_column_text(info->cpu_model, sizeof info->cpu_model, s, 8);
    lb_db_column_text(info->accelerators, sizeof info->accelerators, s, 9);
    info->n_runs = sqlite3_column_int(s, 10);
}

xpb_status lb_store_submission(struct lb_submission_info *info, json_t **doc_out, struct lb_db *db,
                               long long id, xpb_err *err)
{
    if (doc_out)
        *doc_out = NULL;
    sqlite3_stmt *s = lb_db_stmt(db, SQL_SUBMISSION, err);
    if (!s)
        return XPB_IO_ERROR;
    sqlite3_bind_int64(s, 1, id);
    int rc = sqlite3_step(s);
    xpb_status st = XPB_OK;
    if (rc == SQLITE_ROW) {
        read_submission(info, s);
        if (doc_out) {
            const char *text = (const char *)sqlite3_column_text(s, 11);
            json_error_t jerr;
            *doc_out = text ? json_loads(text, 0, &jerr) : NULL;
            if (!*doc_out)
                st = xpb_err_set(err, XPB_INTERNAL, "stored document %lld does not parse", id);
        }
    } else if (rc == SQLITE_DONE) {
        st = xpb_err_set(err, XPB_NOT_FOUND, "no submission %lld", id);
    } else {
        st = db_error(db, "submission lookup", err);
    }
    lb_db_done(s);
    return st;
}

xpb_status lb_store_list(struct lb_submission_info **out, size_t *n_out, long long *total_out,
                         struct lb_db *db, const struct lb_filter *f, size_t limit, size_t offset,
                         xpb_err *err)
{
    *out = NULL;
    *n_out = 0;
    *total_out = 0;
    sqlite3_stmt *s = lb_db_stmt(db, SQL_COUNT, err);
    if (!s)
        return XPB_IO_ERROR;
    bind_filter(s, f);
    sqlite3_bind_int(s, 7, filter_set(f));
    if (sqlite3_step(s) != SQLITE_ROW) {
        xpb_status st = db_error(db, "count failed", err);
        lb_db_done(s);
        return st;
    }
    *total_out = sqlite3_column_int64(s, 0);
    lb_db_done(s);
    if (limit == 0)
        return XPB_OK;

    s = lb_db_stmt(db, SQL_LIST, err);
    if (!s)
        return XPB_IO_ERROR;
    bind_filter(s, f);
    sqlite3_bind_int(s, 7, filter_set(f));
    sqlite3_bind_int64(s, 8, (sqlite3_int64)limit);
    sqlite3_bind_int64(s, 9, (sqlite3_int64)offset);
    struct lb_submission_info *items = calloc(limit, sizeof *items);
    if (!items) {
        lb_db_done(s);
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    }
    size_t n = 0;
    int rc = SQLITE_DONE;
    while (n < limit && (rc = sqlite3_step(s)) == SQLITE_ROW)
        read_submission(&items[n++], s);
    if (n < limit && rc != SQLITE_DONE) {
        xpb_status st = db_error(db, "listing failed", err);
        lb_db_done(s);
        free(items);
        return st;
    }
    lb_db_done(s);
    *out = items;
    *n_out = n;
    return XPB_OK;
}

xpb_status lb_store_distinct(char ***values_out, size_t *n_out, struct lb_db *db, const char *which,
                             xpb_err *err)
{
    *values_out = NULL;
    *n_out = 0;
    const char *sql = !strcmp(which, "model")       ? SQL_DISTINCT_MODEL
                      : !strcmp(which, "variant")   ? SQL_DISTINCT_VARIANT
                      : !strcmp(which, "mode")      ? SQL_DISTINCT_MODE
                      : !strcmp(which, "precision") ? SQL_DISTINCT_PRECISION
                      : !strcmp(which, "backend")   ? SQL_DISTINCT_BACKEND
                                                    : NULL;
    if (!sql)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "no column '%s'", which);
    sqlite3_stmt *s = lb_db_stmt(db, sql, err);
    if (!s)
        return XPB_IO_ERROR;
    char **values = NULL;
    size_t n = 0, cap = 0;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            char **grown = realloc(values, ncap * sizeof *grown);
            if (!grown)
                break;
            values = grown;
            cap = ncap;
        }
        const unsigned char *t = sqlite3_column_text(s, 0);
        char *copy = strdup(t ? (const char *)t : "");
        if (!copy)
            break;
        values[n++] = copy;
    }
    lb_db_done(s);
    if (rc != SQLITE_DONE) {
        lb_store_free_strings(values, n);
        return rc == SQLITE_ROW ? xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory")
                                : db_error(db, "distinct values", err);
    }
    *values_out = values;
    *n_out = n;
    return XPB_OK;
}

void lb_store_free_strings(char **values, size_t n)
{
    for (size_t i = 0; values && i < n; i++)
        free(values[i]);
    free(values);
}
