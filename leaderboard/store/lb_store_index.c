/* Keeping the rankings up to date (see lb_store_index.h). */
#include "store/lb_store_index.h"

#include "store/lb_store_rows.h"

#define TABLE_OF_TOKEN                                                                             \
    "model = $1 AND variant = $2 AND mode = $3 AND precision = $4 AND world_size = $5 AND "        \
    "token_id = $6 "

static const char SQL_RANKED_COUNT[] =
    "SELECT count(*) FROM runs WHERE " TABLE_OF_TOKEN "AND ranked = 1 AND id <> $7";
/* the slowest ranked run of the token in the table (the newest among equals) */
static const char SQL_SLOWEST[] = "SELECT id, throughput FROM runs WHERE " TABLE_OF_TOKEN
                                  "AND ranked = 1 AND id <> $7 ORDER BY throughput ASC, id DESC "
                                  "LIMIT 1";
static const char SQL_SET_RANKED[] = "UPDATE runs SET ranked = $2 WHERE id = $1";
static const char SQL_MEMBER[] =
    "INSERT INTO board_members(model, variant, mode, precision, world_size, token_id, n_runs) "
    "VALUES ($1, $2, $3, $4, $5, $6, 1) ON CONFLICT (model, variant, mode, precision, "
    "world_size, token_id) DO UPDATE SET n_runs = board_members.n_runs + 1 RETURNING n_runs";
/* a table's counts and latest submission; RETURNING says whether it existed */
static const char SQL_GROUP[] =
    "UPDATE board_groups SET n_runs = n_runs + 1, n_submitters = n_submitters + $6, "
    "last_submission = $7 WHERE model = $1 AND variant = $2 AND mode = $3 AND precision = $4 AND "
    "world_size = $5 RETURNING n_runs";
/* a new table, opened by run $6 of token $7 in submission $8: its turn is the number of tables
 * that token opened before (lb_store.h, lb_store_groups) */
static const char SQL_NEW_GROUP[] =
    "INSERT INTO board_groups(model, variant, mode, precision, world_size, n_runs, n_submitters, "
    "first_run, creator_token, creator_turn, last_submission) VALUES ($1, $2, $3, $4, $5, 1, 1, "
    "$6, $7, (SELECT count(*) FROM board_groups WHERE creator_token = $7), $8)";

static const char SQL_BACKEND[] =
    "INSERT INTO board_backends(backend, n_runs) VALUES ($1, 1) ON CONFLICT (backend) DO UPDATE "
    "SET n_runs = board_backends.n_runs + 1";

/* Parameters 1..5: the table of run r. */
static void bind_table(struct lb_stmt *s, const struct lb_run_row *r)
{
    lb_bind_table(s, r->model, r->variant, r->mode, r->precision, r->world_size);
}

static xpb_status set_ranked(struct lb_db *db, long long id, int ranked, xpb_err *err)
{
    struct lb_stmt *s = lb_db_stmt(db, SQL_SET_RANKED, err);
    if (!s)
        return XPB_IO_ERROR;
    lb_stmt_int(s, 1, id);
    lb_stmt_int(s, 2, ranked);
    int rc = lb_stmt_step(s);
    lb_stmt_done(s);
    return rc == LB_STEP_DONE ? XPB_OK : lb_store_db_error(db, "ranking a run", err);
}

/* Runs a statement of the token's table (parameters 1..7) and reads one row: its first column
 * into *a, its second into *b (may be NULL). *found says whether there was a row. */
static xpb_status table_query(int *found, long long *a, double *b, struct lb_db *db,
                              const char *sql, const struct lb_run_row *r, long long token_id,
                              long long run_id, xpb_err *err)
{
    struct lb_stmt *s = lb_db_stmt(db, sql, err);
    if (!s)
        return XPB_IO_ERROR;
    bind_table(s, r);
    lb_stmt_int(s, 6, token_id);
    lb_stmt_int(s, 7, run_id);
    int rc = lb_stmt_step(s);
    *found = rc == LB_STEP_ROW;
    if (*found) {
        *a = lb_col_int(s, 0);
        if (b)
            *b = lb_col_real(s, 1);
    }
    lb_stmt_done(s);
    return rc == LB_STEP_ERROR ? lb_store_db_error(db, "ranking a run", err) : XPB_OK;
}

