/* Test support (see lbt_support.h). */
#include "lbt_support.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "base/sha256.h"
#include "results/interval.h"

extern char **environ;

static const char *database_url;

void lbt_use_database(const char *url)
{
    database_url = url;
}

const char *lbt_database(void)
{
    return database_url;
}

static void die(const char *what)
{
    fprintf(stderr, "lbt_support: %s\n", what);
    abort();
}

static json_t *run_json(const struct lbt_run *r)
{
    int ok = !r->status || !strcmp(r->status, "ok");
    int train = !strcmp(r->mode, "train");
    double tp = r->throughput;
    json_t *config = json_pack(
        "{s:s, s:s, s:s, s:i, s:s, s:s, s:b, s:i, s:i, s:i, s:i, s:f, s:i, s:i, s:i, s:s, s:s, "
        "s:{}}",
        "model", r->model, "variant", r->variant, "mode", r->mode, "batch", (int)r->batch,
        "precision", r->precision, "backend", r->backend, "fusion", 0, "threads", 4, "device", 0,
        "warmup", 2, "min_steps", 5, "min_time_s", 0.5, "max_steps", 100, "repeats", 2, "seed", 1,
        "data", "synthetic", "transfer", "resident", "params");
    if (train)
        json_object_set_new(config, "optimizer",
                            json_pack("{s:s, s:f, s:f, s:f, s:f, s:f, s:f}", "kind", "sgd", "lr",
                                      0.01, "momentum", 0.9, "weight_decay", 0.0, "beta1", 0.9,
                                      "beta2", 0.999, "eps", 1e-8));
    json_t *run = json_pack("{s:s, s:s, s:o, s:{s:b, s:n, s:s, s:n, s:s}}", "id", r->id, "status",
                            ok ? "ok" : r->status, "config", config, "verification", "requested", 0,
                            "verified", "reference", "", "max_rel_error", "message", "");
    if (!run)
        die("run_json");
    if (!ok) {
        json_object_set_new(run, "error", json_string("backend does not support this op"));
        return run;
    }
    json_object_set_new(run, "model",
                        json_pack("{s:i, s:i, s:i, s:i}", "parameters", 1000,
                                  "flops_per_sample_"
                                  "forward",
                                  2000, "flops_per_sample_train", 6000, "layers", 9));
    json_object_set_new(run, "device",
                        json_pack("{s:s, s:s, s:s, s:i, s:{}}", "name", r->device, "driver", "",
                                  "libraries", "", "threads", 4, "peak_flops"));
    int measured = r->samples_per_joule > 0;
    double p50 = r->step_p50;
    json_t *metrics = json_pack(
        "{s:i, s:{s:f, s:f, s:f, s:s}, s:[{s:i, s:f, s:f}, {s:i, s:f, s:f}], "
        "s:{s:f, s:f, s:f, s:f, s:f}, s:f, s:n, s:{s:i, s:n, s:n}, s:{s:b, s:o, s:o, s:o}, "
        "s:{s:f, s:f}, s:f}",
        "timed_steps", 10, "throughput", "median", tp, "min", tp * 0.95, "max", tp * 1.05, "unit",
        "samples/s", "repeats", "steps", 5, "seconds", 1.0, "throughput", tp * 0.95, "steps", 5,
        "seconds", 1.0, "throughput", tp * 1.05, "step_time_s", "mean", p50, "p50", p50, "p95",
        p50 * 1.1, "p99", p50 * 1.2, "cv", 0.02, "flops_per_s", tp * 6000.0, "peak_fraction",
        "memory", "host_peak_rss_bytes", 100000000, "device_bytes_in_use", "device_peak_bytes",
        "energy", "measured", measured, "source", measured ? json_string("nvml") : json_null(),
        "joules", measured ? json_real(10.0) : json_null(), "samples_per_joule",
        measured ? json_real(r->samples_per_joule) : json_null(), "loss", "first", 2.3, "last", 2.1,
        "host_overhead_fraction", 0.05);
    if (!metrics)
        die("metrics");
    json_object_set_new(run, "metrics", metrics);
    return run;
}

