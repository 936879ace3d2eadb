/* SQLite connections, statement cache and pool (see lb_db.h). */
#include "lb_db.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lb_migrate.h"

#define STMT_CACHE 48
#define BUSY_TIMEOUT_MS 15000

struct cached_stmt {
    const char *sql; /* key: the literal's address */
    sqlite3_stmt *stmt;
};

struct lb_db {
    sqlite3 *conn;
    struct cached_stmt cache[STMT_CACHE];
    int n_cached;
};

struct lb_pool {
    pthread_mutex_t lock;
    pthread_cond_t freed;
    struct lb_db **all;
    int *busy;
    int size;
};

void lb_utc_now(char out[32])
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

xpb_status lb_db_exec(struct lb_db *db, const char *sql, xpb_err *err)
{
    char *msg = NULL;
    if (sqlite3_exec(db->conn, sql, NULL, NULL, &msg) != SQLITE_OK) {
        xpb_err_set(err, XPB_IO_ERROR, "database: %s", msg ? msg : sqlite3_errmsg(db->conn));
        sqlite3_free(msg);
        return XPB_IO_ERROR;
    }
    return XPB_OK;
}

xpb_status lb_db_open(struct lb_db **out, const char *path, xpb_err *err)
{
    *out = NULL;
    struct lb_db *db = calloc(1, sizeof *db);
    if (!db)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    xpb_status st;
    int rc = sqlite3_open_v2(
        path, &db->conn, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        st = xpb_err_set(err, XPB_IO_ERROR, "cannot open database %s: %s", path,
                         db->conn ? sqlite3_errmsg(db->conn) : sqlite3_errstr(rc));
        goto fail_conn;
    }
    sqlite3_extended_result_codes(db->conn, 1);
    sqlite3_busy_timeout(db->conn, BUSY_TIMEOUT_MS);
    /* journal_mode answers with a row: read it to be sure WAL took effect */
    sqlite3_stmt *wal = NULL;
    if (sqlite3_prepare_v2(db->conn, "PRAGMA journal_mode=WAL", -1, &wal, NULL) != SQLITE_OK ||
        sqlite3_step(wal) != SQLITE_ROW ||
        strcmp((const char *)sqlite3_column_text(wal, 0), "wal") != 0) {
        st = xpb_err_set(err, XPB_IO_ERROR, "cannot switch %s to WAL mode: %s", path,
                         sqlite3_errmsg(db->conn));
        sqlite3_finalize(wal);
        goto fail_conn;
    }
    sqlite3_finalize(wal);
    st = lb_db_exec(db, "PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL", err);
    if (st != XPB_OK)
        goto fail_conn;
    st = lb_migrate(db->conn, err);
    if (st != XPB_OK)
        goto fail_conn;
    *out = db;
    return XPB_OK;

fail_conn:
    sqlite3_close(db->conn);
    free(db);
    return st;
}

void lb_db_close(struct lb_db *db)
{
    if (!db)
        return;
    for (int i = 0; i < db->n_cached; i++)
        sqlite3_finalize(db->cache[i].stmt);
    sqlite3_close(db->conn);
    free(db);
}

sqlite3 *lb_db_handle(struct lb_db *db)
{
    return db->conn;
}

sqlite3_stmt *lb_db_stmt(struct lb_db *db, const char *sql, xpb_err *err)
{
    for (int i = 0; i < db->n_cached; i++) {
        if (db->cache[i].sql == sql) {
            sqlite3_reset(db->cache[i].stmt);
            sqlite3_clear_bindings(db->cache[i].stmt);
            return db->cache[i].stmt;
        }
    }
    sqlite3_stmt *stmt = NULL;
    if (sqlite3_prepare_v3(db->conn, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, NULL) !=
        SQLITE_OK) {
        xpb_err_set(err, XPB_INTERNAL, "database: cannot prepare a statement: %s",
                    sqlite3_errmsg(db->conn));
        sqlite3_finalize(stmt);
        return NULL;
    }
    if (db->n_cached < STMT_CACHE) {
        db->cache[db->n_cached].sql = sql;
        db->cache[db->n_cached].stmt = stmt;
        db->n_cached++;
        return stmt;
    }
    xpb_err_set(err, XPB_INTERNAL, "database: statement cache full");
    sqlite3_finalize(stmt);
    return NULL;
}

void lb_db_done(sqlite3_stmt *stmt)
{
    if (stmt) {
        sqlite3_reset(stmt);
        sqlite3_clear_bindings(stmt);
    }
}

int lb_db_bind_text(sqlite3_stmt *stmt, int index, const char *text)
{
    if (!text)
        return sqlite3_bind_null(stmt, index);
    return sqlite3_bind_text(stmt, index, text, -1, SQLITE_TRANSIENT);
}

void lb_db_column_text(char *out, size_t cap, sqlite3_stmt *stmt, int col)
{
    const unsigned char *t = sqlite3_column_text(stmt, col);
    snprintf(out, cap, "%s", t ? (const char *)t : "");
}

xpb_status lb_pool_open(struct lb_pool **out, const char *path, int size, xpb_err *err)
{
    *out = NULL;
    if (size < 1)
        size = 1;
    struct lb_pool *pool = calloc(1, sizeof *pool);
    if (!pool)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    pool->all = calloc((size_t)size, sizeof *pool->all);
    pool->busy = calloc((size_t)size, sizeof *pool->busy);
    if (!pool->all || !pool->busy) {
        free(pool->all);
        free(pool->busy);
        free(pool);
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    }
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->freed, NULL);
    pool->size = size;
    for (int i = 0; i < size; i++) {
        xpb_status st = lb_db_open(&pool->all[i], path, err);
        if (st != XPB_OK) {
            lb_pool_close(pool);
            return st;
        }
    }
    *out = pool;
    return XPB_OK;
}

struct lb_db *lb_pool_get(struct lb_pool *pool)
{
    pthread_mutex_lock(&pool->lock);
    for (;;) {
        for (int i = 0; i < pool->size; i++) {
            if (!pool->busy[i]) {
                pool->busy[i] = 1;
                pthread_mutex_unlock(&pool->lock);
                return pool->all[i];
            }
        }
        pthread_cond_wait(&pool->freed, &pool->lock);
    }
}

void lb_pool_put(struct lb_pool *pool, struct lb_db *db)
{
    pthread_mutex_lock(&pool->lock);
    for (int i = 0; i < pool->size; i++)
        if (pool->all[i] == db)
            pool->busy[i] = 0;
    pthread_cond_signal(&pool->freed);
    pthread_mutex_unlock(&pool->lock);
}

void lb_pool_close(struct lb_pool *pool)
{
    if (!pool)
        return;
    for (int i = 0; i < pool->size; i++)
        lb_db_close(pool->all[i]);
    pthread_mutex_destroy(&pool->lock);
    pthread_cond_destroy(&pool->freed);
    free(pool->all);
    free(pool->busy);
    free(pool);
}
