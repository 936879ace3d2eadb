/* Submissions in the database: storing a validated results document (deduplicated by its
 * content hash, within the daily quota of its token) and the queries behind the API and the
 * pages. The same code runs on both stores (lb_db.h). */
#ifndef LB_STORE_H
#define LB_STORE_H

#include <stddef.h>

#include <jansson.h>

#include "base/errmsg.h"
#include "db/lb_db.h"
#include "render/text.h"
#include "results/view.h"

#define LB_NAME_MAX 64  /* model, variant, backend names; tool.version */
#define LB_TEXT_MAX 256 /* device, CPU, OS, scenario names, run ids */
#define LB_KIND_MAX 15  /* device kinds: "cpu", "gpu", "accelerator", "unknown" */

/* A finished time-to-accuracy run (mode "tta", schema version 3; docs/results.md, "Time to
 * accuracy") as its board shows it: the scores of its runs to the target. NAN where the document
 * has no number. */
struct lb_tta_row {
    int has;                         /* 1: the run is a finished tta run and the rest is set */
    char dataset[LB_NAME_MAX + 1];   /* tta.dataset */
    double target;                   /* tta.target, the test accuracy to reach */
    double seconds;                  /* tta.seconds.mean, the Olympic mean; NAN: not reached */
    double seconds_min, seconds_max; /* the spread of the runs that converged */
    double joules;                   /* tta.joules.mean, the energy to target */
    double epochs;                   /* the median epochs of the runs that converged */
    double reference_epochs;         /* tta.reference_epochs; NAN: no reference point */
    long long converged, runs;       /* reached k of n: tta.seconds.converged, .runs */
    long long outside;               /* runs that converged outside the reference point */
};

/* One run as the leaderboard shows it. Numbers that a run does not have are NAN. */
struct lb_run_row {
    long long submission_id;
    int run_index;
    char run_id[LB_TEXT_MAX + 1];
    char status[16];
    char model[LB_NAME_MAX + 1], variant[LB_NAME_MAX + 1], backend[LB_NAME_MAX + 1];
    char mode[16], precision[16], transfer[16];
    /* runs[].device.kind of a version-2 document; "unknown" for a version-1 document (its
     * devices do not say, and nothing is inferred from the backend's name) */
    char device_kind[LB_KIND_MAX + 1];
    long long batch, threads;
    long long world_size; /* config.world_size, 1 when the document does not say */
    /* metrics.interference.flagged (version 2): other processes took enough of the machine
     * during the timed steps that the numbers are not the run's own; 0 when not said */
    int disturbed;
    int fusion;
    char device[LB_TEXT_MAX + 1];
    double throughput;         /* samples/s, median over repeats */
    double ci_low, ci_high;    /* its 95% interval (version 2, two repeats or more), else NAN */
    double step_p50, step_p95; /* seconds */
    double flops_per_s;
    int energy_measured;
    double samples_per_joule;
    int verified;          /* -1: not requested, 0: requested but not verified, 1: verified */
    struct lb_tta_row tta; /* a time-to-accuracy run's scores (never a throughput) */
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
    int schema_version;
};

/* Exact-match filters; NULL or 0 means any. */
struct lb_filter {
    const char *model, *variant, *mode, *precision, *backend;
    const char *submitter; /* a token's name */
    long long batch, world_size;
};

/* 1 when any filter is set. */
int lb_filter_any(const struct lb_filter *f);

/* 1 when the rankings under f are read from the runs rather than only from what the store
 * keeps (lb_store_index.h): f names a backend, a batch or a submitter. Such a page costs in
 * proportion to the runs stored (0.5 s at 50,000 runs); the others cost the rows shown. */
int lb_filter_reads_runs(const struct lb_filter *f);

/* 1 when a run of this device kind runs on the host CPU. */
int lb_kind_is_cpu(const char *device_kind);

