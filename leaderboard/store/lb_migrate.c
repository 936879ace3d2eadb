/* Schema migrations (see lb_migrate.h). Append new migrations at the end; never edit one that
 * has shipped (the SQLite spelling of migration 1 is, token for token, the script that
 * shipped). */
#include "store/lb_migrate.h"

#include <stdlib.h>
#include <string.h>

#include "render/text.h"
#include "store/lb_backfill.h"

struct migration {
    int version;
    const char *name;
    const char *sql;
    xpb_status (*step)(struct lb_db *db, xpb_err *err); /* or NULL */
};

static const struct migration migrations[] = {
    {1, "tokens, submissions and runs",
     "CREATE TABLE tokens ("
     "  id @ID@,"
     "  name TEXT NOT NULL UNIQUE,"
     "  public_id TEXT NOT NULL UNIQUE," /* the lookup part of the token */
     "  salt TEXT NOT NULL,"             /* per-token random salt, hex */
     "  hash TEXT NOT NULL,"             /* sha256(salt || ':' || secret), hex */
     "  created TEXT NOT NULL,"
     "  revoked TEXT,"
     "  last_used TEXT"
     ");"
     "CREATE TABLE submissions ("
     "  id @ID@,"
     "  content_hash TEXT NOT NULL UNIQUE," /* sha256 of the canonical results text */
     "  idempotency_key TEXT,"
     "  token_id @BIGINT@ NOT NULL REFERENCES tokens(id),"
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
     "  id @ID@,"
     "  submission_id @BIGINT@ NOT NULL REFERENCES submissions(id) ON DELETE CASCADE,"
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
     "  throughput @REAL@,"
     "  step_p50 @REAL@,"
     "  step_p95 @REAL@,"
     "  flops_per_s @REAL@,"
     "  energy_measured INTEGER NOT NULL,"
     "  samples_per_joule @REAL@,"
     "  verified INTEGER," /* NULL: not requested */
     "  UNIQUE(submission_id, run_index)"
     ");"
     "CREATE INDEX runs_board ON runs(status, model, variant, mode, precision, batch);"
     "CREATE INDEX runs_submission ON runs(submission_id);",
     NULL},
    {2,
     "device kind, world size, throughput intervals, disturbed runs; no CPU inferred from backend "
     "names",
     "ALTER TABLE runs ADD COLUMN device_kind TEXT NOT NULL DEFAULT 'unknown';"
     "ALTER TABLE runs ADD COLUMN world_size INTEGER NOT NULL DEFAULT 1;"
     "ALTER TABLE runs ADD COLUMN disturbed INTEGER NOT NULL DEFAULT 0;"
     "ALTER TABLE runs ADD COLUMN ci95_low @REAL@;"
     "ALTER TABLE runs ADD COLUMN ci95_high @REAL@;"
     "ALTER TABLE submissions ADD COLUMN schema_version INTEGER NOT NULL DEFAULT 1;"
     /* is_cpu came from the backend's name; the backfill sets it from device.kind */
     "UPDATE runs SET is_cpu = 0;"
     "CREATE INDEX runs_rank ON runs(model, variant, mode, precision, world_size, throughput);"
     "CREATE INDEX submissions_token_received ON submissions(token_id, received);",
     lb_backfill_v2},
    {3, "rankings kept up to date: each submitter's fastest runs flagged, tables summarised",
     "ALTER TABLE runs ADD COLUMN token_id @BIGINT@;"
     "ALTER TABLE runs ADD COLUMN ranked INTEGER NOT NULL DEFAULT 0;"
     "UPDATE runs SET token_id = (SELECT s.token_id FROM submissions s "
     "  WHERE s.id = runs.submission_id);"
     "CREATE INDEX runs_member ON runs(model, variant, mode, precision, world_size, token_id, "
     "  ranked, throughput);"
     /* ranked: among the LB_RANKED_PER_SUBMITTER (10) fastest finished runs of its submitter in
      * its table, ties to the older run */
     "UPDATE runs SET ranked = 1 WHERE id IN (SELECT id FROM (SELECT id, ROW_NUMBER() OVER "
     "  (PARTITION BY model, variant, mode, precision, world_size, token_id "
     "   ORDER BY throughput DESC, id) AS nth FROM runs "
     "   WHERE status = 'ok' AND throughput IS NOT NULL) x WHERE nth <= 10);"
     "CREATE INDEX runs_ranked ON runs(model, variant, mode, precision, world_size, ranked, "
     "  throughput);"
     "CREATE TABLE board_members ("
     "  model TEXT NOT NULL, variant TEXT NOT NULL, mode TEXT NOT NULL, precision TEXT NOT NULL,"
     "  world_size INTEGER NOT NULL, token_id @BIGINT@ NOT NULL, n_runs @BIGINT@ NOT NULL,"
     "  PRIMARY KEY(model, variant, mode, precision, world_size, token_id));"
     "INSERT INTO board_members SELECT model, variant, mode, precision, world_size, token_id, "
     "  count(*) FROM runs WHERE status = 'ok' AND throughput IS NOT NULL "
     "  GROUP BY model, variant, mode, precision, world_size, token_id;"
     "CREATE TABLE board_groups ("
     "  model TEXT NOT NULL, variant TEXT NOT NULL, mode TEXT NOT NULL, precision TEXT NOT NULL,"
     "  world_size INTEGER NOT NULL, n_runs @BIGINT@ NOT NULL, n_submitters @BIGINT@ NOT NULL,"
     "  PRIMARY KEY(model, variant, mode, precision, world_size));"
     "INSERT INTO board_groups SELECT model, variant, mode, precision, world_size, sum(n_runs), "
     "  count(*) FROM board_members GROUP BY model, variant, mode, precision, world_size;"
     "CREATE TABLE board_backends (backend TEXT PRIMARY KEY, n_runs @BIGINT@ NOT NULL);"
     "INSERT INTO board_backends SELECT backend, count(*) FROM runs "
     "  WHERE status = 'ok' AND throughput IS NOT NULL GROUP BY backend;"
     /* the best CPU result of a workload: one index lookup */
     "CREATE INDEX runs_cpu_best ON runs(device_kind, status, model, variant, mode, precision, "
     "  world_size, batch, throughput);",
     NULL},
    {4,
     "the size of each stored document, so that an answer too large to send now is refused "
     "before the document is read",
     "ALTER TABLE submissions ADD COLUMN document_bytes @BIGINT@ NOT NULL DEFAULT 0;"
     "UPDATE submissions SET document_bytes = @BYTES(document)@;",
     NULL},
    {5,
     "tables ordered by a signal one submission cannot inflate: submitters, then each "
     "submitter's turn, then the latest submission",
     "ALTER TABLE board_groups ADD COLUMN first_run @BIGINT@ NOT NULL DEFAULT 0;"
     "ALTER TABLE board_groups ADD COLUMN creator_token @BIGINT@ NOT NULL DEFAULT 0;"
     "ALTER TABLE board_groups ADD COLUMN creator_turn @BIGINT@ NOT NULL DEFAULT 0;"
     "ALTER TABLE board_groups ADD COLUMN last_submission @BIGINT@ NOT NULL DEFAULT 0;"
     /* the run that opened the table (its first finished run) and the latest submission */
     "UPDATE board_groups SET "
     "  first_run = (SELECT min(r.id) FROM runs r WHERE r.model = board_groups.model AND "
     "    r.variant = board_groups.variant AND r.mode = board_groups.mode AND "
     "    r.precision = board_groups.precision AND r.world_size = board_groups.world_size AND "
     "    r.status = 'ok' AND r.throughput IS NOT NULL),"
     "  last_submission = (SELECT max(r.submission_id) FROM runs r WHERE "
     "    r.model = board_groups.model AND r.variant = board_groups.variant AND "
     "    r.mode = board_groups.mode AND r.precision = board_groups.precision AND "
     "    r.world_size = board_groups.world_size AND r.status = 'ok' AND "
     "    r.throughput IS NOT NULL);"
     "UPDATE board_groups SET creator_token = (SELECT r.token_id FROM runs r WHERE "
     "  r.id = board_groups.first_run);"
     /* the turn: how many tables its creator had opened before it */
     "UPDATE board_groups SET creator_turn = (SELECT count(*) FROM board_groups o WHERE "
     "  o.creator_token = board_groups.creator_token AND o.first_run < board_groups.first_run);"
     "CREATE INDEX board_groups_creator ON board_groups(creator_token);"
     "CREATE INDEX board_groups_order ON board_groups(n_submitters, creator_turn, "
     "  last_submission);",
     NULL},
    {6, "time-to-accuracy runs kept with their scores for their own board (schema version 3)",
     "CREATE TABLE tta_runs ("
     "  run_id @BIGINT@ PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,"
     "  token_id @BIGINT@ NOT NULL,"
     "  model TEXT NOT NULL, variant TEXT NOT NULL,"
     "  dataset TEXT NOT NULL,"
     "  target_accuracy @REAL@ NOT NULL," /* tta.target */
     "  time_s @REAL@,"                   /* tta.seconds.mean; NULL: not reached */
     "  time_min_s @REAL@, time_max_s @REAL@,"
     "  energy_j @REAL@,"         /* tta.joules.mean */
     "  epochs @REAL@,"           /* the median of the converged runs' epochs */
     "  reference_epochs @REAL@," /* NULL: no reference point */
     "  converged INTEGER NOT NULL, n_runs INTEGER NOT NULL,"
     "  outside_reference INTEGER NOT NULL" /* runs converged outside the reference point */
     ");"
     "CREATE INDEX tta_board ON tta_runs(model, variant, dataset, target_accuracy, token_id, "
     "  time_s);",
     lb_backfill_tta},
};

