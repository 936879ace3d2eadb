/* The queries behind the rankings (see lb_store.h): the tables (groups) with their sizes, and
 * each table's ranked runs, limited in SQL so that no table, however many runs it holds, costs
 * more than the rows shown. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "store/lb_store.h"
#include "store/lb_store_index.h"
#include "store/lb_store_rows.h"

/* Finished runs with a throughput, filtered by parameters 1..8. */
#define BOARD_WHERE                                                                                \
    "WHERE r.status = 'ok' AND r.throughput IS NOT NULL AND "                                      \
    "(r.model = $1 OR $1 IS NULL) AND (r.variant = $2 OR $2 IS NULL) AND "                         \
    "(r.mode = $3 OR $3 IS NULL) AND (r.precision = $4 OR $4 IS NULL) AND "                        \
    "(r.backend = $5 OR $5 IS NULL) AND (r.batch = $6 OR $6 IS NULL) AND "                         \
    "(r.world_size = $7 OR $7 IS NULL) AND (t.name = $8 OR $8 IS NULL) "
#define GROUP_KEY "r.model, r.variant, r.mode, r.precision, r.world_size"

/* The order of the tables: the most submitters first (distinct tokens: one submission, or one
 * token, adds one at most); among as many, each token's first table before anyone's second
 * (creator_turn: how many tables the token that opened it had opened before), so that one
 * submission of many new models takes no more of the first page than any other submitter's
 * table; then the table with the latest submission; then the names. The same from what
 * lb_store_index.h keeps below (SQL_KEPT_GROUPS). */
static const char SQL_GROUPS[] =
    "SELECT x.model, x.variant, x.mode, x.precision, x.world_size, x.n_runs, x.n_submitters "
    "FROM (SELECT " GROUP_KEY ", count(*) AS n_runs, count(DISTINCT s.token_id) AS n_submitters "
    "FROM runs r " LB_RUN_JOINS BOARD_WHERE "GROUP BY " GROUP_KEY ") x JOIN board_groups g ON "
    "g.model = x.model AND g.variant = x.variant AND g.mode = x.mode AND "
    "g.precision = x.precision AND g.world_size = x.world_size "
    "ORDER BY x.n_submitters DESC, g.creator_turn, g.last_submission DESC, x.model, x.variant, "
    "x.mode, x.precision, x.world_size LIMIT $9 OFFSET $10";
static const char SQL_GROUP_COUNT[] =
    "SELECT count(*) FROM (SELECT 1 FROM runs r " LB_RUN_JOINS BOARD_WHERE "GROUP BY " GROUP_KEY
    ") g";

/* One table's ranked set: its runs numbered per submitter by speed (nth), so that the outer
 * query keeps each submitter's fastest $8 (all of them when $9 names a submitter). */
#define RANKED_FROM                                                                                \
    "FROM (SELECT r.*, ROW_NUMBER() OVER (PARTITION BY s.token_id ORDER BY r.throughput DESC, "    \
    "r.id) AS nth FROM runs r JOIN submissions s ON s.id = r.submission_id "                       \
    "WHERE r.status = 'ok' AND r.throughput IS NOT NULL AND r.model = $1 AND r.variant = $2 AND "  \
    "r.mode = $3 AND r.precision = $4 AND r.world_size = $5 AND (r.backend = $6 OR $6 IS NULL) "   \
    "AND (r.batch = $7 OR $7 IS NULL)) r " LB_RUN_JOINS                                            \
    "WHERE (t.name = $9 OR $9 IS NULL) AND (r.nth <= $8 OR t.name = $9) "

/* the rows, each with the size of the whole ranked set (column LB_RUN_N_COLUMNS) */
static const char SQL_GROUP_RUNS[] = "SELECT " LB_RUN_COLUMNS ", count(*) OVER () " RANKED_FROM
                                     "ORDER BY r.throughput DESC, r.id LIMIT $10";

/* The same from what lb_store_index.h keeps, for the views that need nothing else: the tables
 * (filtered by their own columns only), a table's ranked runs, one submitter's runs. */
#define GROUPS_WHERE                                                                               \
    "WHERE (model = $1 OR $1 IS NULL) AND (variant = $2 OR $2 IS NULL) AND "                       \
    "(mode = $3 OR $3 IS NULL) AND (precision = $4 OR $4 IS NULL) AND "                            \
    "(world_size = $5 OR $5 IS NULL) "