json_t *lbt_doc(const char *cpu_model, const char *accelerator, const struct lbt_run *runs,
                size_t n_runs, unsigned nonce)
{
    char nonce_text[32];
    snprintf(nonce_text, sizeof nonce_text, "nonce=%u", nonce);
    json_t *accs = json_array();
    if (accelerator)
        json_array_append_new(accs,
                              json_pack("{s:s, s:s}", "name", accelerator, "driver", "535.1"));
    json_t *doc = json_pack(
        "{s:s, s:i, s:{s:s, s:s}, s:s, s:{s:s, s:s, s:s, s:[s]}, "
        "s:{s:s, s:s, s:{s:s, s:i, s:i, s:[s, s]}, s:I, s:s, s:{s:s}, s:o, "
        "s:[{s:s, s:s, s:s, s:s, s:s}]}, s:[], s:[]}",
        "schema", "xpubench-results", "schema_version", 1, "tool", "name", "xpubench", "version",
        "0.1.0", "created", "2026-11-21T12:00:00Z", "scenario", "path", "configs/quick.yaml",
        "name", "quickstart", "sha256",
        "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "overrides", nonce_text,
        "environment", "os", "Debian GNU/Linux 12", "kernel", "6.1.0", "cpu", "model", cpu_model,
        "cores", 8, "logical_cpus", 16, "flags", "avx2", "fma", "memory_bytes",
        (json_int_t)34359738368LL, "compiler", "GNU 12.2.0", "libraries", "jansson", "2.14",
        "accelerators", accs, "plugins", "name", "cpu_ref", "kind", "backend", "version", "0.1.0",
        "abi", "1.0", "path", "plugins/cpu_ref.so", "runs", "comparisons");
    if (!doc)
        die("lbt_doc");
    json_t *arr = json_object_get(doc, "runs");
    for (size_t i = 0; i < n_runs; i++)
        json_array_append_new(arr, run_json(&runs[i]));
    return doc;
}

/* Repeats, min, max and the 95% interval of a finished run of version 2. */
static void v2_throughput(json_t *run, const struct lbt_run *r, const struct lbt_v2 *v)
{
    json_t *metrics = json_object_get(run, "metrics");
    json_t *tp = json_object_get(metrics, "throughput");
    double spread = v && v->spread > 0 ? v->spread : 0.05, t = r->throughput;
    int n = v && v->repeats == 1 ? 1 : 2;
    double lo = n == 1 ? t : t * (1 - spread), hi = n == 1 ? t : t * (1 + spread);
    json_t *repeats = json_array();
    json_array_append_new(
        repeats, json_pack("{s:i, s:f, s:f}", "steps", 5, "seconds", 1.0, "throughput", lo));
    if (n == 2)
        json_array_append_new(
            repeats, json_pack("{s:i, s:f, s:f}", "steps", 5, "seconds", 1.0, "throughput", hi));
    json_object_set_new(metrics, "repeats", repeats);
    json_object_set_new(json_object_get(run, "config"), "repeats", json_integer(n));
    json_object_set_new(tp, "min", json_real(lo));
    json_object_set_new(tp, "max", json_real(hi));
    double x[2] = {lo, hi};
    xpb_interval ci;
    if (xpb_interval_geomean(&ci, x, (size_t)n, 0.95) != 0)
        die("interval");
    json_object_set_new(tp, "ci95_low", n == 2 ? json_real(ci.low) : json_null());
    json_object_set_new(tp, "ci95_high", n == 2 ? json_real(ci.high) : json_null());
}

/* The fields version 2 adds to a finished run. */
static void v2_run(json_t *run, const struct lbt_run *r, const struct lbt_v2 *v)
{
    json_object_set_new(json_object_get(run, "config"), "allow_emulated", json_false());
    json_t *device = json_object_get(run, "device");
    json_t *metrics = json_object_get(run, "metrics");
    if (!device || !metrics)
        return;
    json_object_set_new(device, "kind", json_string(v && v->kind ? v->kind : "unknown"));
    json_object_set_new(device, "precisions", json_pack("{s:s}", "fp32", "native"));
    json_object_set_new(device, "capabilities", json_pack("[s]", "threads"));
    json_t *energy = json_object_get(metrics, "energy");
    int measured = json_is_true(json_object_get(energy, "measured"));
    json_object_set_new(energy, "watts", measured ? json_real(150) : json_null());
    json_object_set_new(energy, "reason", measured ? json_null() : json_string("no meter"));
    json_object_set_new(json_object_get(metrics, "memory"), "host_run_peak_bytes",
                        json_integer(1 << 20));
    json_object_set_new(json_object_get(metrics, "loss"), "series", json_array());
    json_object_set_new(metrics, "interference",
                        json_pack("{s:f, s:f, s:f, s:b}", "other_cpu_share", 0.0, "steal_share",
                                  0.0, "load_1m", 0.5, "flagged", 0));
    v2_throughput(run, r, v);
}

