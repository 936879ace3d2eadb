/* Reading submissions back (see lb_store.h): one submission, its runs, the newest ones, and
 * the values the filter menus offer. */
#include <stdlib.h>
#include <string.h>

#include "store/lb_store.h"
#include "store/lb_store_rows.h"

#define SUBMISSION_COLUMNS                                                                         \
    "s.id, s.content_hash, s.received, s.created, t.name, s.tool_version, s.scenario, s.os, "      \
    "s.cpu_model, s.accelerators, s.n_runs, s.schema_version "

static const char SQL_SUBMISSION[] = "SELECT " SUBMISSION_COLUMNS ", s.document "
                                     "FROM submissions s JOIN tokens t ON t.id = s.token_id "
                                     "WHERE s.id = $1";
static const char SQL_DOCUMENT_BYTES[] = "SELECT document_bytes FROM submissions WHERE id = $1";
/* Parameter 9: whether any filter is set; filters as in lb_store_board.c */
#define LIST_WHERE                                                                                 \
    "WHERE $9 = 0 OR EXISTS (SELECT 1 FROM runs r WHERE r.submission_id = s.id AND "               \
    "r.status = 'ok' AND (r.model = $1 OR $1 IS NULL) AND (r.variant = $2 OR $2 IS NULL) AND "     \
    "(r.mode = $3 OR $3 IS NULL) AND (r.precision = $4 OR $4 IS NULL) AND "                        \
    "(r.backend = $5 OR $5 IS NULL) AND (r.batch = $6 OR $6 IS NULL) AND "                         \
    "(r.world_size = $7 OR $7 IS NULL) AND (t.name = $8 OR $8 IS NULL)) "
static const char SQL_SUBMISSION_RUNS[] =
    "SELECT " LB_RUN_COLUMNS "FROM runs r " LB_RUN_JOINS "WHERE r.submission_id = $10 AND ($9 = 0 "
    "OR (r.status = 'ok' AND (r.model = $1 OR $1 IS NULL) AND (r.variant = $2 OR $2 IS NULL) AND "
    "(r.mode = $3 OR $3 IS NULL) AND (r.precision = $4 OR $4 IS NULL) AND "
    "(r.backend = $5 OR $5 IS NULL) AND (r.batch = $6 OR $6 IS NULL) AND "
    "(r.world_size = $7 OR $7 IS NULL) AND (t.name = $8 OR $8 IS NULL))) "
    "ORDER BY r.run_index LIMIT $11";
static const char SQL_LIST[] =
    "SELECT " SUBMISSION_COLUMNS "FROM submissions s JOIN tokens t ON t.id = s.token_id " LIST_WHERE
    "ORDER BY s.id DESC LIMIT $10 OFFSET $11";
static const char SQL_COUNT[] =
    "SELECT count(*) FROM submissions s JOIN tokens t ON t.id = s.token_id " LIST_WHERE;

/* the menus: a table's columns from the kept tables (lb_store_index.h), the backends from
 * their kept counts, the submitters with a finished run from the tables' kept members */
#define DISTINCT(column) "SELECT DISTINCT " column " FROM board_groups ORDER BY 1 LIMIT $1"
static const char SQL_DISTINCT_MODEL[] = DISTINCT("model");
static const char SQL_DISTINCT_VARIANT[] = DISTINCT("variant");
static const char SQL_DISTINCT_MODE[] = DISTINCT("mode");
static const char SQL_DISTINCT_PRECISION[] = DISTINCT("precision");
static const char SQL_DISTINCT_WORLD[] = DISTINCT("world_size");
static const char SQL_DISTINCT_BACKEND[] = "SELECT backend FROM board_backends ORDER BY 1 LIMIT $1";
/* a submitter with a finished run is a member of a kept table: a lookup per token, where a
 * search of the runs cost 0.2 s per page at 50,000 runs */
static const char SQL_DISTINCT_SUBMITTER[] =
    "SELECT t.name FROM tokens t WHERE EXISTS (SELECT 1 FROM board_members m WHERE "
    "m.token_id = t.id) ORDER BY 1 LIMIT $1";

