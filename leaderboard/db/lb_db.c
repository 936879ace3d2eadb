/* The store-neutral database interface (see lb_db.h): statement cache, parameters, and
 * dispatch to the SQLite or PostgreSQL driver (lb_db_driver.h). */
#include "db/lb_db.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "db/lb_db_driver.h"

/* Statements one connection keeps prepared: every SQL literal of the service fits. */
#define STMT_CACHE 64

struct lb_stmt {
    struct lb_db *db;
    const char *sql; /* key: the literal's address */
    void *handle;    /* the driver's statement */
    struct lb_param params[LB_DB_MAX_PARAMS];
    int n_params; /* highest index bound */
    int started;  /* stepped since the last lb_stmt_done */
};

struct lb_db {
    const struct lb_db_driver *driver;
    void *conn;
    struct lb_stmt cache[STMT_CACHE];
    int n_cached;
};

int lb_db_is_url(const char *target)
{
    return target &&
           (!strncasecmp(target, "postgresql://", 13) || !strncasecmp(target, "postgres://", 11));
}

int lb_db_have_postgres(void)
{
#ifdef XPB_LB_POSTGRES
    return 1;
#else
    return 0;
#endif
}

void lb_utc_time(char out[32], long seconds_ago)
{
    time_t t = time(NULL) - seconds_ago;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

xpb_status lb_db_open(struct lb_db **out, const char *target, xpb_err *err)
{
    *out = NULL;
    const struct lb_db_driver *driver = &lb_sqlite_driver;
    if (lb_db_is_url(target)) {
#ifdef XPB_LB_POSTGRES
        driver = &lb_pg_driver;
#else
        return xpb_err_set(err, XPB_INVALID_ARGUMENT,
                           "this build has no PostgreSQL store (it was configured without "
                           "libpq-dev): use --data DIR for SQLite");
#endif
    }
    struct lb_db *db = calloc(1, sizeof *db);
    if (!db)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    db->driver = driver;
    xpb_status st = driver->open(&db->conn, target, err);
    if (st != XPB_OK) {
        free(db);
        return st;
    }
    *out = db;
    return XPB_OK;
}

void lb_db_close(struct lb_db *db)
{
    if (!db)
        return;
    for (int i = 0; i < db->n_cached; i++)
        db->driver->finalize(db->conn, db->cache[i].handle);
    db->driver->close(db->conn);
    free(db);
}

enum lb_db_kind lb_db_kind(const struct lb_db *db)
{
    return db->driver->kind;
}

const char *lb_db_errmsg(struct lb_db *db)
{
    return db->driver->errmsg(db->conn);
}

struct lb_stmt *lb_db_stmt(struct lb_db *db, const char *sql, xpb_err *err)
{
    for (int i = 0; i < db->n_cached; i++) {
        if (db->cache[i].sql == sql) {
            lb_stmt_done(&db->cache[i]);
            return &db->cache[i];
        }
    }
    if (db->n_cached == STMT_CACHE) {
        xpb_err_set(err, XPB_INTERNAL, "database: statement cache full");
        return NULL;
    }
    void *handle = db->driver->prepare(db->conn, sql, err);
    if (!handle)
        return NULL;
    struct lb_stmt *s = &db->cache[db->n_cached++];
    memset(s, 0, sizeof *s);
    s->db = db;
    s->sql = sql;
    s->handle = handle;
    return s;
}

/* The slot of parameter i, or NULL (and nothing bound) when i is out of range. */
static struct lb_param *param(struct lb_stmt *s, int i)
{
    if (i < 1 || i > LB_DB_MAX_PARAMS)
        return NULL;
    if (i > s->n_params) {
        for (int k = s->n_params; k < i; k++)
            s->params[k].type = LB_PARAM_NULL;
        s->n_params = i;
    }
    return &s->params[i - 1];
}

void lb_stmt_text(struct lb_stmt *s, int i, const char *text)
{
    struct lb_param *p = param(s, i);
    if (p) {
        p->type = text ? LB_PARAM_TEXT : LB_PARAM_NULL;
        p->t = text;
    }
}

void lb_stmt_int(struct lb_stmt *s, int i, long long v)
{
    struct lb_param *p = param(s, i);
    if (p) {
        p->type = LB_PARAM_INT;
        p->i = v;
    }
}

void lb_stmt_real(struct lb_stmt *s, int i, double v)
{
    struct lb_param *p = param(s, i);
    if (p) {
        p->type = isnan(v) || isinf(v) ? LB_PARAM_NULL : LB_PARAM_REAL;
        p->r = v;
    }
}

int lb_stmt_step(struct lb_stmt *s)
{
    int first = !s->started;
    s->started = 1;
    return s->db->driver->step(s->db->conn, s->handle, s->params, s->n_params, first);
}

int lb_col_null(struct lb_stmt *s, int c)
{
    return s->db->driver->col_null(s->handle, c);
}

long long lb_col_int(struct lb_stmt *s, int c)
{
    return s->db->driver->col_null(s->handle, c) ? 0 : s->db->driver->col_int(s->handle, c);
}

double lb_col_real(struct lb_stmt *s, int c)
{
    return s->db->driver->col_null(s->handle, c) ? NAN : s->db->driver->col_real(s->handle, c);
}

const char *lb_col_str(struct lb_stmt *s, int c)
{
    const char *t = s->db->driver->col_text(s->handle, c);
    return t ? t : "";
}

void lb_col_text(char *out, size_t cap, struct lb_stmt *s, int c)
{
    snprintf(out, cap, "%s", lb_col_str(s, c));
}

void lb_stmt_done(struct lb_stmt *s)
{
    if (!s)
        return;
    if (s->started)
        s->db->driver->reset(s->db->conn, s->handle);
    s->started = 0;
    s->n_params = 0;
}

xpb_status lb_db_exec(struct lb_db *db, const char *sql, xpb_err *err)
{
    return db->driver->exec(db->conn, sql, err);
}

xpb_status lb_db_begin_write(struct lb_db *db, xpb_err *err)
{
    return db->driver->exec(db->conn, db->driver->begin_write, err);
}

xpb_status lb_db_commit(struct lb_db *db, xpb_err *err)
{
    return db->driver->exec(db->conn, "COMMIT", err);
}

void lb_db_rollback(struct lb_db *db)
{
    xpb_err ignored;
    db->driver->exec(db->conn, "ROLLBACK", &ignored);
}
