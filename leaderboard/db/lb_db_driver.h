/* What a store's driver provides to lb_db.c (see lb_db.h): a connection, statements, and the
 * few spellings that differ between SQLite and PostgreSQL. Drivers know nothing of lb_db.c:
 * they use none of its symbols and include only the words both share (lb_db_types.h), so
 * lb_db.c uses the drivers and never the other way round. */
#ifndef LB_DB_DRIVER_H
#define LB_DB_DRIVER_H

#include "base/errmsg.h"
#include "db/lb_db_types.h"

enum lb_param_type { LB_PARAM_NULL, LB_PARAM_INT, LB_PARAM_REAL, LB_PARAM_TEXT };

/* One bound parameter. */
struct lb_param {
    enum lb_param_type type;
    long long i;
    double r;
    const char *t; /* the caller's text, valid until the statement's first step */
};

struct lb_db_driver {
    enum lb_db_kind kind;
    /* *conn is owned by the caller (close). */
    xpb_status (*open)(void **conn, const char *target, xpb_err *err);
    void (*close)(void *conn);
    /* A statement for `sql` ($1..$N placeholders), owned by the caller (finalize); NULL with
     * err set when it does not prepare. */
    void *(*prepare)(void *conn, const char *sql, xpb_err *err);
    void (*finalize)(void *conn, void *stmt);
    /* first: run with these parameters and position on the first row; else the next row.
     * Returns an enum lb_step. */
    int (*step)(void *conn, void *stmt, const struct lb_param *params, int n_params, int first);
    /* Drops the rows of the last run. */
    void (*reset)(void *conn, void *stmt);
    int (*col_null)(void *stmt, int c);
    const char *(*col_text)(void *stmt, int c); /* NULL for SQL NULL; owned by the statement */
    long long (*col_int)(void *stmt, int c);
    double (*col_real)(void *stmt, int c);
    xpb_status (*exec)(void *conn, const char *sql, xpb_err *err);
    const char *(*errmsg)(void *conn); /* owned by the connection */
    const char *begin_write;           /* SQL that opens the write transaction */
};

extern const struct lb_db_driver lb_sqlite_driver;
#ifdef XPB_LB_POSTGRES
extern const struct lb_db_driver lb_pg_driver;
#endif

#endif
