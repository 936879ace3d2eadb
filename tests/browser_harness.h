/* What the tests that open a report in headless Chromium share (test_report_browser.c,
 * test_report_paradnn.c): finding the browser, running a program with its output in files, the
 * browser on a page with one mode flag, reading a file, and the end of a log as a failure.
 * Every function is static inline; include it after <cmocka.h>. */
#ifndef XPB_TESTS_BROWSER_HARNESS_H
#define XPB_TESTS_BROWSER_HARNESS_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Debian's Chromium, or $XPB_TEST_CHROMIUM; NULL when there is none (static storage). */
static inline const char *bh_find_chromium(void)
{
    static const char *const candidates[] = {"/usr/bin/chromium", "/usr/bin/chromium-browser"};
    const char *env = getenv("XPB_TEST_CHROMIUM");
    if (env && access(env, X_OK) == 0)
        return env;
    for (size_t i = 0; i < 2; i++)
        if (access(candidates[i], X_OK) == 0)
            return candidates[i];
    return NULL;
}

/* Runs argv with stdout to `out` (NULL: /dev/null) and stderr to <dir>/<log>; exit status. */
static inline int bh_run(const char *dir, char *const argv[], const char *out, const char *log)
{
    char log_path[320];
    snprintf(log_path, sizeof log_path, "%s/%s", dir, log);
    pid_t pid = fork();
    if (pid == 0) {
        int o = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(o, 1);
        dup2(e, 2);
        execv(argv[0], argv);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Headless `chromium` on `url` with one mode flag (--dump-dom, --screenshot=...), its profile
 * in <dir>/profile and its log in <dir>/chromium.log; exit status. */
static inline int bh_chromium(const char *chromium, const char *dir, const char *url,
                              const char *mode_flag, const char *window, const char *out)
{
    char profile_flag[320];
    snprintf(profile_flag, sizeof profile_flag, "--user-data-dir=%s/profile", dir);
    char *argv[] = {(char *)chromium,
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--no-first-run",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    "--disable-extensions",
                    "--disable-dev-shm-usage",
                    "--hide-scrollbars",
                    "--proxy-server=127.0.0.1:9", /* no network: the page must not need one */
                    (char *)window,
                    profile_flag,
                    (char *)mode_flag,
                    (char *)url,
                    NULL};
    return bh_run(dir, argv, out, "chromium.log");
}

/* The first `max` bytes of path, NUL-terminated; the caller frees them. */
static inline char *bh_slurp(const char *path, size_t max)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *buf = malloc(max + 1);
    assert_non_null(buf);
    size_t n = fread(buf, 1, max, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Fails the test with the end of <dir>/<log>. */
static inline void bh_fail_with_log(const char *dir, const char *what, const char *log)
{
    char path[320];
    snprintf(path, sizeof path, "%s/%s", dir, log);
    static char tail[3001];
    char *text = bh_slurp(path, 1u << 20);
    size_t len = strlen(text);
    snprintf(tail, sizeof tail, "%s", text + (len > 3000 ? len - 3000 : 0));
    free(text);
    fail_msg("%s; the end of its output:\n%s", what, tail);
}

/* Runs scenario `scenario` (a path) shortened to two quick repeats into `results` (or takes
 * $XPB_TEST_REPORT_RESULTS, copied into `results`, of `size` bytes) and writes its HTML report
 * to `html`; fails the test with the end of the log when either command fails. */
static inline void bh_quick_report(const char *dir, const char *scenario, char *results,
                                   size_t size, const char *html)
{
    char *run[] = {XPB_TEST_BINARY_DIR "/xpubench",
                   "run",
                   (char *)scenario,
                   "-o",
                   results,
                   "--set",
                   "repeats=2",
                   "--set",
                   "min_steps=1",
                   "--set",
                   "min_time=0",
                   "--set",
                   "warmup=0",
                   NULL};
    const char *given = getenv("XPB_TEST_REPORT_RESULTS");
    if (given)
        snprintf(results, size, "%s", given);
    else if (bh_run(dir, run, NULL, "run.log") != 0)
        bh_fail_with_log(dir, "xpubench run of the scenario failed", "run.log");
    char *report[] = {XPB_TEST_BINARY_DIR "/xpubench", "report", results, "-o", (char *)html, NULL};
    if (bh_run(dir, report, NULL, "report.log") != 0)
        bh_fail_with_log(dir, "xpubench report failed", "report.log");
}

/* How often needle occurs in hay. */
static inline size_t bh_count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

#endif
