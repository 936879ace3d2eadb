/* The PostgreSQL driver of lb_db over libpq (see lb_db.h and lb_db_driver.h). Statements are
 * prepared on the server once per connection (named lbN) and run with text parameters; a
 * statement's rows come back whole (every query of the service is bounded by a LIMIT). A
 * connection that broke (the server restarted) is re-established on the next statement, and
 * its statements are prepared again. Notices (CREATE ... IF NOT EXISTS) are not printed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "db/lb_db_driver.h"

/* The advisory lock every write transaction holds: "xpb\0". */
#define WRITE_LOCK_KEY "2020631040"

struct pg_conn {
    PGconn *pg;
    unsigned generation; /* bumped when the connection is re-established */
    int next_name;
    int in_txn; /* inside BEGIN ... COMMIT/ROLLBACK: a lost connection lost the transaction,
                   so it is not re-established before the ROLLBACK */
    char error[512];
};

struct pg_stmt {
    char *sql;
    char name[16];
    unsigned prepared_generation; /* 0: not prepared on the server yet */
    PGresult *res;
    int row, n_rows;
};

static void quiet_notices(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

static void set_error(struct pg_conn *c, const char *what, const char *detail)
{
    size_t n = strlen(detail);
    while (n > 0 && (detail[n - 1] == '\n' || detail[n - 1] == ' '))
        n--;
    snprintf(c->error, sizeof c->error, "%s%s%.*s", what, *what ? ": " : "", (int)n, detail);
}

static xpb_status pg_exec_conn(struct pg_conn *c, const char *sql, xpb_err *err)
{
    PGresult *r = PQexec(c->pg, sql);
    ExecStatusType st = PQresultStatus(r);
    xpb_status out = XPB_OK;
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
        set_error(c, "", PQerrorMessage(c->pg));
        out = xpb_err_set(err, XPB_IO_ERROR, "database: %s", c->error);
    }
    PQclear(r);
    return out;
}

static int revive(struct pg_conn *c);

static xpb_status pg_exec(void *conn, const char *sql, xpb_err *err)
{
    struct pg_conn *c = conn;
    int begins = !strncmp(sql, "BEGIN", 5);
    int ends = !strcmp(sql, "COMMIT") || !strcmp(sql, "ROLLBACK");
    if (!ends && !revive(c)) {
        set_error(c, "the connection to PostgreSQL is lost", PQerrorMessage(c->pg));
        return xpb_err_set(err, XPB_IO_ERROR, "database: %s", c->error);
    }
    xpb_status st = pg_exec_conn(c, sql, err);
    if (begins)
        c->in_txn = st == XPB_OK;
    if (ends)
        c->in_txn = 0;
    return st;
}

/* Session settings every connection gets (again after a reset). */
static xpb_status session_setup(struct pg_conn *c, xpb_err *err)
{
    PQsetNoticeProcessor(c->pg, quiet_notices, NULL);
    return pg_exec_conn(c, "SET client_min_messages = warning", err);
}

static xpb_status pg_open(void **out, const char *url, xpb_err *err)
{
    *out = NULL;
    struct pg_conn *c = calloc(1, sizeof *c);
    if (!c)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    c->generation = 1;
    c->pg = PQconnectdb(url);
    xpb_status st;
    if (!c->pg || PQstatus(c->pg) != CONNECTION_OK) {
        set_error(c, "", c->pg ? PQerrorMessage(c->pg) : "out of memory");
        st = xpb_err_set(err, XPB_IO_ERROR, "cannot connect to the PostgreSQL database: %s",
                         c->error);
        goto fail_conn;
    }
    if ((st = session_setup(c, err)) != XPB_OK)
        goto fail_conn;
    *out = c;
    return XPB_OK;

fail_conn:
    PQfinish(c->pg);
    free(c);
    return st;
}

static void pg_close(void *conn)
{
    struct pg_conn *c = conn;
    PQfinish(c->pg);
    free(c);
}

static void *pg_prepare(void *conn, const char *sql, xpb_err *err)
{
    struct pg_conn *c = conn;
    struct pg_stmt *s = calloc(1, sizeof *s);
    if (!s || !(s->sql = strdup(sql))) {
        free(s);
        xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
        return NULL;
    }
    snprintf(s->name, sizeof s->name, "lb%d", c->next_name++);
    return s;
}

static void pg_finalize(void *conn, void *stmt)
{
    (void)conn;
    struct pg_stmt *s = stmt;
    PQclear(s->res);
    free(s->sql);
    free(s);
}

/* Re-establishes a broken connection; its server-side statements are gone with it. */
static int revive(struct pg_conn *c)
{
    if (PQstatus(c->pg) == CONNECTION_OK)
        return 1;
    if (c->in_txn)
        return 0;
    PQreset(c->pg);
    if (PQstatus(c->pg) != CONNECTION_OK)
        return 0;
    c->generation++;
    xpb_err ignored;
    return session_setup(c, &ignored) == XPB_OK;
}