json_t *lbt_doc_v2(const char *cpu_model, const char *accelerator, const struct lbt_run *runs,
                   const struct lbt_v2 *v2, size_t n_runs, unsigned nonce)
{
    json_t *doc = lbt_doc(cpu_model, accelerator, runs, n_runs, nonce);
    json_object_set_new(doc, "schema_version", json_integer(2));
    json_object_set_new(json_object_get(doc, "scenario"), "baseline", json_null());
    json_t *arr = json_object_get(doc, "runs");
    for (size_t i = 0; i < n_runs; i++)
        v2_run(json_array_get(arr, i), &runs[i], v2 ? &v2[i] : NULL);
    return doc;
}

json_t *lbt_padded_doc(size_t pad, unsigned nonce)
{
    json_t *doc = lbt_small_doc(nonce);
    char *text = malloc(pad + 1);
    if (!text)
        die("lbt_padded_doc");
    memset(text, 'p', pad);
    text[pad] = '\0';
    json_object_set_new(doc, "extra", json_pack("{s:s}", "pad", text));
    free(text);
    return doc;
}

json_t *lbt_models_doc(const char *const *models, size_t n, unsigned nonce)
{
    static _Thread_local struct lbt_run runs[256];
    if (n > 256)
        die("lbt_models_doc: too many models");
    for (size_t i = 0; i < n; i++)
        runs[i] = (struct lbt_run){models[i], models[i], "x",  "train", "fp32", "cpu_ref",
                                   "CPU",     8,         50.0, 0.1,     0,      NULL};
    return lbt_doc("CPU", NULL, runs, n, nonce);
}

json_t *lbt_small_doc(unsigned nonce)
{
    struct lbt_run r = {
        "conv6-train",        "conv6", "cifar", "train", "fp32", "cpu_ref", "Test CPU", 64,
        100.0 + nonce % 1000, 0.64,    0,       NULL};
    return lbt_doc("Test CPU", NULL, &r, 1, nonce);
}

int lbt_write_doc(const json_t *doc, const char *path)
{
    return json_dump_file(doc, path, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
}

int lbt_tempdir(char *out, size_t cap, const char *tag)
{
    const char *tmp = getenv("TMPDIR");
    if (!tmp || tmp[0] != '/')
        tmp = "/tmp";
    snprintf(out, cap, "%s/xpb-%s-XXXXXX", tmp, tag);
    return mkdtemp(out) ? 0 : -1;
}

void lbt_rmtree(const char *path)
{
    DIR *d = opendir(path);
    if (!d) {
        unlink(path);
        return;
    }
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        char child[4096];
        snprintf(child, sizeof child, "%s/%s", path, de->d_name);
        struct stat st;
        if (lstat(child, &st) == 0 && S_ISDIR(st.st_mode))
            lbt_rmtree(child);
        else
            unlink(child);
    }
    closedir(d);
    rmdir(path);
}

/* ---- certificates ---- */

static int write_datum(const char *path, const gnutls_datum_t *d, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, d->data, d->size);
    close(fd);
    return n == (ssize_t)d->size ? 0 : -1;
}

static int new_key(gnutls_x509_privkey_t *key)
{
    if (gnutls_x509_privkey_init(key) < 0)
        return -1;
    return gnutls_x509_privkey_generate(*key, GNUTLS_PK_ECDSA,
                                        GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0) < 0
               ? -1
               : 0;
}

