/* Test support shared by the leaderboard's tests and tests/test_upload.c: valid results
 * documents, a throw-away CA and server certificate (GnuTLS), temporary folders, child
 * processes that cannot outlive the test, and a small HTTPS client. */
#ifndef LBT_SUPPORT_H
#define LBT_SUPPORT_H

#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

struct lbt_run {
    const char *id;
    const char *model, *variant, *mode, *precision, *backend, *device;
    long batch;
    double throughput;        /* samples/s (median) */
    double step_p50;          /* seconds */
    double samples_per_joule; /* 0: energy not measured */
    const char *status;       /* NULL: "ok" */
};

/* What a run of a version-2 document says besides (lbt_doc_v2). */
struct lbt_v2 {
    const char *kind; /* device.kind; NULL: "unknown" */
    double spread;    /* the two repeats are throughput * (1 -+ spread); 0: 0.05 */
    int repeats;      /* 1 (no interval) or 2 (0: 2) */
};

/* A results document of schema version 1 that passes xpb_results_validate, with these runs on
 * a machine with `cpu_model` and `accelerator` (NULL for none). `nonce` goes into
 * scenario.overrides so that otherwise equal documents differ. New reference, caller decrefs.
 * Aborts on failure. */
json_t *lbt_doc(const char *cpu_model, const char *accelerator, const struct lbt_run *runs,
                size_t n_runs, unsigned nonce);

/* The same as schema version 2: device kinds, throughput intervals from the repeats (v2[i]
 * for runs[i]; v2 NULL: unknown kinds, two repeats of +-5%), and the other fields version 2
 * requires. */
json_t *lbt_doc_v2(const char *cpu_model, const char *accelerator, const struct lbt_run *runs,
                   const struct lbt_v2 *v2, size_t n_runs, unsigned nonce);

/* A time-to-accuracy run of a version-3 document (lbt_doc_v3): model, dataset Fashion-MNIST,
 * the target accuracy and, per run (seed), its time and epochs to the target. */
struct lbt_tta {
    const char *id, *model, *variant, *precision, *backend, *device;
    const char *kind; /* device.kind; NULL: "unknown" */
    long batch;
    double target;                /* the test accuracy to reach */
    size_t n_runs;                /* at most 8 */
    double seconds[8];            /* each run's time to the target; NAN: it did not reach it */
    double epochs[8];             /* each run's epochs to the target (when it reached it) */
    double watts;                 /* energy = watts x seconds; 0: not measured */
    const char *stopped_early[8]; /* each run's; NULL: ran to its target or max_epochs */
};

/* A results document of schema version 3 with the finished throughput runs `runs` (as
 * lbt_doc_v2 makes them, CPU devices) and the time-to-accuracy runs `tta`, whose "tta" objects
 * core's writer makes (run/tta_record.c: scores, the reference check), on a machine with
 * `cpu_model`; `nonce` as in lbt_doc. New reference, caller decrefs. Aborts on failure. */
json_t *lbt_doc_v3(const char *cpu_model, const struct lbt_run *runs, size_t n_runs,
                   const struct lbt_tta *tta, size_t n_tta, unsigned nonce);

/* A document of one finished run of each of the n models named in `models` (variant "x",
 * train, fp32, cpu_ref on "CPU"; at most 256): as many tables of their own. New reference. */
json_t *lbt_models_doc(const char *const *models, size_t n, unsigned nonce);

/* The simplest valid document: one conv6 cpu_ref run, distinct per nonce. */
json_t *lbt_small_doc(unsigned nonce);

/* lbt_small_doc with extra.pad, a string of `pad` bytes: a large document. */
json_t *lbt_padded_doc(size_t pad, unsigned nonce);

/* Writes doc to path (pretty-printed). Returns 0 on success. */
int lbt_write_doc(const json_t *doc, const char *path);

/* A new temporary folder under $TMPDIR (or /tmp): path into out (cap bytes). Returns 0. */
int lbt_tempdir(char *out, size_t cap, const char *tag);
/* Removes a folder tree (best effort). */
void lbt_rmtree(const char *path);

/* Certificates in `dir`: ca.pem (a CA), server.pem + server.key (for 127.0.0.1 and
 * localhost, signed by the CA), other-ca.pem (an unrelated CA); spki_out receives the
 * base64 SHA-256 of the server key's SubjectPublicKeyInfo (for Chromium's
 * --ignore-certificate-errors-spki-list). Returns 0 on success. */