/* The leaderboard's rule for names, and for the filter values that select them (model, variant,
 * backend, ...): 1 when s is 1 to max_len bytes of letters, digits and - _ . + / : (so it can be
 * matched exactly and echoed safely); 0 else. */
int lb_is_token_text(const char *s, size_t max_len);

/* From a document that passed xpb_results_validate to the leaderboard's rows, applying the
 * leaderboard's own rules (docs/leaderboard.md): names (model, variant, backend) of at most
 * LB_NAME_MAX letters, digits and - _ . + / :, texts of at most LB_TEXT_MAX bytes, tool.version
 * of at most LB_NAME_MAX bytes, 1 to max_runs runs, and plausible metrics (lb_plausible).
 * Fills info (all but id, received, submitter, content_hash) and *rows_out (malloc'ed, *n_out
 * rows, one per run, caller frees). XPB_PARSE_ERROR with the offending JSON path otherwise. */
xpb_status lb_extract(struct lb_submission_info *info, struct lb_run_row **rows_out, size_t *n_out,
                      const json_t *doc, size_t max_runs, xpb_err *err);

/* The columns a later schema version added, from one run of a stored document (core's typed
 * view of it): device kind, world size, throughput interval and the interference flag (used by
 * lb_extract and by the migration that re-derives them, lb_backfill.h). */
void lb_extract_run_extras(struct lb_run_row *r, const struct xpb_results_run *run,
                           int schema_version);

/* The scores of run runs[index] (core's typed view of it) when it is a finished
 * time-to-accuracy run, into *out (out->has 0 otherwise), with the leaderboard's rules: the
 * dataset a name (lb_is_token_text) and the numbers plausible (lb_plausible). Used by lb_extract
 * and by the migration that keeps the tta runs stored before it (lb_backfill.h).
 * XPB_PARSE_ERROR naming the path otherwise. */
xpb_status lb_extract_tta(struct lb_tta_row *out, const struct xpb_results_run *run, size_t index,
                          xpb_err *err);

/* The bounds on a run's numbers that no real measurement reaches (docs/leaderboard.md, "Bounds"):
 * XPB_PARSE_ERROR naming the path ("runs[3].metrics.throughput.median: 1e+300 samples/s is
 * not plausible (at most 1e+09)") when a value of `run` (the view of runs[index]) is outside
 * them, or when a time-to-accuracy run's scores contradict its runs (more converged than ran, a
 * mean outside its spread). */
xpb_status lb_plausible(const struct xpb_results_run *run, size_t index, xpb_err *err);

enum lb_submit_outcome {
    LB_SUBMIT_STORED,     /* a new submission */
    LB_SUBMIT_DUPLICATE,  /* the same results (or idempotency key) were stored before as `id` */
    LB_SUBMIT_OVER_QUOTA, /* the token stored max_per_day submissions in the last 24 hours */
};

struct lb_submit_result {
    enum lb_submit_outcome outcome;
    long long id; /* STORED, DUPLICATE */
};

/* What one submission may be. */
struct lb_submit_limits {
    size_t max_runs;       /* runs per submission */
    long long max_per_day; /* new submissions per token in any 24 hours; 0: no limit */
};

/* Stores `doc` (validated) whose canonical text is `canonical` with SHA-256 `content_hash`,
 * sent with `idempotency_key` (may be NULL) by token `token_id`, in one write transaction
 * (the duplicate check, the quota and the insert see the same database). Duplicates are
 * answered even over the quota; nothing changes for them or when over the quota.
 * XPB_PARSE_ERROR (lb_extract's rules), XPB_REJECTED when the idempotency key was used for
 * different results, XPB_IO_ERROR for a database failure (nothing stored). */
xpb_status lb_store_submit(struct lb_submit_result *out, struct lb_db *db, const json_t *doc,
                           const char *canonical, const char *content_hash,
                           const char *idempotency_key, long long token_id,
                           const struct lb_submit_limits *limits, xpb_err *err);

