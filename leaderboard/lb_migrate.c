/* Schema migrations (see lb_migrate.h). Append new migrations at the end; never edit one that
 * has shipped. */
#include "lb_migrate.h"

#include <stdio.h>
#include <time.h>

struct migration {
    int version;
    const char *name;
    const char *sql;
};

static const struct migration migrations[] = {
    {1, "tokens, submissions and runs",
     "CREATE TABLE tokens ("
     "  id INTEGER PRIMARY KEY,"
     "  name TEXT NOT NULL UNIQUE,"
     "  public_id TEXT NOT NULL UNIQUE," /* the lookup part of the token */
     "  salt TEXT NOT NULL,"             /* per-token random salt, hex */
     "  hash TEXT NOT NULL,"             /* sha256(salt || ':' || secret), hex */
     "  created TEXT NOT NULL,"
     "  revoked TEXT,"
     "  last_used TEXT"
     ");"
     "CREATE TABLE submissions ("
     "  id INTEGER PRIMARY KEY,"
     "  content_hash TEXT NOT NULL UNIQUE," /* sha256 of the canonical results text */
     "  idempotency_key TEXT,"
     "  token_id INTEGER NOT NULL REFERENCES tokens(id),"
     "  received TEXT NOT NULL,"
     "  created TEXT NOT NULL,"
     "  tool_version TEXT NOT NULL,"
     "  scenario TEXT NOT NULL,"
     "  os TEXT NOT NULL,"
     "  cpu_model TEXT NOT NULL,"
     "  accelerators TEXT NOT NULL,"
     "  n_runs INTEGER NOT NULL,"
     "  document TEXT NOT NULL" /* canonical results text */
     ");"
     "CREATE INDEX submissions_idempotency ON submissions(idempotency_key);"
     "CREATE TABLE runs ("
     "  id INTEGER PRIMARY KEY,"
     "  submission_id INTEGER NOT NULL REFERENCES submissions(id) ON DELETE CASCADE,"
     "  run_index INTEGER NOT NULL,"
     "  run_id TEXT NOT NULL,"
     "  status TEXT NOT NULL,"
     "  model TEXT NOT NULL,"
     "  variant TEXT NOT NULL,"
     "  mode TEXT NOT NULL,"
     "  precision TEXT NOT NULL,"
     "  backend TEXT NOT NULL,"
     "  batch INTEGER NOT NULL,"
     "  fusion INTEGER NOT NULL,"
     "  threads INTEGER NOT NULL,"
     "  transfer TEXT NOT NULL,"
     "  device TEXT NOT NULL,"
     "  is_cpu INTEGER NOT NULL,"
     "  throughput REAL,"
     "  step_p50 REAL,"
     "  step_p95 REAL,"
     "  flops_per_s REAL,"
     "  energy_measured INTEGER NOT NULL,"
     "  samples_per_joule REAL,"
     "  verified INTEGER," /* NULL: not requested */
     "  UNIQUE(submission_id, run_index)"
     ");"
     "CREATE INDEX runs_board ON runs(status, model, variant, mode, precision, batch);"
     "CREATE INDEX runs_submission ON runs(submission_id);"},
};

#define N_MIGRATIONS (sizeof migrations / sizeof migrations[0])

int lb_migrate_latest(void)
{
    return migrations[N_MIGRATIONS - 1].version;
}

int lb_migrate_version(sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    int version = -1;
    if (sqlite3_prepare_v2(db,
                           "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = "
                           "'schema_migrations'",
                           -1, &st, NULL) != SQLITE_OK)
        goto done;
    if (sqlite3_step(st) != SQLITE_ROW)
        goto done;
    if (sqlite3_column_int(st, 0) == 0) {
        version = 0;
        goto done;
    }
    sqlite3_finalize(st);
    st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT coalesce(max(version), 0) FROM schema_migrations", -1, &st,
                           NULL) != SQLITE_OK)
        goto done;
    if (sqlite3_step(st) == SQLITE_ROW)
        version = sqlite3_column_int(st, 0);
done:
    sqlite3_finalize(st);
    return version;
}

/* Runs `sql`; on failure fills err with what and why. */
static xpb_status exec(sqlite3 *db, const char *sql, const char *what, xpb_err *err)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        xpb_err_set(err, XPB_IO_ERROR, "%s: %s", what, msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
        return XPB_IO_ERROR;
    }
    return XPB_OK;
}

xpb_status lb_migrate(sqlite3 *db, xpb_err *err)
{
    /* BEGIN IMMEDIATE: two services starting at once on one folder migrate one after the
     * other, and the second sees the first's work. */
    xpb_status st = exec(db, "BEGIN IMMEDIATE", "cannot lock the database", err);
    if (st != XPB_OK)
        return st;
    st = exec(db,
              "CREATE TABLE IF NOT EXISTS schema_migrations ("
              "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied TEXT NOT NULL)",
              "cannot create schema_migrations", err);
    if (st != XPB_OK)
        goto fail_txn;
    int current = lb_migrate_version(db);
    if (current < 0) {
        st = xpb_err_set(err, XPB_IO_ERROR, "cannot read the schema version: %s",
                         sqlite3_errmsg(db));
        goto fail_txn;
    }
    if (current > lb_migrate_latest()) {
        st = xpb_err_set(err, XPB_INCOMPATIBLE,
                         "the database is at schema version %d, written by a newer service; "
                         "this build knows versions up to %d",
                         current, lb_migrate_latest());
        goto fail_txn;
    }
    for (size_t i = 0; i < N_MIGRATIONS; i++) {
        const struct migration *m = &migrations[i];
        if (m->version <= current)
            continue;
        char what[160];
        snprintf(what, sizeof what, "migration %d (%s) failed", m->version, m->name);
        st = exec(db, m->sql, what, err);
        if (st != XPB_OK)
            goto fail_txn;
        sqlite3_stmt *ins = NULL;
        char now[32];
        time_t t = time(NULL);
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
        if (sqlite3_prepare_v2(db,
                               "INSERT INTO schema_migrations(version, name, applied) "
                               "VALUES (?1, ?2, ?3)",
                               -1, &ins, NULL) != SQLITE_OK) {
            st = xpb_err_set(err, XPB_IO_ERROR, "%s: %s", what, sqlite3_errmsg(db));
            goto fail_txn;
        }
        sqlite3_bind_int(ins, 1, m->version);
        sqlite3_bind_text(ins, 2, m->name, -1, SQLITE_STATIC);
        sqlite3_bind_text(ins, 3, now, -1, SQLITE_TRANSIENT);
        int rc = sqlite3_step(ins);
        sqlite3_finalize(ins);
        if (rc != SQLITE_DONE) {
            st = xpb_err_set(err, XPB_IO_ERROR, "%s: %s", what, sqlite3_errmsg(db));
            goto fail_txn;
        }
    }
    return exec(db, "COMMIT", "cannot commit the migrations", err);

fail_txn:
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return st;
}