int lbt_make_certs(const char *dir, char spki_out[64]);

/* Starts argv[0] (a path) with argv; extra environment entries "K=V" in env (NULL-terminated,
 * may be NULL) are added to the test's environment. The child dies with the test (parent-death
 * signal) and its own process group. When out_fd is not NULL it receives the read end of the
 * child's stdout (else stdout goes to /dev/null unless LBT_VERBOSE is set); when err_path is not
 * NULL, stderr goes to that file (else /dev/null unless LBT_VERBOSE is set). Returns the pid, or
 * -1. */
pid_t lbt_spawn(char *const argv[], char *const env[], int *out_fd, const char *err_path);

/* Waits for pid at most timeout_s seconds; kills it (SIGKILL) when it does not end. Returns
 * its exit status (0..255), 128+signal when killed by a signal, or -1 on timeout. */
int lbt_wait(pid_t pid, double timeout_s);

/* Runs argv to completion (lbt_spawn + lbt_wait) capturing stdout into out (cap bytes, may
 * be NULL). Returns the exit status as lbt_wait. */
int lbt_run(char *const argv[], char *const env[], char *out, size_t cap, double timeout_s);

/* The store the service under test uses: NULL (the default) for SQLite in each server's data
 * folder, or a PostgreSQL URL (lbt_server_start and lbt_make_token then pass --database). */
void lbt_use_database(const char *url);
const char *lbt_database(void);

/* A throw-away PostgreSQL cluster (leaderboard/tests/lbt-pg-cluster, path in `script`). */
struct lbt_pg {
    char url[512]; /* postgresql:///xpubench?host=<dir>&... */
    char dir[300];
};
/* Starts one. Returns 0; 77 when PostgreSQL's server tools are not installed (the caller skips);
 * -1 on failure. */
int lbt_pg_start(struct lbt_pg *pg, const char *script);
/* Stops it and removes its folder. */
void lbt_pg_stop(struct lbt_pg *pg, const char *script);

/* A running leaderboard service. */
struct lbt_server {
    pid_t pid;
    int port;
    char url[128];  /* "https://127.0.0.1:PORT" or "http://..." */
    char log[4200]; /* its stderr */
};

/* Starts `bin serve --data data --bind 127.0.0.1 --port port` (port 0: any; --database URL
 * instead of --data when lbt_use_database named one; the log goes to data/server.log either
 * way) with TLS when cert and key are given, plus extra arguments (NULL-terminated list, may
 * be NULL), and waits (up to 20 s) for its "serving" line. Returns 0. */
int lbt_server_start(struct lbt_server *s, const char *bin, const char *data, const char *cert,
                     const char *key, int port, const char *const *extra);
/* Stops it: SIGTERM and wait (SIGKILL after 10 s); `hard` sends SIGKILL at once. Returns the
 * exit status as lbt_wait. */
int lbt_server_stop(struct lbt_server *s, int hard);

/* Creates an upload token named `name` with `bin token create` (on lbt_database() when set,
 * else on the data folder). Returns 0. */
int lbt_make_token(char *out, size_t cap, const char *bin, const char *data, const char *name);

struct lbt_reply {
    long status; /* 0: no answer */
    char *body;  /* malloc'ed, NUL-terminated (caller frees with lbt_reply_free) */
    size_t len;
    char content_type[128];
    char retry_after[32];
    char csp[512];
};

/* One HTTP(S) request with libcurl, trusting `cacert` (NULL: plain HTTP). body NULL: GET.
 * headers: NULL-terminated "Name: value" lines, may be NULL. chunked: send the body with
 * chunked encoding (no Content-Length). Returns 0 when an answer came. */
int lbt_http(struct lbt_reply *r, const char *method, const char *url, const char *cacert,
             const char *const *headers, const char *body, size_t len, int chunked);
void lbt_reply_free(struct lbt_reply *r);

/* The "total" of GET <base>/api/v1/results, or -1. */
long lbt_count(const char *base, const char *cacert);

/* The peak resident memory of process pid (VmHWM), in bytes; -1 when unknown. */
long long lbt_peak_rss(pid_t pid);

/* The resident memory of process pid now (VmRSS), bytes; -1 when unknown. */
long long lbt_rss(pid_t pid);

#endif