static void read_submission(struct lb_submission_info *info, struct lb_stmt *s)
{
    memset(info, 0, sizeof *info);
    info->id = lb_col_int(s, 0);
    lb_col_text(info->content_hash, sizeof info->content_hash, s, 1);
    lb_col_text(info->received, sizeof info->received, s, 2);
    lb_col_text(info->created, sizeof info->created, s, 3);
    lb_col_text(info->submitter, sizeof info->submitter, s, 4);
    lb_col_text(info->tool_version, sizeof info->tool_version, s, 5);
    lb_col_text(info->scenario, sizeof info->scenario, s, 6);
    lb_col_text(info->os, sizeof info->os, s, 7);
    lb_col_text(info->cpu_model, sizeof info->cpu_model, s, 8);
    lb_col_text(info->accelerators, sizeof info->accelerators, s, 9);
    info->n_runs = (int)lb_col_int(s, 10);
    info->schema_version = (int)lb_col_int(s, 11);
}

xpb_status lb_store_submission(struct lb_submission_info *info, struct xpb_text *text_out,
                               struct lb_db *db, long long id, xpb_err *err)
{
    struct lb_stmt *s = lb_db_stmt(db, SQL_SUBMISSION, err);
    if (!s)
        return XPB_IO_ERROR;
    lb_stmt_int(s, 1, id);
    int rc = lb_stmt_step(s);
    xpb_status st = XPB_OK;
    if (rc == LB_STEP_ROW) {
        read_submission(info, s);
        if (text_out)
            xpb_text_puts(text_out, lb_col_str(s, 12));
    } else if (rc == LB_STEP_DONE) {
        st = xpb_err_set(err, XPB_NOT_FOUND, "no submission %lld", id);
    } else {
        st = lb_store_db_error(db, "submission lookup", err);
    }
    lb_stmt_done(s);
    return st;
}

xpb_status lb_store_document_bytes(long long *bytes_out, struct lb_db *db, long long id,
                                   xpb_err *err)
{
    *bytes_out = 0;
    struct lb_stmt *s = lb_db_stmt(db, SQL_DOCUMENT_BYTES, err);
    if (!s)
        return XPB_IO_ERROR;
    lb_stmt_int(s, 1, id);
    int rc = lb_stmt_step(s);
    if (rc == LB_STEP_ROW)
        *bytes_out = lb_col_int(s, 0);
    lb_stmt_done(s);
    if (rc == LB_STEP_DONE)
        return xpb_err_set(err, XPB_NOT_FOUND, "no submission %lld", id);
    return rc == LB_STEP_ROW ? XPB_OK : lb_store_db_error(db, "document size", err);
}

xpb_status lb_store_submission_doc(struct lb_submission_info *info, json_t **doc_out,
                                   struct lb_db *db, long long id, xpb_err *err)
{
    *doc_out = NULL;
    struct xpb_text text = {0};
    xpb_status st = lb_store_submission(info, &text, db, id, err);
    if (st == XPB_OK && text.failed)
        st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    if (st != XPB_OK) {
        xpb_text_free(&text);
        return st;
    }
    json_error_t jerr;
    *doc_out = text.data ? json_loadb(text.data, text.len, 0, &jerr) : NULL;
    xpb_text_free(&text);
    if (!*doc_out)
        return xpb_err_set(err, XPB_INTERNAL, "stored document %lld does not parse", id);
    return XPB_OK;
}

/* The filter (parameters 1..8) and whether any is set (9). */
static void bind_list_filter(struct lb_stmt *s, const struct lb_filter *f)
{
    lb_bind_filter(s, f);
    lb_stmt_int(s, 9, lb_filter_any(f));
}

