/* Submissions in the database: storing a validated results document (deduplicated by its
 * content hash) and the queries behind the API and the pages. */
#ifndef LB_STORE_H
#define LB_STORE_H

#include <stddef.h>

#include <jansson.h>

#include "error.h"
#include "lb_db.h"

#define LB_NAME_MAX 64  /* model, variant, backend names */
#define LB_TEXT_MAX 256 /* device, CPU, OS, scenario names */

/* One run as the leaderboard shows it. Numbers that a run does not have are NAN. */
struct lb_run_row {
    long long submission_id;
    int run_index;
    char run_id[LB_TEXT_MAX + 1];
    char status[16];
    char model[LB_NAME_MAX + 1], variant[LB_NAME_MAX + 1], backend[LB_NAME_MAX + 1];
    char mode[16], precision[16], transfer[16];
    long long batch, threads;
    int fusion;
    int is_cpu; /* ran on the host CPU (backend name starts with "cpu") */
    char device[LB_TEXT_MAX + 1];
    double throughput;         /* samples/s, median over repeats */
    double step_p50, step_p95; /* seconds */
    double flops_per_s;
    int energy_measured;
    double samples_per_joule;
    int verified; /* -1: not requested, 0: requested but not verified, 1: verified */
    /* from the submission (filled by queries, not by lb_extract) */
    char submitter[LB_NAME_MAX + 1], received[32];
    char cpu_model[LB_TEXT_MAX + 1], os[LB_TEXT_MAX + 1];
};

/* One submission's summary. */
struct lb_submission_info {
    long long id;
    char content_hash[65];
    char received[32], created[32];
    char submitter[LB_NAME_MAX + 1];
    char tool_version[LB_NAME_MAX + 1];
    char scenario[LB_TEXT_MAX + 1], os[LB_TEXT_MAX + 1], cpu_model[LB_TEXT_MAX + 1];
    char accelerators[LB_TEXT_MAX + 1]; /* names joined by ", " ("" for none) */
    int n_runs;
};

/* Exact-match filters; NULL or 0 means any. */
struct lb_filter {
    const char *model, *variant, *mode, *precision, *backend;
    long long batch;
};

/* The leaderboard's own rules on top of the results schema: names (model, variant, backend)
 * of at most LB_NAME_MAX letters, digits and - _ . + / :, texts of at most LB_TEXT_MAX bytes.
 * Fills info (all but id, received, submitter, content_hash) and *rows_out (malloc'ed,
 * *n_out rows, one per run, caller frees) from a document that passed
 * xpb_results_validate. XPB_PARSE_ERROR with the offending JSON path otherwise. */
xpb_status lb_extract(struct lb_submission_info *info, struct lb_run_row **rows_out, size_t *n_out,
                      const json_t *doc, xpb_err *err);

/* 1 when a backend runs on the host CPU: its name starts with "cpu" (cpu_ref, cpu_onednn). */
int lb_backend_is_cpu(const char *backend);

struct lb_submit_result {
    long long id;
    int duplicate; /* the same results (or idempotency key) were stored before as `id` */
};

/* Stores `doc` (validated) whose canonical text is `canonical` with SHA-256 `content_hash`,
 * sent with `idempotency_key` (may be NULL) by token `token_id`, in one transaction. When
 * the content hash or the idempotency key is already stored, nothing changes and the
 * existing id comes back with duplicate = 1. XPB_PARSE_ERROR (lb_extract's rules),
 * XPB_REJECTED when the idempotency key was used for different results, XPB_IO_ERROR for a
 * database failure (nothing stored). */
xpb_status lb_store_submit(struct lb_submit_result *out, struct lb_db *db, const json_t *doc,
                           const char *canonical, const char *content_hash,
                           const char *idempotency_key, long long token_id, xpb_err *err);

/* Finished runs ("ok") matching `f`, ordered by model, variant, mode, precision, then
 * throughput descending; at most `limit`. *rows_out malloc'ed (caller frees). */
xpb_status lb_store_runs(struct lb_run_row **rows_out, size_t *n_out, struct lb_db *db,
                         const struct lb_filter *f, size_t limit, xpb_err *err);

/* Every run of submission `id` in document order (any status). */
xpb_status lb_store_submission_runs(struct lb_run_row **rows_out, size_t *n_out, struct lb_db *db,
                                    long long id, xpb_err *err);

/* The best CPU throughput among finished runs of the same model, variant, mode, precision and
 * batch as `row`; NAN when there is none. */
double lb_store_best_cpu(struct lb_db *db, const struct lb_run_row *row);

/* Submission `id`: its summary, and its document (new reference, caller decrefs) when doc_out
 * is not NULL. XPB_NOT_FOUND when there is none. */
xpb_status lb_store_submission(struct lb_submission_info *info, json_t **doc_out, struct lb_db *db,
                               long long id, xpb_err *err);

/* Submissions with at least one finished run matching `f` (all submissions when f matches
 * anything), newest first, `offset` skipped, at most `limit`; *total_out counts them all.
 * *out malloc'ed (caller frees). */
xpb_status lb_store_list(struct lb_submission_info **out, size_t *n_out, long long *total_out,
                         struct lb_db *db, const struct lb_filter *f, size_t limit, size_t offset,
                         xpb_err *err);

/* Distinct values of one column among finished runs, for the filter menus: which is one of
 * "model", "variant", "mode", "precision", "backend". *values_out is a malloc'ed array of
 * malloc'ed strings (free with lb_store_free_strings). */
xpb_status lb_store_distinct(char ***values_out, size_t *n_out, struct lb_db *db, const char *which,
                             xpb_err *err);
void lb_store_free_strings(char **values, size_t n);

#endif
