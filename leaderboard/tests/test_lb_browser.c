/* The leaderboard page in a real browser: Debian's Chromium, headless, against the service
 * over HTTPS on 127.0.0.1 (the test's certificate is pinned with
 * --ignore-certificate-errors-spki-list, so only that certificate is accepted). The page must
 * render, list every submission, sort on the server (?sort=) and in the browser (#sort=, run
 * by lb.js), and screenshots are kept in <build>/artifacts. Exits 77 (skipped) when chromium
 * is not installed. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "lbt_support.h"
#include "publish/upload.h"
#include "results/results.h"

#define N_SUBMISSIONS 5

static struct {
    const char *chromium;
    char root[256], data[300], certs[300], profile[300];
    char ca[400], cert[400], key[400], spki[64], spki_flag[128], profile_flag[360];
    char token[128];
    struct lbt_server server;
} g;

static const char *find_chromium(void)
{
    const char *env = getenv("LBT_CHROMIUM");
    if (env && access(env, X_OK) == 0)
        return env;
    static const char *const candidates[] = {"/usr/bin/chromium", "/usr/bin/chromium-browser",
                                             NULL};
    for (size_t i = 0; candidates[i]; i++)
        if (access(candidates[i], X_OK) == 0)
            return candidates[i];
    return NULL;
}

/* Runs headless Chromium on url with one more mode flag (--dump-dom or --screenshot=...). The
 * DOM (stdout) goes to out. Returns the exit status. */
static int chromium(char *out, size_t cap, const char *mode_flag, const char *url)
{
    char *argv[] = {(char *)g.chromium,
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-quic",
                    "--no-first-run",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    "--disable-extensions",
                    "--disable-dev-shm-usage",
                    "--hide-scrollbars",
                    "--window-size=1366,1700",
                    g.profile_flag,
                    g.spki_flag,
                    (char *)mode_flag,
                    (char *)url,
                    NULL};
    static char sink[1 << 20];
    return lbt_run(argv, NULL, out ? out : sink, out ? cap : sizeof sink, 90);
}