/* A certificate for `key` named `cn`, valid from an hour ago for two days. */
static int new_cert(gnutls_x509_crt_t *crt, gnutls_x509_privkey_t key, const char *cn,
                    unsigned char serial)
{
    time_t now = time(NULL);
    unsigned char ser[2] = {0x01, serial};
    unsigned char id[64];
    size_t id_len = sizeof id;
    if (gnutls_x509_crt_init(crt) < 0 || gnutls_x509_crt_set_version(*crt, 3) < 0 ||
        gnutls_x509_crt_set_serial(*crt, ser, sizeof ser) < 0 ||
        gnutls_x509_crt_set_activation_time(*crt, now - 3600) < 0 ||
        gnutls_x509_crt_set_expiration_time(*crt, now + 2 * 86400) < 0 ||
        gnutls_x509_crt_set_dn_by_oid(*crt, GNUTLS_OID_X520_COMMON_NAME, 0, cn,
                                      (unsigned)strlen(cn)) < 0 ||
        gnutls_x509_crt_set_key(*crt, key) < 0 ||
        gnutls_x509_privkey_get_key_id(key, GNUTLS_KEYID_USE_SHA1, id, &id_len) < 0 ||
        gnutls_x509_crt_set_subject_key_id(*crt, id, id_len) < 0)
        return -1;
    return 0;
}

static void base64(char *out, const unsigned char *in, size_t n)
{
    static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)in[i] << 16;
        if (i + 1 < n)
            v |= (unsigned)in[i + 1] << 8;
        if (i + 2 < n)
            v |= in[i + 2];
        out[o++] = tbl[(v >> 18) & 63];
        out[o++] = tbl[(v >> 12) & 63];
        out[o++] = i + 1 < n ? tbl[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? tbl[v & 63] : '=';
    }
    out[o] = '\0';
}

/* Writes a self-signed CA certificate to `path`; keeps its key and certificate. */
static int make_ca(gnutls_x509_privkey_t *key, gnutls_x509_crt_t *crt, const char *cn,
                   unsigned char serial, const char *path)
{
    gnutls_datum_t pem = {NULL, 0};
    if (new_key(key) || new_cert(crt, *key, cn, serial) ||
        gnutls_x509_crt_set_basic_constraints(*crt, 1, -1) < 0 ||
        gnutls_x509_crt_set_key_usage(*crt, GNUTLS_KEY_KEY_CERT_SIGN | GNUTLS_KEY_CRL_SIGN) < 0 ||
        gnutls_x509_crt_sign2(*crt, *crt, *key, GNUTLS_DIG_SHA256, 0) < 0 ||
        gnutls_x509_crt_export2(*crt, GNUTLS_X509_FMT_PEM, &pem) < 0)
        return -1;
    int rc = write_datum(path, &pem, 0644);
    gnutls_free(pem.data);
    return rc;
}

int lbt_make_certs(const char *dir, char spki_out[64])
{
    gnutls_global_init();
    char path[4096];
    gnutls_x509_privkey_t ca_key = NULL, other_key = NULL, key = NULL;
    gnutls_x509_crt_t ca = NULL, other = NULL, crt = NULL;
    gnutls_pubkey_t pub = NULL;
    gnutls_datum_t pem = {NULL, 0}, der = {NULL, 0};
    int rc = -1;
    snprintf(path, sizeof path, "%s/ca.pem", dir);
    if (make_ca(&ca_key, &ca, "xpubench test CA", 1, path))
        goto done;
    snprintf(path, sizeof path, "%s/other-ca.pem", dir);
    if (make_ca(&other_key, &other, "unrelated test CA", 2, path))
        goto done;
    unsigned char ip[4] = {127, 0, 0, 1}, ca_id[64];
    size_t ca_id_len = sizeof ca_id;
    if (new_key(&key) || new_cert(&crt, key, "127.0.0.1", 3) ||
        gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_DNSNAME, "localhost", 9,
                                             GNUTLS_FSAN_APPEND) < 0 ||
        gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, ip, 4, GNUTLS_FSAN_APPEND) <
            0 ||
        gnutls_x509_crt_set_basic_constraints(crt, 0, -1) < 0 ||
        gnutls_x509_crt_set_key_usage(crt, GNUTLS_KEY_DIGITAL_SIGNATURE) < 0 ||
        gnutls_x509_crt_set_key_purpose_oid(crt, GNUTLS_KP_TLS_WWW_SERVER, 0) < 0 ||
        gnutls_x509_crt_get_subject_key_id(ca, ca_id, &ca_id_len, NULL) < 0 ||
        gnutls_x509_crt_set_authority_key_id(crt, ca_id, ca_id_len) < 0 ||
        gnutls_x509_crt_sign2(crt, ca, ca_key, GNUTLS_DIG_SHA256, 0) < 0 ||
        gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM, &pem) < 0)
        goto done;
    snprintf(path, sizeof path, "%s/server.pem", dir);
    if (write_datum(path, &pem, 0644))
        goto done;
    gnutls_free(pem.data);
    pem.data = NULL;
    if (gnutls_x509_privkey_export2(key, GNUTLS_X509_FMT_PEM, &pem) < 0)
        goto done;
    snprintf(path, sizeof path, "%s/server.key", dir);
    if (write_datum(path, &pem, 0600))
        goto done;
    if (gnutls_pubkey_init(&pub) < 0 || gnutls_pubkey_import_x509(pub, crt, 0) < 0 ||
        gnutls_pubkey_export2(pub, GNUTLS_X509_FMT_DER, &der) < 0)
        goto done;
    unsigned char digest[32];
    xpb_sha256(digest, der.data, der.size);
    base64(spki_out, digest, 32);
    rc = 0;