static const char SQL_KEPT_GROUPS[] =
    "SELECT model, variant, mode, precision, world_size, n_runs, n_submitters FROM "
    "board_groups " GROUPS_WHERE
    "ORDER BY n_submitters DESC, creator_turn, last_submission DESC, model, variant, mode, "
    "precision, world_size LIMIT $6 OFFSET $7";
static const char SQL_KEPT_GROUP_COUNT[] = "SELECT count(*) FROM board_groups " GROUPS_WHERE;
#define TABLE_WHERE                                                                                \
    "WHERE r.model = $1 AND r.variant = $2 AND r.mode = $3 AND r.precision = $4 AND "              \
    "r.world_size = $5 "
static const char SQL_KEPT_RANKED[] =
    "SELECT " LB_RUN_COLUMNS ", count(*) OVER () FROM runs r " LB_RUN_JOINS TABLE_WHERE
    "AND r.ranked = 1 "
    "ORDER BY r.throughput DESC, r.id LIMIT $6";
static const char SQL_KEPT_SUBMITTER[] =
    "SELECT " LB_RUN_COLUMNS ", count(*) OVER () FROM runs r " LB_RUN_JOINS TABLE_WHERE
    "AND r.token_id = (SELECT id FROM tokens WHERE name = $7) AND r.status = 'ok' AND "
    "r.throughput IS NOT NULL ORDER BY r.throughput DESC, r.id LIMIT $6";

static const char SQL_BEST_CPU[] =
    "SELECT max(throughput) FROM runs WHERE status = 'ok' AND device_kind = 'cpu' AND "
    "model = $1 AND variant = $2 AND mode = $3 AND precision = $4 AND batch = $5 AND "
    "world_size = $6";

int lb_filter_any(const struct lb_filter *f)
{
    return f && (f->model || f->variant || f->mode || f->precision || f->backend || f->submitter ||
                 f->batch > 0 || f->world_size > 0);
}

int lb_filter_reads_runs(const struct lb_filter *f)
{
    return f && (f->backend || f->submitter || f->batch > 0);
}

static void bind_group_filter(struct lb_stmt *s, const struct lb_filter *f);

static xpb_status count_groups(long long *total, struct lb_db *db, const struct lb_filter *f,
                               xpb_err *err)
{
    int kept = !lb_filter_reads_runs(f);
    struct lb_stmt *s = lb_db_stmt(db, kept ? SQL_KEPT_GROUP_COUNT : SQL_GROUP_COUNT, err);
    if (!s)
        return XPB_IO_ERROR;
    if (kept)
        bind_group_filter(s, f);
    else
        lb_bind_filter(s, f);
    return lb_store_int(total, db, s, "counting tables", err);
}

static void bind_group_filter(struct lb_stmt *s, const struct lb_filter *f)
{
    lb_stmt_text(s, 1, f ? f->model : NULL);
    lb_stmt_text(s, 2, f ? f->variant : NULL);
    lb_stmt_text(s, 3, f ? f->mode : NULL);
    lb_stmt_text(s, 4, f ? f->precision : NULL);
    lb_bind_count(s, 5, f ? f->world_size : 0);
}

/* The statement listing the tables for f, bound but for its limit and offset; *first_param
 * says which parameter the limit is (the offset follows). */
static struct lb_stmt *groups_stmt(int *first_param, struct lb_db *db, const struct lb_filter *f,
                                   xpb_err *err)
{
    int kept = !lb_filter_reads_runs(f);
    struct lb_stmt *s = lb_db_stmt(db, kept ? SQL_KEPT_GROUPS : SQL_GROUPS, err);
    if (s && kept)
        bind_group_filter(s, f);
    else if (s)
        lb_bind_filter(s, f);
    *first_param = kept ? 6 : 9;
    return s;
}