static int group_setup(void **state)
{
    (void)state;
    signal(SIGPIPE, SIG_IGN);
    assert_int_equal(lbt_tempdir(g.root, sizeof g.root, "lbbrowser"), 0);
    snprintf(g.data, sizeof g.data, "%s/data", g.root);
    snprintf(g.certs, sizeof g.certs, "%s/certs", g.root);
    snprintf(g.profile, sizeof g.profile, "%s/profile", g.root);
    assert_int_equal(mkdir(g.certs, 0700), 0);
    assert_int_equal(mkdir(g.profile, 0700), 0);
    assert_int_equal(lbt_make_certs(g.certs, g.spki), 0);
    snprintf(g.ca, sizeof g.ca, "%s/ca.pem", g.certs);
    snprintf(g.cert, sizeof g.cert, "%s/server.pem", g.certs);
    snprintf(g.key, sizeof g.key, "%s/server.key", g.certs);
    snprintf(g.spki_flag, sizeof g.spki_flag, "--ignore-certificate-errors-spki-list=%s", g.spki);
    snprintf(g.profile_flag, sizeof g.profile_flag, "--user-data-dir=%s", g.profile);
    assert_int_equal(lbt_server_start(&g.server, LBT_SERVER_BIN, g.data, g.cert, g.key, 0, NULL),
                     0);
    assert_int_equal(lbt_make_token(g.token, sizeof g.token, LBT_SERVER_BIN, g.data, "ci-lab"), 0);

    /* five machines: two GPUs, three CPUs, one with a hostile name */
    static const struct {
        const char *cpu, *acc, *backend, *device;
        double tp, step, spj;
    } machines[N_SUBMISSIONS] = {
        {"Intel Xeon Gold 6248", "NVIDIA Tesla T4", "cuda", "NVIDIA Tesla T4", 24600, 0.0026, 310},
        {"AMD EPYC 7763", "NVIDIA A100-SXM4-40GB", "cuda", "NVIDIA A100-SXM4-40GB", 98000, 0.00065,
         520},
        {"Intel Xeon Gold 6248", NULL, "cpu_onednn", "Intel Xeon Gold 6248", 100, 0.64, 0},
        {"AMD Ryzen 9 7950X", NULL, "cpu_onednn", "AMD Ryzen 9 7950X <img src=x>", 420, 0.152, 0},
        {"Apple-ish M2", NULL, "cpu_ref", "Apple-ish M2", 12, 5.3, 0},
    };
    struct xpb_upload_opts opts;
    xpb_upload_opts_init(&opts);
    opts.server = g.server.url;
    opts.cacert = g.ca;
    opts.token = g.token;
    for (unsigned i = 0; i < N_SUBMISSIONS; i++) {
        struct lbt_run runs[2] = {
            {"conv6-train", "conv6", "cifar", "train", "fp32", machines[i].backend,
             machines[i].device, 64, machines[i].tp, machines[i].step, machines[i].spj, NULL},
            {"resnet18-infer", "resnet18", "cifar", "inference", "fp32", machines[i].backend,
             machines[i].device, 128, machines[i].tp / 3, machines[i].step * 1.5, 0, NULL},
        };
        json_t *doc = lbt_doc(machines[i].cpu, machines[i].acc, runs, 2, i);
        char *text, key[65];
        size_t len;
        xpb_err err;
        assert_int_equal(xpb_results_canonical(&text, &len, key, doc, &err), XPB_OK);
        struct xpb_upload_reply reply;
        assert_int_equal(xpb_upload_post(&reply, &opts, text, len, key, &err), XPB_OK);
        assert_int_equal(reply.outcome, XPB_UPLOAD_CREATED);
        free(text);
        json_decref(doc);
    }
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    if (g.server.pid > 0)
        lbt_server_stop(&g.server, 0);
    if (!getenv("LBT_KEEP"))
        lbt_rmtree(g.root);
    return 0;
}

/* The first table of the conv6 ranking in a dumped DOM, as a NUL-terminated copy. */
static char *conv6_table(const char *dom)
{
    const char *sec = strstr(dom, "id=\"g-conv6-cifar-train-fp32\"");
    assert_non_null(sec);
    const char *start = strstr(sec, "<tbody>");
    const char *end = start ? strstr(start, "</tbody>") : NULL;
    assert_non_null(end);
    size_t n = (size_t)(end - start);
    char *t = malloc(n + 1);
    memcpy(t, start, n);
    t[n] = '\0';
    return t;
}

/* The data-v of column `col` (0-based) of each row of a tbody, in order. */
static int column_values(double *out, int max, const char *tbody, int col)
{
    int n = 0;
    for (const char *row = strstr(tbody, "<tr"); row && n < max; row = strstr(row + 1, "<tr")) {
        const char *cell = row;
        for (int c = 0; c <= col; c++)
            cell = strstr(cell + 1, "<td");
        assert_non_null(cell);
        const char *v = strstr(cell, "data-v=\"");
        assert_non_null(v);
        out[n++] = strtod(v + 8, NULL);
    }
    return n;
}

static void test_renders_and_lists(void **state)
{
    (void)state;
    static char dom[1 << 20];
    char url[256];
    snprintf(url, sizeof url, "%s/", g.server.url);
    assert_int_equal(chromium(dom, sizeof dom, "--dump-dom", url), 0);
    assert_non_null(strstr(dom, "data-js=\"ready\"")); /* lb.js ran (CSP allowed it) */
    assert_non_null(strstr(dom, "Deep-learning training and inference, ranked"));
    char *table = conv6_table(dom);
    double tp[16];
    assert_int_equal(column_values(tp, 16, table, 1), N_SUBMISSIONS); /* every submission */
    for (int i = 1; i < N_SUBMISSIONS; i++)
        assert_true(tp[i - 1] >= tp[i]); /* ranked: fastest first */
    assert_true(tp[0] == 98000);
    assert_non_null(strstr(table, "NVIDIA A100-SXM4-40GB"));
    assert_non_null(strstr(table, "&lt;img src=x&gt;")); /* shown as text, not an element */
    assert_null(strstr(dom, "<img src=\"x\""));
    free(table);
    for (int id = 1; id <= N_SUBMISSIONS; id++) {
        char link[64];
        snprintf(link, sizeof link, "href=\"/submissions/%d\"", id);
        assert_non_null(strstr(dom, link));
    }
}

