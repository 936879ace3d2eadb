/* Re-deriving columns from stored documents (see lb_backfill.h). */
#include "store/lb_backfill.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "results/view.h"
#include "store/lb_doc.h"
#include "store/lb_store.h"
#include "store/lb_store_tta.h"

/* Submissions are read in batches by id, so that neither store holds every document at once. */
#define BATCH 64

static const char SQL_BATCH[] =
    "SELECT id, document FROM submissions WHERE id > $1 ORDER BY id LIMIT $2";
/* only a document of version 3 or later can hold a time-to-accuracy run */
static const char SQL_BATCH_V3[] = "SELECT id, document FROM submissions WHERE id > $1 AND "
                                   "schema_version >= 3 ORDER BY id LIMIT $2";
static const char SQL_SET_VERSION[] = "UPDATE submissions SET schema_version = $2 WHERE id = $1";
static const char SQL_SET_RUN[] =
    "UPDATE runs SET device_kind = $3, is_cpu = $4, world_size = $5, ci95_low = $6, "
    "ci95_high = $7, disturbed = $8 WHERE submission_id = $1 AND run_index = $2";

static xpb_status fail(struct lb_db *db, const char *what, xpb_err *err)
{
    return xpb_err_set(err, XPB_IO_ERROR, "re-deriving %s: %s", what, lb_db_errmsg(db));
}

/* Updates the columns of submission `id` from its document's view. */
static xpb_status backfill_one(struct lb_db *db, long long id, const struct xpb_results_doc *doc,
                               xpb_err *err)
{
    int version = (int)lb_doc_int(doc->schema_version, 0);
    struct lb_stmt *s = lb_db_stmt(db, SQL_SET_VERSION, err);
    if (!s)
        return XPB_IO_ERROR;
    lb_stmt_int(s, 1, id);
    lb_stmt_int(s, 2, version);
    int rc = lb_stmt_step(s);
    lb_stmt_done(s);
    if (rc != LB_STEP_DONE)
        return fail(db, "a schema version", err);
    for (size_t i = 0; i < doc->n_runs; i++) {
        struct lb_run_row r;
        memset(&r, 0, sizeof r);
        lb_extract_run_extras(&r, &doc->runs[i], version);
        if (!(s = lb_db_stmt(db, SQL_SET_RUN, err)))
            return XPB_IO_ERROR;
        lb_stmt_int(s, 1, id);
        lb_stmt_int(s, 2, (long long)i);
        lb_stmt_text(s, 3, r.device_kind);
        lb_stmt_int(s, 4, lb_kind_is_cpu(r.device_kind));
        lb_stmt_int(s, 5, r.world_size);
        lb_stmt_real(s, 6, r.ci_low);
        lb_stmt_real(s, 7, r.ci_high);
        lb_stmt_int(s, 8, r.disturbed);
        rc = lb_stmt_step(s);
        lb_stmt_done(s);
        if (rc != LB_STEP_DONE)
            return fail(db, "a run", err);
    }
    return XPB_OK;
}

/* `one` on the view of stored document `doc` of submission `id`. */
static xpb_status view_document(struct lb_db *db, long long id, const json_t *doc,
                                xpb_status (*one)(struct lb_db *db, long long id,
                                                  const struct xpb_results_doc *doc, xpb_err *err),
                                xpb_err *err)
{
    struct xpb_results_doc view;
    xpb_status st = xpb_results_view(&view, doc);
    if (st == XPB_OK)
        st = one(db, id, &view, err);
    else
        xpb_err_set(err, st, "re-deriving submission %lld: out of memory", id);
    xpb_results_view_free(&view);
    return st;
}

/* Reads the next batch of `sql` after *last into ids/docs; returns how many, or -1 on error. */
static int read_batch(long long ids[BATCH], json_t *docs[BATCH], struct lb_db *db, const char *sql,
                      long long last, xpb_err *err)
{
    struct lb_stmt *s = lb_db_stmt(db, sql, err);
    if (!s)
        return -1;
    lb_stmt_int(s, 1, last);
    lb_stmt_int(s, 2, BATCH);
    int n = 0, rc = LB_STEP_DONE;
    while (n < BATCH && (rc = lb_stmt_step(s)) == LB_STEP_ROW) {
        ids[n] = lb_col_int(s, 0);
        docs[n] = json_loads(lb_col_str(s, 1), 0, NULL);
        n++;
    }
    lb_stmt_done(s);
    if (n < BATCH && rc == LB_STEP_ERROR) {
        for (int i = 0; i < n; i++)
            json_decref(docs[i]);
        fail(db, "the stored documents", err);
        return -1;
    }
    return n;
}

/* Calls `one` on the view of every document `sql` selects (by id, a batch at a time). */
static xpb_status each_document(struct lb_db *db, const char *sql,
                                xpb_status (*one)(struct lb_db *db, long long id,
                                                  const struct xpb_results_doc *doc, xpb_err *err),
                                xpb_err *err)
{
    long long last = 0, ids[BATCH];
    json_t *docs[BATCH];
    for (;;) {
        int n = read_batch(ids, docs, db, sql, last, err);
        if (n <= 0)
            return n < 0 ? XPB_IO_ERROR : XPB_OK;
        xpb_status st = XPB_OK;
        for (int i = 0; i < n; i++) {
            if (st == XPB_OK && docs[i])
                st = view_document(db, ids[i], docs[i], one, err);
            json_decref(docs[i]);
        }
        if (st != XPB_OK)
            return st;
        last = ids[n - 1];
    }
}

xpb_status lb_backfill_v2(struct lb_db *db, xpb_err *err)
{
    return each_document(db, SQL_BATCH, backfill_one, err);
}

/* Keeps the finished tta runs of submission `id` on their board. */
static xpb_status keep_tta(struct lb_db *db, long long id, const struct xpb_results_doc *doc,
                           xpb_err *err)
{
    for (size_t i = 0; i < doc->n_runs; i++) {
        const struct xpb_results_run *run = &doc->runs[i];
        struct lb_tta_row tta;
        xpb_err refused;
        if (lb_extract_tta(&tta, run, i, &refused) != XPB_OK || !tta.has)
            continue; /* not a finished tta run, or one an upload would refuse: off the board */
        long long run_id, token_id;
        xpb_status st = lb_store_tta_run_of(&run_id, &token_id, db, id, (int)i, err);
        if (st == XPB_NOT_FOUND)
            continue;
        if (st == XPB_OK)
            st = lb_store_tta_keep(db, run_id, token_id, lb_doc_str(run->config.model),
                                   lb_doc_str(run->config.variant), &tta, err);
        if (st != XPB_OK)
            return st;
    }
    return XPB_OK;
}

xpb_status lb_backfill_tta(struct lb_db *db, xpb_err *err)
{
    return each_document(db, SQL_BATCH_V3, keep_tta, err);
}