done:
    gnutls_free(pem.data);
    gnutls_free(der.data);
    if (pub)
        gnutls_pubkey_deinit(pub);
    if (crt)
        gnutls_x509_crt_deinit(crt);
    if (key)
        gnutls_x509_privkey_deinit(key);
    if (other)
        gnutls_x509_crt_deinit(other);
    if (other_key)
        gnutls_x509_privkey_deinit(other_key);
    if (ca)
        gnutls_x509_crt_deinit(ca);
    if (ca_key)
        gnutls_x509_privkey_deinit(ca_key);
    gnutls_global_deinit();
    return rc;
}

/* ---- processes ---- */

pid_t lbt_spawn(char *const argv[], char *const env[], int *out_fd, const char *err_path)
{
    int pipefd[2] = {-1, -1};
    if (out_fd && pipe(pipefd) != 0)
        return -1;
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        setpgid(0, 0);
        if (out_fd) {
            dup2(pipefd[1], STDOUT_FILENO);
            close(pipefd[0]);
            close(pipefd[1]);
        } else if (!getenv("LBT_VERBOSE")) {
            int null_fd = open("/dev/null", O_WRONLY);
            if (null_fd >= 0) {
                dup2(null_fd, STDOUT_FILENO);
                close(null_fd);
            }
        }
        int err_fd = err_path ? open(err_path, O_WRONLY | O_CREAT | O_APPEND, 0644)
                              : (getenv("LBT_VERBOSE") ? -1 : open("/dev/null", O_WRONLY));
        if (err_fd >= 0) {
            dup2(err_fd, STDERR_FILENO);
            close(err_fd);
        }
        for (size_t i = 0; env && env[i]; i++)
            putenv(env[i]);
        execv(argv[0], argv);
        _exit(127);
    }
    if (out_fd) {
        close(pipefd[1]);
        *out_fd = pipefd[0];
    }
    return pid;
}

int lbt_wait(pid_t pid, double timeout_s)
{
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        int status;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (r < 0)
            return -1;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double el = (double)(now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) * 1e-9;
        if (el > timeout_s) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return -1;
        }
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
}

int lbt_run(char *const argv[], char *const env[], char *out, size_t cap, double timeout_s)
{
    int fd = -1;
    pid_t pid = lbt_spawn(argv, env, out ? &fd : NULL, NULL);
    if (pid < 0)
        return -1;
    size_t used = 0;
    if (out) {
        ssize_t n;
        while ((n = read(fd, out + used, cap - 1 - used)) > 0 && used + (size_t)n < cap - 1)
            used += (size_t)n;
        if (n > 0)
            used += (size_t)n;
        out[used] = '\0';
        /* drain what did not fit so the child never blocks on a full pipe */
        char sink[4096];
        while (read(fd, sink, sizeof sink) > 0)
            ;
        close(fd);
    }
    return lbt_wait(pid, timeout_s);
}