static int prepare_on_server(struct pg_conn *c, struct pg_stmt *s)
{
    if (s->prepared_generation == c->generation)
        return 1;
    PGresult *r = PQprepare(c->pg, s->name, s->sql, 0, NULL);
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    if (!ok)
        set_error(c, "cannot prepare a statement", PQresultErrorMessage(r));
    PQclear(r);
    if (ok)
        s->prepared_generation = c->generation;
    return ok;
}

/* The parameters as text (libpq's text format): numbers printed so that they read back
 * exactly. */
static void params_text(char text[][32], const char **values, const struct lb_param *params, int n)
{
    for (int i = 0; i < n; i++) {
        const struct lb_param *p = &params[i];
        switch (p->type) {
        case LB_PARAM_INT:
            snprintf(text[i], sizeof text[i], "%lld", p->i);
            values[i] = text[i];
            break;
        case LB_PARAM_REAL:
            snprintf(text[i], sizeof text[i], "%.17g", p->r);
            values[i] = text[i];
            break;
        case LB_PARAM_TEXT:
            values[i] = p->t;
            break;
        default:
            values[i] = NULL;
        }
    }
}

static int run(struct pg_conn *c, struct pg_stmt *s, const struct lb_param *params, int n)
{
    if (!revive(c)) {
        set_error(c, "the connection to PostgreSQL is lost", PQerrorMessage(c->pg));
        return LB_STEP_ERROR;
    }
    if (!prepare_on_server(c, s))
        return LB_STEP_ERROR;
    char text[LB_DB_MAX_PARAMS][32];
    const char *values[LB_DB_MAX_PARAMS];
    params_text(text, values, params, n);
    s->res = PQexecPrepared(c->pg, s->name, n, values, NULL, NULL, 0);
    ExecStatusType st = PQresultStatus(s->res);
    if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK) {
        s->n_rows = st == PGRES_TUPLES_OK ? PQntuples(s->res) : 0;
        s->row = 0;
        return s->n_rows > 0 ? LB_STEP_ROW : LB_STEP_DONE;
    }
    const char *state = PQresultErrorField(s->res, PG_DIAG_SQLSTATE);
    set_error(c, "", PQresultErrorMessage(s->res));
    if (PQstatus(c->pg) != CONNECTION_OK)
        s->prepared_generation = 0; /* prepare again once it is back */
    /* 23505: unique_violation */
    return state && !strcmp(state, "23505") ? LB_STEP_CONFLICT : LB_STEP_ERROR;
}

static int pg_step(void *conn, void *stmt, const struct lb_param *params, int n, int first)
{
    struct pg_stmt *s = stmt;
    if (first) {
        PQclear(s->res);
        s->res = NULL;
        return run(conn, s, params, n);
    }
    if (!s->res || s->row + 1 >= s->n_rows)
        return LB_STEP_DONE;
    s->row++;
    return LB_STEP_ROW;
}

static void pg_reset(void *conn, void *stmt)
{
    (void)conn;
    struct pg_stmt *s = stmt;
    PQclear(s->res);
    s->res = NULL;
    s->row = s->n_rows = 0;
}

static int pg_col_null(void *stmt, int c)
{
    struct pg_stmt *s = stmt;
    return !s->res || s->row >= s->n_rows || c >= PQnfields(s->res) ||
           PQgetisnull(s->res, s->row, c);
}

static const char *pg_col_text(void *stmt, int c)
{
    struct pg_stmt *s = stmt;
    return pg_col_null(stmt, c) ? NULL : PQgetvalue(s->res, s->row, c);
}

static long long pg_col_int(void *stmt, int c)
{
    const char *t = pg_col_text(stmt, c);
    return t ? strtoll(t, NULL, 10) : 0;
}

static double pg_col_real(void *stmt, int c)
{
    const char *t = pg_col_text(stmt, c);
    return t ? strtod(t, NULL) : 0;
}

static const char *pg_errmsg(void *conn)
{
    struct pg_conn *c = conn;
    return c->error[0] ? c->error : "unknown PostgreSQL error";
}

const struct lb_db_driver lb_pg_driver = {
    .kind = LB_DB_POSTGRES,
    .open = pg_open,
    .close = pg_close,
    .prepare = pg_prepare,
    .finalize = pg_finalize,
    .step = pg_step,
    .reset = pg_reset,
    .col_null = pg_col_null,
    .col_text = pg_col_text,
    .col_int = pg_col_int,
    .col_real = pg_col_real,
    .exec = pg_exec,
    .errmsg = pg_errmsg,
    /* one lock for every writer of the database, whichever process: they queue as on SQLite */
    .begin_write = "BEGIN; SELECT pg_advisory_xact_lock(" WRITE_LOCK_KEY ")",
};