/* New submissions of token `token_id` received in the last 24 hours. */
xpb_status lb_store_recent(long long *count_out, struct lb_db *db, long long token_id,
                           xpb_err *err);

/* One ranking table: the finished runs of one model, variant, mode, precision and world size. */
struct lb_group {
    char model[LB_NAME_MAX + 1], variant[LB_NAME_MAX + 1];
    char mode[16], precision[16];
    long long world_size;
    long long n_runs;       /* finished runs matching the filters */
    long long n_submitters; /* distinct submitters among them */
};

/* The groups with finished runs matching `f` in the board's order (the most submitters first;
 * among as many, each submitter's first table before anyone's second, by the turn in which its
 * submitter opened it; then the latest submission first; then by name), `offset`
 * skipped, at most `limit`; *total_out counts them all. *out malloc'ed (caller frees). */
xpb_status lb_store_groups(struct lb_group **out, size_t *n_out, long long *total_out,
                           struct lb_db *db, const struct lb_filter *f, size_t limit, size_t offset,
                           xpb_err *err);

/* The ranked runs of group `g` under filters `f` (backend, batch, submitter): fastest median
 * first, at most `per_submitter` runs of each submitter (all of them when f->submitter is set),
 * the first `limit`. *total_out counts the whole ranked set. *rows_out malloc'ed (caller
 * frees). */
xpb_status lb_store_group_runs(struct lb_run_row **rows_out, size_t *n_out, long long *total_out,
                               struct lb_db *db, const struct lb_group *g,
                               const struct lb_filter *f, size_t per_submitter, size_t limit,
                               xpb_err *err);

/* The best throughput among finished runs on a device of kind "cpu" with the same model,
 * variant, mode, precision, world size and batch as `row`; NAN when there is none. */
double lb_store_best_cpu(struct lb_db *db, const struct lb_run_row *row);

/* The runs of submission `id` in document order, at most `limit`: every run (any status) when
 * `f` is NULL or sets no filter, else its finished runs matching `f`. */
xpb_status lb_store_submission_runs(struct lb_run_row **rows_out, size_t *n_out, struct lb_db *db,
                                    long long id, const struct lb_filter *f, size_t limit,
                                    xpb_err *err);

/* Submission `id`: its summary, and its canonical text appended to *text_out when it is not
 * NULL (read straight into it: a document of several MiB is not copied once more; check
 * text_out->failed). XPB_NOT_FOUND when there is none. */
xpb_status lb_store_submission(struct lb_submission_info *info, struct xpb_text *text_out,
                               struct lb_db *db, long long id, xpb_err *err);

/* The size in bytes of submission `id`'s stored document, without reading it. XPB_NOT_FOUND
 * when there is none. */
xpb_status lb_store_document_bytes(long long *bytes_out, struct lb_db *db, long long id,
                                   xpb_err *err);

/* Submission `id` with its document parsed (new reference, caller decrefs). */
xpb_status lb_store_submission_doc(struct lb_submission_info *info, json_t **doc_out,
                                   struct lb_db *db, long long id, xpb_err *err);

/* Submissions with at least one finished run matching `f` (all submissions when f matches
 * anything), newest first, `offset` skipped, at most `limit`; *total_out counts them all.
 * *out malloc'ed (caller frees). */
xpb_status lb_store_list(struct lb_submission_info **out, size_t *n_out, long long *total_out,
                         struct lb_db *db, const struct lb_filter *f, size_t limit, size_t offset,
                         xpb_err *err);

/* Distinct values of one column among finished runs, for the filter menus, sorted, at most
 * `limit`: which is one of "model", "variant", "mode", "precision", "backend", "world_size"
 * (as text) or "submitter". *values_out is a malloc'ed array of malloc'ed strings (free with
 * lb_store_free_strings). */
xpb_status lb_store_distinct(char ***values_out, size_t *n_out, struct lb_db *db, const char *which,
                             size_t limit, xpb_err *err);
void lb_store_free_strings(char **values, size_t n);

#endif
