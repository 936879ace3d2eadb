/* The leaderboard's SQLite database: connections, prepared-statement cache and a small pool
 * that the server's threads share.
 *
 * Every connection runs in WAL mode (readers never block the writer), with foreign keys on,
 * synchronous=NORMAL (a committed submission survives a crash of the service; WAL makes a
 * power cut lose at most the last transactions, never corrupt the file) and a busy timeout,
 * so concurrent writers wait for each other instead of failing. All SQL goes through
 * prepared statements with bound parameters; no statement text is ever built from input. */
#ifndef LB_DB_H
#define LB_DB_H

#include <stddef.h>

#include <sqlite3.h>

#include "error.h"

#define LB_DB_FILE "leaderboard.sqlite3"

struct lb_db;   /* one connection; used by one thread at a time */
struct lb_pool; /* a fixed set of connections */

/* Opens (creating if needed) the database file `path`, sets the pragmas and brings the schema
 * up to date (lb_migrate). *out is owned by the caller: lb_db_close. */
xpb_status lb_db_open(struct lb_db **out, const char *path, xpb_err *err);
void lb_db_close(struct lb_db *db);

/* The raw connection, owned by `db`. */
sqlite3 *lb_db_handle(struct lb_db *db);

/* The prepared statement for `sql` (a string literal: the cache is keyed by its address),
 * reset and with its bindings cleared. Owned by `db`: valid until lb_db_close; the caller
 * resets it when done (lb_db_done). NULL when it does not prepare (err says why). */
sqlite3_stmt *lb_db_stmt(struct lb_db *db, const char *sql, xpb_err *err);
void lb_db_done(sqlite3_stmt *stmt);

/* Runs statements without results (BEGIN, COMMIT, ...). */
xpb_status lb_db_exec(struct lb_db *db, const char *sql, xpb_err *err);

/* Binds text (NULL binds SQL NULL); SQLITE_TRANSIENT copy. */
int lb_db_bind_text(sqlite3_stmt *stmt, int index, const char *text);

/* The text of column `col` copied into out (cap bytes, truncated), "" for NULL. */
void lb_db_column_text(char *out, size_t cap, sqlite3_stmt *stmt, int col);

/* A pool of `size` connections to `path` (the first one migrates the schema). */
xpb_status lb_pool_open(struct lb_pool **out, const char *path, int size, xpb_err *err);
/* Takes a free connection, waiting while all are in use. Give it back with lb_pool_put. */
struct lb_db *lb_pool_get(struct lb_pool *pool);
void lb_pool_put(struct lb_pool *pool, struct lb_db *db);
void lb_pool_close(struct lb_pool *pool);

/* Current UTC time as "YYYY-MM-DDTHH:MM:SSZ". */
void lb_utc_now(char out[32]);

#endif