xpb_status lb_store_groups(struct lb_group **out, size_t *n_out, long long *total_out,
                           struct lb_db *db, const struct lb_filter *f, size_t limit, size_t offset,
                           xpb_err *err)
{
    *out = NULL;
    *n_out = 0;
    xpb_status st = count_groups(total_out, db, f, err);
    if (st != XPB_OK || limit == 0)
        return st;
    int param;
    struct lb_stmt *s = groups_stmt(&param, db, f, err);
    if (!s)
        return XPB_IO_ERROR;
    lb_stmt_int(s, param, (long long)limit);
    lb_stmt_int(s, param + 1, (long long)offset);
    struct lb_group *groups = calloc(limit, sizeof *groups);
    if (!groups) {
        lb_stmt_done(s);
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    }
    size_t n = 0;
    int rc = LB_STEP_DONE;
    while (n < limit && (rc = lb_stmt_step(s)) == LB_STEP_ROW) {
        struct lb_group *g = &groups[n++];
        lb_col_text(g->model, sizeof g->model, s, 0);
        lb_col_text(g->variant, sizeof g->variant, s, 1);
        lb_col_text(g->mode, sizeof g->mode, s, 2);
        lb_col_text(g->precision, sizeof g->precision, s, 3);
        g->world_size = lb_col_int(s, 4);
        g->n_runs = lb_col_int(s, 5);
        g->n_submitters = lb_col_int(s, 6);
    }
    if (rc == LB_STEP_ERROR) {
        st = lb_store_db_error(db, "listing tables", err);
        free(groups);
        groups = NULL;
        n = 0;
    }
    lb_stmt_done(s);
    *out = groups;
    *n_out = n;
    return st;
}

/* Parameters 1..5: the table. */
static void bind_table(struct lb_stmt *s, const struct lb_group *g)
{
    lb_bind_table(s, g->model, g->variant, g->mode, g->precision, g->world_size);
}

/* Parameters 1..9 of RANKED_FROM. */
static void bind_group(struct lb_stmt *s, const struct lb_group *g, const struct lb_filter *f,
                       size_t per_submitter)
{
    bind_table(s, g);
    lb_stmt_text(s, 6, f ? f->backend : NULL);
    lb_bind_count(s, 7, f ? f->batch : 0);
    lb_stmt_int(s, 8, (long long)per_submitter);
    lb_stmt_text(s, 9, f ? f->submitter : NULL);
}

xpb_status lb_store_group_runs(struct lb_run_row **rows_out, size_t *n_out, long long *total_out,
                               struct lb_db *db, const struct lb_group *g,
                               const struct lb_filter *f, size_t per_submitter, size_t limit,
                               xpb_err *err)
{
    *rows_out = NULL;
    *n_out = 0;
    *total_out = 0;
    int kept = !f || (!f->backend && f->batch <= 0);
    int by_submitter = f && f->submitter;
    struct lb_stmt *s;
    if (kept && (by_submitter || per_submitter == LB_RANKED_PER_SUBMITTER)) {
        /* what lb_store_index keeps answers: the rows shown are all that is read */
        s = lb_db_stmt(db, by_submitter ? SQL_KEPT_SUBMITTER : SQL_KEPT_RANKED, err);
        if (!s)
            return XPB_IO_ERROR;
        bind_table(s, g);
        lb_stmt_int(s, 6, (long long)limit);
        if (by_submitter)
            lb_stmt_text(s, 7, f->submitter);
    } else {
        if (!(s = lb_db_stmt(db, SQL_GROUP_RUNS, err)))
            return XPB_IO_ERROR;
        bind_group(s, g, f, per_submitter);
        lb_stmt_int(s, 10, (long long)limit);
    }
    return lb_collect_runs_counted(rows_out, n_out, total_out, db, s, limit, err);
}

double lb_store_best_cpu(struct lb_db *db, const struct lb_run_row *row)
{
    struct lb_stmt *s = lb_db_stmt(db, SQL_BEST_CPU, NULL);
    if (!s)
        return NAN;
    lb_stmt_text(s, 1, row->model);
    lb_stmt_text(s, 2, row->variant);
    lb_stmt_text(s, 3, row->mode);
    lb_stmt_text(s, 4, row->precision);
    lb_stmt_int(s, 5, row->batch);
    lb_stmt_int(s, 6, row->world_size);
    double best = NAN;
    if (lb_stmt_step(s) == LB_STEP_ROW)
        best = lb_col_real(s, 0);
    lb_stmt_done(s);
    return best;
}