#define N_MIGRATIONS (sizeof migrations / sizeof migrations[0])

/* The spellings of the type tokens, per store. */
static const char *const tokens[][3] = {
    /* token     SQLite                  PostgreSQL */
    {"@ID@", "INTEGER PRIMARY KEY", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"},
    {"@BIGINT@", "INTEGER", "BIGINT"},
    {"@REAL@", "REAL", "DOUBLE PRECISION"},
    {"@BYTES(document)@", "length(CAST(document AS BLOB))", "octet_length(document)"},
};

int lb_migrate_latest(void)
{
    return migrations[N_MIGRATIONS - 1].version;
}

/* The script with its type tokens spelt for `kind`: malloc'ed (caller frees), NULL when out of
 * memory. */
static char *spell(const char *sql, enum lb_db_kind kind)
{
    struct xpb_text out = {0};
    size_t n_tokens = sizeof tokens / sizeof tokens[0];
    for (const char *p = sql; *p;) {
        size_t k = 0;
        while (k < n_tokens && strncmp(p, tokens[k][0], strlen(tokens[k][0])) != 0)
            k++;
        if (k < n_tokens) {
            xpb_text_puts(&out, tokens[k][kind == LB_DB_SQLITE ? 1 : 2]);
            p += strlen(tokens[k][0]);
        } else {
            xpb_text_add(&out, p, 1);
            p++;
        }
    }
    return xpb_text_take(&out, NULL);
}

static const char SQL_CREATE_VERSIONS[] =
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied TEXT NOT NULL)";
static const char SQL_VERSION[] = "SELECT coalesce(max(version), 0) FROM schema_migrations";
static const char SQL_RECORD[] =
    "INSERT INTO schema_migrations(version, name, applied) VALUES ($1, $2, $3)";