xpb_status lb_store_submission_runs(struct lb_run_row **rows_out, size_t *n_out, struct lb_db *db,
                                    long long id, const struct lb_filter *f, size_t limit,
                                    xpb_err *err)
{
    *rows_out = NULL;
    *n_out = 0;
    struct lb_stmt *s = lb_db_stmt(db, SQL_SUBMISSION_RUNS, err);
    if (!s)
        return XPB_IO_ERROR;
    bind_list_filter(s, f);
    lb_stmt_int(s, 10, id);
    lb_stmt_int(s, 11, (long long)limit);
    return lb_collect_runs(rows_out, n_out, db, s, limit, err);
}

static xpb_status count_list(long long *total, struct lb_db *db, const struct lb_filter *f,
                             xpb_err *err)
{
    struct lb_stmt *s = lb_db_stmt(db, SQL_COUNT, err);
    if (!s)
        return XPB_IO_ERROR;
    bind_list_filter(s, f);
    return lb_store_int(total, db, s, "count failed", err);
}

xpb_status lb_store_list(struct lb_submission_info **out, size_t *n_out, long long *total_out,
                         struct lb_db *db, const struct lb_filter *f, size_t limit, size_t offset,
                         xpb_err *err)
{
    *out = NULL;
    *n_out = 0;
    xpb_status st = count_list(total_out, db, f, err);
    if (st != XPB_OK || limit == 0)
        return st;
    struct lb_stmt *s = lb_db_stmt(db, SQL_LIST, err);
    if (!s)
        return XPB_IO_ERROR;
    bind_list_filter(s, f);
    lb_stmt_int(s, 10, (long long)limit);
    lb_stmt_int(s, 11, (long long)offset);
    struct lb_submission_info *items = calloc(limit, sizeof *items);
    if (!items) {
        lb_stmt_done(s);
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    }
    size_t n = 0;
    int rc = LB_STEP_DONE;
    while (n < limit && (rc = lb_stmt_step(s)) == LB_STEP_ROW)
        read_submission(&items[n++], s);
    if (rc == LB_STEP_ERROR) {
        st = lb_store_db_error(db, "listing failed", err);
        lb_stmt_done(s);
        free(items);
        return st;
    }
    lb_stmt_done(s);
    *out = items;
    *n_out = n;
    return XPB_OK;
}

static const char *distinct_sql(const char *which)
{
    static const struct {
        const char *name, *sql;
    } columns[] = {
        {"model", SQL_DISTINCT_MODEL},         {"variant", SQL_DISTINCT_VARIANT},
        {"mode", SQL_DISTINCT_MODE},           {"precision", SQL_DISTINCT_PRECISION},
        {"backend", SQL_DISTINCT_BACKEND},     {"world_size", SQL_DISTINCT_WORLD},
        {"submitter", SQL_DISTINCT_SUBMITTER},
    };
    for (size_t i = 0; i < sizeof columns / sizeof columns[0]; i++)
        if (!strcmp(which, columns[i].name))
            return columns[i].sql;
    return NULL;
}

xpb_status lb_store_distinct(char ***values_out, size_t *n_out, struct lb_db *db, const char *which,
                             size_t limit, xpb_err *err)
{
    *values_out = NULL;
    *n_out = 0;
    const char *sql = distinct_sql(which);
    if (!sql)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "no column '%s'", which);
    struct lb_stmt *s = lb_db_stmt(db, sql, err);
    if (!s)
        return XPB_IO_ERROR;
    lb_stmt_int(s, 1, (long long)limit);
    char **values = limit ? calloc(limit, sizeof *values) : NULL;
    size_t n = 0;
    int rc = LB_STEP_DONE;
    while (values && n < limit && (rc = lb_stmt_step(s)) == LB_STEP_ROW) {
        if (!(values[n] = strdup(lb_col_str(s, 0))))
            break;
        n++;
    }
    lb_stmt_done(s);
    if ((limit && !values) || rc == LB_STEP_ERROR || (rc == LB_STEP_ROW && n < limit)) {
        lb_store_free_strings(values, n);
        return rc == LB_STEP_ERROR ? lb_store_db_error(db, "distinct values", err)
                                   : xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
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
