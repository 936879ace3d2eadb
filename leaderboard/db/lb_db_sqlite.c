/* The SQLite driver of lb_db (see lb_db.h for the settings and lb_db_driver.h for the
 * interface). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "db/lb_db_driver.h"

#define BUSY_TIMEOUT_MS 15000

/* Rewrites $N placeholders to SQLite's ?N outside string literals. Returns a malloc'ed copy
 * (caller frees) or NULL when out of memory. */
static char *translate(const char *sql)
{
    char *out = strdup(sql);
    if (!out)
        return NULL;
    int in_string = 0;
    for (char *p = out; *p; p++) {
        if (*p == '\'')
            in_string = !in_string;
        else if (!in_string && *p == '$' && p[1] >= '1' && p[1] <= '9')
            *p = '?';
    }
    return out;
}

static xpb_status sq_exec(void *conn, const char *sql, xpb_err *err)
{
    char *msg = NULL;
    if (sqlite3_exec(conn, sql, NULL, NULL, &msg) != SQLITE_OK) {
        xpb_err_set(err, XPB_IO_ERROR, "database: %s", msg ? msg : sqlite3_errmsg(conn));
        sqlite3_free(msg);
        return XPB_IO_ERROR;
    }
    return XPB_OK;
}

/* Switches to WAL and checks that it took effect (journal_mode answers with a row). */
static xpb_status use_wal(sqlite3 *conn, const char *path, xpb_err *err)
{
    sqlite3_stmt *wal = NULL;
    int ok = sqlite3_prepare_v2(conn, "PRAGMA journal_mode=WAL", -1, &wal, NULL) == SQLITE_OK &&
             sqlite3_step(wal) == SQLITE_ROW &&
             strcmp((const char *)sqlite3_column_text(wal, 0), "wal") == 0;
    sqlite3_finalize(wal);
    if (!ok)
        return xpb_err_set(err, XPB_IO_ERROR, "cannot switch %s to WAL mode: %s", path,
                           sqlite3_errmsg(conn));
    return XPB_OK;
}

static xpb_status sq_open(void **out, const char *path, xpb_err *err)
{
    *out = NULL;
    sqlite3 *conn = NULL;
    xpb_status st;
    int rc = sqlite3_open_v2(
        path, &conn, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        st = xpb_err_set(err, XPB_IO_ERROR, "cannot open database %s: %s", path,
                         conn ? sqlite3_errmsg(conn) : sqlite3_errstr(rc));
        goto fail_conn;
    }
    sqlite3_extended_result_codes(conn, 1);
    sqlite3_busy_timeout(conn, BUSY_TIMEOUT_MS);
    if ((st = use_wal(conn, path, err)) != XPB_OK ||
        (st = sq_exec(conn, "PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL", err)) != XPB_OK)
        goto fail_conn;
    *out = conn;
    return XPB_OK;

fail_conn:
    sqlite3_close(conn);
    return st;
}

static void sq_close(void *conn)
{
    sqlite3_close(conn);
}

static void *sq_prepare(void *conn, const char *sql, xpb_err *err)
{
    char *text = translate(sql);
    if (!text) {
        xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
        return NULL;
    }
    sqlite3_stmt *stmt = NULL;
    if (sqlite3_prepare_v3(conn, text, -1, SQLITE_PREPARE_PERSISTENT, &stmt, NULL) != SQLITE_OK) {
        xpb_err_set(err, XPB_INTERNAL, "database: cannot prepare a statement: %s",
                    sqlite3_errmsg(conn));
        sqlite3_finalize(stmt);
        stmt = NULL;
    }
    free(text);
    return stmt;
}

static void sq_finalize(void *conn, void *stmt)
{
    (void)conn;
    sqlite3_finalize(stmt);
}

static void bind_all(sqlite3_stmt *s, const struct lb_param *params, int n)
{
    for (int i = 0; i < n; i++) {
        const struct lb_param *p = &params[i];
        switch (p->type) {
        case LB_PARAM_INT:
            sqlite3_bind_int64(s, i + 1, p->i);
            break;
        case LB_PARAM_REAL:
            sqlite3_bind_double(s, i + 1, p->r);
            break;
        case LB_PARAM_TEXT:
            sqlite3_bind_text(s, i + 1, p->t, -1, SQLITE_TRANSIENT);
            break;
        default:
            sqlite3_bind_null(s, i + 1);
        }
    }
}

static int sq_step(void *conn, void *stmt, const struct lb_param *params, int n, int first)
{
    (void)conn;
    if (first)
        bind_all(stmt, params, n);
    int rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW)
        return LB_STEP_ROW;
    if (rc == SQLITE_DONE)
        return LB_STEP_DONE;
    if (rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY)
        return LB_STEP_CONFLICT;
    return LB_STEP_ERROR;
}

static void sq_reset(void *conn, void *stmt)
{
    (void)conn;
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
}

static int sq_col_null(void *stmt, int c)
{
    return sqlite3_column_type(stmt, c) == SQLITE_NULL;
}

static const char *sq_col_text(void *stmt, int c)
{
    return (const char *)sqlite3_column_text(stmt, c);
}

static long long sq_col_int(void *stmt, int c)
{
    return sqlite3_column_int64(stmt, c);
}

static double sq_col_real(void *stmt, int c)
{
    return sqlite3_column_double(stmt, c);
}

static const char *sq_errmsg(void *conn)
{
    return sqlite3_errmsg(conn);
}

const struct lb_db_driver lb_sqlite_driver = {
    .kind = LB_DB_SQLITE,
    .open = sq_open,
    .close = sq_close,
    .prepare = sq_prepare,
    .finalize = sq_finalize,
    .step = sq_step,
    .reset = sq_reset,
    .col_null = sq_col_null,
    .col_text = sq_col_text,
    .col_int = sq_col_int,
    .col_real = sq_col_real,
    .exec = sq_exec,
    .errmsg = sq_errmsg,
    /* IMMEDIATE: the write lock is taken at BEGIN, so what the transaction reads first (the
     * duplicate check, the quota) is what it writes against */
    .begin_write = "BEGIN IMMEDIATE",
};