int lb_migrate_version(struct lb_db *db)
{
    struct lb_stmt *s = lb_db_stmt(db, SQL_VERSION, NULL);
    if (!s)
        return -1;
    int version = lb_stmt_step(s) == LB_STEP_ROW ? (int)lb_col_int(s, 0) : -1;
    lb_stmt_done(s);
    return version;
}

/* Runs migration m and records it. */
static xpb_status apply(struct lb_db *db, const struct migration *m, xpb_err *err)
{
    char *sql = spell(m->sql, lb_db_kind(db));
    if (!sql)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    xpb_status st = lb_db_exec(db, sql, err);
    free(sql);
    if (st == XPB_OK && m->step)
        st = m->step(db, err);
    if (st != XPB_OK) {
        xpb_err_prefix(err, "migration %d (%s) failed", m->version, m->name);
        return st;
    }
    char now[32];
    lb_utc_time(now, 0);
    struct lb_stmt *s = lb_db_stmt(db, SQL_RECORD, err);
    if (!s)
        return XPB_IO_ERROR;
    lb_stmt_int(s, 1, m->version);
    lb_stmt_text(s, 2, m->name);
    lb_stmt_text(s, 3, now);
    int rc = lb_stmt_step(s);
    lb_stmt_done(s);
    if (rc != LB_STEP_DONE)
        return xpb_err_set(err, XPB_IO_ERROR, "migration %d: cannot record it: %s", m->version,
                           lb_db_errmsg(db));
    return XPB_OK;
}

xpb_status lb_migrate(struct lb_db *db, xpb_err *err)
{
    xpb_status st = lb_db_begin_write(db, err);
    if (st != XPB_OK)
        return st;
    if ((st = lb_db_exec(db, SQL_CREATE_VERSIONS, err)) != XPB_OK)
        goto fail_txn;
    int current = lb_migrate_version(db);
    if (current < 0) {
        st = xpb_err_set(err, XPB_IO_ERROR, "cannot read the schema version: %s", lb_db_errmsg(db));
        goto fail_txn;
    }
    if (current > lb_migrate_latest()) {
        st = xpb_err_set(err, XPB_INCOMPATIBLE,
                         "the database is at schema version %d, written by a newer service; "
                         "this build knows versions up to %d",
                         current, lb_migrate_latest());
        goto fail_txn;
    }
    for (size_t i = 0; i < N_MIGRATIONS; i++)
        if (migrations[i].version > current && (st = apply(db, &migrations[i], err)) != XPB_OK)
            goto fail_txn;
    return lb_db_commit(db, err);

fail_txn:
    lb_db_rollback(db);
    return st;
}