int lbt_server_start(struct lbt_server *s, const char *bin, const char *data, const char *cert,
                     const char *key, int port, const char *const *extra)
{
    memset(s, 0, sizeof *s);
    char port_text[16];
    snprintf(port_text, sizeof port_text, "%d", port);
    mkdir(data, 0700); /* so that the log can live there from the start */
    snprintf(s->log, sizeof s->log, "%s/server.log", data);
    char *argv[48];
    int n = 0;
    argv[n++] = (char *)bin;
    argv[n++] = "serve";
    argv[n++] = database_url ? "--database" : "--data";
    argv[n++] = (char *)(database_url ? database_url : data);
    argv[n++] = "--bind";
    argv[n++] = "127.0.0.1";
    argv[n++] = "--port";
    argv[n++] = port_text;
    if (cert) {
        argv[n++] = "--tls-cert";
        argv[n++] = (char *)cert;
        argv[n++] = "--tls-key";
        argv[n++] = (char *)key;
    }
    for (size_t i = 0; extra && extra[i] && n < 46; i++)
        argv[n++] = (char *)extra[i];
    argv[n] = NULL;
    int fd;
    s->pid = lbt_spawn(argv, NULL, &fd, s->log);
    if (s->pid < 0)
        return -1;
    /* read the "serving" line, with a deadline */
    char line[512];
    size_t used = 0;
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    for (;;) {
        ssize_t r = read(fd, line + used, sizeof line - 1 - used);
        if (r > 0) {
            used += (size_t)r;
            line[used] = '\0';
            char *nl = strchr(line, '\n');
            char *at = strstr(line, "serving ");
            if (nl && at) {
                char scheme[8];
                if (sscanf(at, "serving %7[a-z]://127.0.0.1:%d/", scheme, &s->port) == 2) {
                    snprintf(s->url, sizeof s->url, "%s://127.0.0.1:%d", scheme, s->port);
                    close(fd); /* the service writes nothing else to stdout */
                    return 0;
                }
                break;
            }
            if (used >= sizeof line - 1)
                break;
        } else if (r == 0) {
            break; /* exited */
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec > 20)
            break;
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    close(fd);
    kill(s->pid, SIGKILL);
    lbt_wait(s->pid, 5);
    s->pid = 0;
    return -1;
}

int lbt_server_stop(struct lbt_server *s, int hard)
{
    if (s->pid <= 0)
        return -1;
    kill(s->pid, hard ? SIGKILL : SIGTERM);
    int rc = lbt_wait(s->pid, 10);
    s->pid = 0;
    return rc;
}

int lbt_make_token(char *out, size_t cap, const char *bin, const char *data, const char *name)
{
    char *argv[] = {(char *)bin,
                    "token",
                    "create",
                    (char *)name,
                    database_url ? "--database" : "--data",
                    (char *)(database_url ? database_url : data),
                    NULL};
    if (lbt_run(argv, NULL, out, cap, 30) != 0)
        return -1;
    out[strcspn(out, "\r\n")] = '\0';
    return strncmp(out, "xpb_", 4) == 0 ? 0 : -1;
}

/* ---- HTTP client ---- */

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *user)
{
    struct lbt_reply *r = user;
    size_t n = size * nmemb;
    char *grown = realloc(r->body, r->len + n + 1);
    if (!grown)
        return 0;
    r->body = grown;
    memcpy(r->body + r->len, ptr, n);
    r->len += n;
    r->body[r->len] = '\0';
    return n;
}

static void header_value(char *out, size_t cap, const char *line, size_t n, const char *name)
{
    size_t k = strlen(name);
    if (n > k + 1 && strncasecmp(line, name, k) == 0 && line[k] == ':') {
        const char *v = line + k + 1;
        while (*v == ' ')
            v++;
        size_t len = (size_t)(line + n - v);
        while (len > 0 && (v[len - 1] == '\r' || v[len - 1] == '\n'))
            len--;
        snprintf(out, cap, "%.*s", (int)len, v);
    }
}

static size_t on_header(char *line, size_t size, size_t nmemb, void *user)
{
    struct lbt_reply *r = user;
    size_t n = size * nmemb;
    header_value(r->content_type, sizeof r->content_type, line, n, "Content-Type");
    header_value(r->retry_after, sizeof r->retry_after, line, n, "Retry-After");
    header_value(r->csp, sizeof r->csp, line, n, "Content-Security-Policy");
    return n;
}