/* The run's flag: ranked while its submitter has fewer ranked runs in the table, or when it is
 * faster than the slowest of them (which then steps down). */
static xpb_status rank(struct lb_db *db, long long run_id, const struct lb_run_row *r,
                       long long token_id, xpb_err *err)
{
    int found;
    long long count = 0, slowest = 0;
    double slowest_tp = 0;
    xpb_status st =
        table_query(&found, &count, NULL, db, SQL_RANKED_COUNT, r, token_id, run_id, err);
    if (st != XPB_OK)
        return st;
    if (count < LB_RANKED_PER_SUBMITTER)
        return set_ranked(db, run_id, 1, err);
    st = table_query(&found, &slowest, &slowest_tp, db, SQL_SLOWEST, r, token_id, run_id, err);
    if (st != XPB_OK || !found || !(r->throughput > slowest_tp))
        return st; /* not among the fastest: stays unranked */
    st = set_ranked(db, slowest, 0, err);
    return st == XPB_OK ? set_ranked(db, run_id, 1, err) : st;
}

/* The table of run `run_id`: one more run, one more submitter when it is the token's first,
 * its latest submission; or a new table that this run opens. */
static xpb_status count_table(struct lb_db *db, long long run_id, long long submission_id,
                              const struct lb_run_row *r, long long token_id, int new_member,
                              xpb_err *err)
{
    struct lb_stmt *s = lb_db_stmt(db, SQL_GROUP, err);
    if (!s)
        return XPB_IO_ERROR;
    bind_table(s, r);
    lb_stmt_int(s, 6, new_member);
    lb_stmt_int(s, 7, submission_id);
    int rc = lb_stmt_step(s);
    lb_stmt_done(s);
    if (rc == LB_STEP_ROW)
        return XPB_OK;
    if (rc == LB_STEP_ERROR || !(s = lb_db_stmt(db, SQL_NEW_GROUP, err)))
        return rc == LB_STEP_ERROR ? lb_store_db_error(db, "counting a table", err) : XPB_IO_ERROR;
    bind_table(s, r);
    lb_stmt_int(s, 6, run_id);
    lb_stmt_int(s, 7, token_id);
    lb_stmt_int(s, 8, submission_id);
    rc = lb_stmt_step(s);
    lb_stmt_done(s);
    return rc == LB_STEP_DONE ? XPB_OK : lb_store_db_error(db, "opening a table", err);
}

/* The counts of the run's table (and the token's membership) and of its backend. */
static xpb_status count(struct lb_db *db, long long run_id, long long submission_id,
                        const struct lb_run_row *r, long long token_id, xpb_err *err)
{
    struct lb_stmt *s = lb_db_stmt(db, SQL_MEMBER, err);
    if (!s)
        return XPB_IO_ERROR;
    bind_table(s, r);
    lb_stmt_int(s, 6, token_id);
    long long runs;
    xpb_status st = lb_store_int(&runs, db, s, "counting a table's runs", err);
    if (st == XPB_OK)
        st = count_table(db, run_id, submission_id, r, token_id, runs == 1, err);
    if (st != XPB_OK)
        return st;
    if (!(s = lb_db_stmt(db, SQL_BACKEND, err)))
        return XPB_IO_ERROR;
    lb_stmt_text(s, 1, r->backend);
    int rc = lb_stmt_step(s);
    lb_stmt_done(s);
    return rc == LB_STEP_DONE ? XPB_OK : lb_store_db_error(db, "counting a backend", err);
}

xpb_status lb_store_index_run(struct lb_db *db, long long run_id, long long submission_id,
                              const struct lb_run_row *r, long long token_id, xpb_err *err)
{
    xpb_status st = rank(db, run_id, r, token_id, err);
    return st == XPB_OK ? count(db, run_id, submission_id, r, token_id, err) : st;
}