static void test_server_sort(void **state)
{
    (void)state;
    static char dom[1 << 20];
    char url[256];
    snprintf(url, sizeof url, "%s/?sort=throughput&dir=asc", g.server.url);
    assert_int_equal(chromium(dom, sizeof dom, "--dump-dom", url), 0);
    char *table = conv6_table(dom);
    double tp[16];
    assert_int_equal(column_values(tp, 16, table, 1), N_SUBMISSIONS);
    for (int i = 1; i < N_SUBMISSIONS; i++)
        assert_true(tp[i - 1] <= tp[i]);
    assert_true(tp[0] == 12);
    free(table);
}

static void test_browser_sort(void **state)
{
    (void)state;
    static char dom[1 << 20];
    char url[256];
    /* the server sends the default order; lb.js applies the fragment's sort */
    snprintf(url, sizeof url, "%s/#sort=step:desc", g.server.url);
    assert_int_equal(chromium(dom, sizeof dom, "--dump-dom", url), 0);
    assert_non_null(strstr(dom, "data-sorted=\"step:desc\""));
    char *table = conv6_table(dom);
    double step[16];
    assert_int_equal(column_values(step, 16, table, 2), N_SUBMISSIONS);
    for (int i = 1; i < N_SUBMISSIONS; i++)
        assert_true(step[i - 1] >= step[i]);
    assert_true(step[0] == 5.3);
    free(table);
    /* sort buttons replaced the no-script links */
    assert_non_null(strstr(dom, "<button type=\"button\" class=\"sort\">"));
}

/* 1 when path is a PNG of at least min_bytes. */
static int is_png(const char *path, long min_bytes)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    unsigned char magic[8];
    size_t n = fread(magic, 1, 8, f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    return n == 8 && !memcmp(magic, "\x89PNG\r\n\x1a\n", 8) && size >= min_bytes;
}

static void test_screenshots(void **state)
{
    (void)state;
    mkdir(LBT_ARTIFACT_DIR, 0755);
    static const struct {
        const char *path, *file;
    } shots[] = {
        {"/", "leaderboard.png"},
        {"/submissions/2", "leaderboard-submission.png"},
        {"/compare?a=1&b=3", "leaderboard-compare.png"},
    };
    for (size_t i = 0; i < sizeof shots / sizeof shots[0]; i++) {
        char url[256], file[512], flag[600];
        snprintf(url, sizeof url, "%s%s", g.server.url, shots[i].path);
        snprintf(file, sizeof file, "%s/%s", LBT_ARTIFACT_DIR, shots[i].file);
        snprintf(flag, sizeof flag, "--screenshot=%s", file);
        unlink(file);
        assert_int_equal(chromium(NULL, 0, flag, url), 0);
        if (!is_png(file, 20000))
            fail_msg("%s is not a PNG of a rendered page", file);
        printf("screenshot: %s\n", file);
    }
}

int main(void)
{
    g.chromium = find_chromium();
    if (!g.chromium) {
        printf("SKIP: chromium is not installed (apt-get install chromium); the browser test "
               "did not run\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_renders_and_lists),
        cmocka_unit_test(test_server_sort),
        cmocka_unit_test(test_browser_sort),
        cmocka_unit_test(test_screenshots),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