struct chunk_src {
    const char *data;
    size_t len, pos;
};

static size_t on_read(char *buf, size_t size, size_t nmemb, void *user)
{
    struct chunk_src *src = user;
    size_t room = size * nmemb, left = src->len - src->pos;
    size_t take = left < room ? left : room;
    if (take > 65536)
        take = 65536;
    memcpy(buf, src->data + src->pos, take);
    src->pos += take;
    return take;
}

int lbt_http(struct lbt_reply *r, const char *method, const char *url, const char *cacert,
             const char *const *headers, const char *body, size_t len, int chunked)
{
    memset(r, 0, sizeof *r);
    CURL *c = curl_easy_init();
    if (!c)
        return -1;
    struct curl_slist *hl = NULL;
    for (size_t i = 0; headers && headers[i]; i++)
        hl = curl_slist_append(hl, headers[i]);
    int expect_given = 0;
    for (size_t i = 0; headers && headers[i]; i++)
        expect_given |= strncasecmp(headers[i], "Expect:", 7) == 0;
    if (!expect_given)
        hl = curl_slist_append(hl, "Expect:"); /* no 100-continue unless asked for */
    struct chunk_src src = {body, len, 0};
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
    if (cacert)
        curl_easy_setopt(c, CURLOPT_CAINFO, cacert);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
    if (body && chunked) {
        hl = curl_slist_append(hl, "Transfer-Encoding: chunked");
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
        curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
        curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
        curl_easy_setopt(c, CURLOPT_READDATA, &src);
    } else if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    } else if (strcmp(method, "GET") != 0) {
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    }
    CURLcode rc = curl_easy_perform(c);
    if (rc == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    curl_slist_free_all(hl);
    curl_easy_cleanup(c);
    if (!r->body) {
        r->body = calloc(1, 1);
    }
    return rc == CURLE_OK ? 0 : -1;
}

void lbt_reply_free(struct lbt_reply *r)
{
    free(r->body);
    memset(r, 0, sizeof *r);
}

long lbt_count(const char *base, const char *cacert)
{
    char url[256];
    snprintf(url, sizeof url, "%s/api/v1/results?limit=0", base);
    struct lbt_reply r;
    long total = -1;
    if (lbt_http(&r, "GET", url, cacert, NULL, NULL, 0, 0) == 0 && r.status == 200) {
        json_t *doc = json_loads(r.body, 0, NULL);
        if (json_is_integer(json_object_get(doc, "total")))
            total = (long)json_integer_value(json_object_get(doc, "total"));
        json_decref(doc);
    }
    lbt_reply_free(&r);
    return total;
}

/* The line `format` ("VmHWM: %lld kB") of /proc/pid/status, in bytes; -1 when unknown. */
static long long status_bytes(pid_t pid, const char *format)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    long long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, format, &kib) == 1)
            break;
    if (f)
        fclose(f);
    return kib < 0 ? -1 : kib * 1024;
}

long long lbt_peak_rss(pid_t pid)
{
    return status_bytes(pid, "VmHWM: %lld kB");
}

long long lbt_rss(pid_t pid)
{
    return status_bytes(pid, "VmRSS: %lld kB");
}

/* ---- PostgreSQL ---- */

int lbt_pg_start(struct lbt_pg *pg, const char *script)
{
    memset(pg, 0, sizeof *pg);
    char pid[32];
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    char *argv[] = {(char *)script, "start", pid, NULL};
    char out[1024];
    int rc = lbt_run(argv, NULL, out, sizeof out, 120);
    if (rc == 77)
        return 77;
    if (rc != 0 || sscanf(out, "%511s %299s", pg->url, pg->dir) != 2)
        return -1;
    return 0;
}

void lbt_pg_stop(struct lbt_pg *pg, const char *script)
{
    if (!pg->dir[0])
        return;
    char *argv[] = {(char *)script, "stop", pg->dir, NULL};
    lbt_run(argv, NULL, NULL, 0, 60);
    memset(pg, 0, sizeof *pg);
}
