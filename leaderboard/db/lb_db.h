/* The leaderboard's database behind one small interface, with two stores:
 *   - SQLite, the embedded default: one file in the data folder (LB_DB_FILE). WAL mode (readers
 *     never wait for the writer), foreign keys on, synchronous=NORMAL (a committed submission
 *     survives a crash of the service; a power cut loses at most the last transactions, never
 *     corrupts the file) and a busy timeout, so concurrent writers queue instead of failing.
 *   - PostgreSQL, for a community-scale deployment where several service processes serve one
 *     database (a `postgresql://` URL; built when libpq is found).
 *
 * Both run the same SQL: statements are written once with $1..$N placeholders (the SQLite
 * driver rewrites them to ?1..?N) in the subset both dialects share (RETURNING, ON CONFLICT,
 * window functions, CAST). A parameter tested with IS NULL is first compared with a column
 * ("(r.model = $1 OR $1 IS NULL)") so that PostgreSQL can infer its type. No statement text is
 * ever built from input: values are always bound.
 *
 * Writes that must see a stable database (the duplicate check and the insert of a submission,
 * the daily quota, migrations) run inside lb_db_begin_write: SQLite's BEGIN IMMEDIATE, and on
 * PostgreSQL a transaction holding one advisory lock, so that writers queue in both stores,
 * across processes too. Readers never take it. */
#ifndef LB_DB_H
#define LB_DB_H

#include <stddef.h>

#include "base/errmsg.h"
#include "db/lb_db_types.h"

#define LB_DB_FILE "leaderboard.sqlite3"

struct lb_db;   /* one connection; used by one thread at a time */
struct lb_stmt; /* a prepared statement of one connection */

/* 1 when `target` names a PostgreSQL database ("postgresql://..." or "postgres://..."). */
int lb_db_is_url(const char *target);

/* 1 when this build has the PostgreSQL store. */
int lb_db_have_postgres(void);

/* Connects to `target`: a PostgreSQL URL, or the path of an SQLite file (created when missing).
 * Does not migrate (lb_migrate does). *out is owned by the caller: lb_db_close.
 * XPB_INVALID_ARGUMENT for a PostgreSQL URL in a build without PostgreSQL, XPB_IO_ERROR when
 * the database cannot be opened. */
xpb_status lb_db_open(struct lb_db **out, const char *target, xpb_err *err);
void lb_db_close(struct lb_db *db);

enum lb_db_kind lb_db_kind(const struct lb_db *db);

/* The last error of the connection, as its driver says it. Owned by db, valid until its next
 * call. */
const char *lb_db_errmsg(struct lb_db *db);

/* The prepared statement for `sql` (a string literal: the cache is keyed by its address), with
 * no parameters bound. Owned by `db` (valid until lb_db_close); the caller ends each use with
 * lb_stmt_done. NULL when it does not prepare (err says why). */
struct lb_stmt *lb_db_stmt(struct lb_db *db, const char *sql, xpb_err *err);

/* Bind parameter i (1-based). Text is not copied: it must stay valid until the first
 * lb_stmt_step (NULL binds SQL NULL). A NAN real binds NULL. */
void lb_stmt_text(struct lb_stmt *s, int i, const char *text);
void lb_stmt_int(struct lb_stmt *s, int i, long long v);
void lb_stmt_real(struct lb_stmt *s, int i, double v);

/* Runs the statement (first call) or moves to its next row. */
int lb_stmt_step(struct lb_stmt *s);

/* Columns of the current row (0-based). */
int lb_col_null(struct lb_stmt *s, int c);
long long lb_col_int(struct lb_stmt *s, int c);   /* 0 for NULL */
double lb_col_real(struct lb_stmt *s, int c);     /* NAN for NULL */
const char *lb_col_str(struct lb_stmt *s, int c); /* "" for NULL; owned by the statement, valid
                                                     until its next step or lb_stmt_done */
/* The text of column c copied into out (cap bytes, truncated), "" for NULL. */
void lb_col_text(char *out, size_t cap, struct lb_stmt *s, int c);

/* Ends a use of the statement: its rows and bindings are dropped. NULL is a no-op. */
void lb_stmt_done(struct lb_stmt *s);

/* Runs statements without parameters or rows (a script is allowed). */
xpb_status lb_db_exec(struct lb_db *db, const char *sql, xpb_err *err);

/* The write transaction described above; lb_db_commit ends it, lb_db_rollback abandons it
 * (any transaction, best effort). */
xpb_status lb_db_begin_write(struct lb_db *db, xpb_err *err);
xpb_status lb_db_commit(struct lb_db *db, xpb_err *err);
void lb_db_rollback(struct lb_db *db);

/* Current UTC time as "YYYY-MM-DDTHH:MM:SSZ"; seconds_ago shifts it into the past. */
void lb_utc_time(char out[32], long seconds_ago);

#endif
