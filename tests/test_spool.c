/* The upload spool (core/spool.c): where it lives, entries written and read back intact,
 * damaged or foreign files never mistaken for entries, and a writer killed at random moments
 * never leaves a partial entry. */
#include <setjmp.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/sha256.h"
#include "publish/spool.h"

static char root[256];

static void rmtree(const char *path)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", path);
}

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "%s/xpb-spool-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    assert_non_null(mkdtemp(root));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    rmtree(root);
    return 0;
}

/* Spools `body` under its own hash; returns the entry's path in out. */
static void put(char *out, size_t cap, const char *dir, const char *body, const char *server)
{
    char key[65];
    xpb_sha256_hex(key, body, strlen(body));
    xpb_err err;
    assert_int_equal(xpb_spool_put(out, cap, dir, key, server, NULL, body, strlen(body), &err),
                     XPB_OK);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_location(void **state)
{
    (void)state;
    char dir[512];
    xpb_err err;
    char *old_xdg = getenv("XDG_DATA_HOME") ? strdup(getenv("XDG_DATA_HOME")) : NULL;
    char *old_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    setenv("XDG_DATA_HOME", "/data/xdg", 1);
    assert_int_equal(xpb_spool_dir(dir, sizeof dir, &err), XPB_OK);
    assert_string_equal(dir, "/data/xdg/xpubench/spool");
    setenv("XDG_DATA_HOME", "relative/ignored", 1); /* the XDG spec wants absolute paths */
    setenv("HOME", "/home/someone", 1);
    assert_int_equal(xpb_spool_dir(dir, sizeof dir, &err), XPB_OK);
    assert_string_equal(dir, "/home/someone/.local/share/xpubench/spool");
    unsetenv("XDG_DATA_HOME");
    unsetenv("HOME");
    assert_int_equal(xpb_spool_dir(dir, sizeof dir, &err), XPB_INVALID_ARGUMENT);
    char tiny[8];
    setenv("HOME", "/home/someone", 1);
    assert_int_equal(xpb_spool_dir(tiny, sizeof tiny, &err), XPB_INVALID_ARGUMENT);
    if (old_xdg)
        setenv("XDG_DATA_HOME", old_xdg, 1);
    if (old_home)
        setenv("HOME", old_home, 1);
    else
        unsetenv("HOME");
    free(old_xdg);
    free(old_home);
}

static void test_roundtrip(void **state)
{
    (void)state;
    char dir[512], path[1024];
    snprintf(dir, sizeof dir, "%s/a/b/spool", root);
    const char *body = "{\"schema\":\"xpubench-results\",\"x\":\"\\u00fc \\\" \\n\"}";
    char key[65];
    xpb_sha256_hex(key, body, strlen(body));
    xpb_err err;
    assert_int_equal(xpb_spool_put(path, sizeof path, dir, key, "https://lb.example:8443",
                                   "/etc/ca.pem", body, strlen(body), &err),
                     XPB_OK);
    struct stat st;
    assert_int_equal(stat(dir, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700); /* a new spool folder is private */
    char want[1024];
    snprintf(want, sizeof want, "%s/%s.json", dir, key);
    assert_string_equal(path, want);

    char **paths;
    size_t n;
    assert_int_equal(xpb_spool_list(&paths, &n, dir, &err), XPB_OK);
    assert_int_equal(n, 1);
    struct xpb_spool_entry e;
    assert_int_equal(xpb_spool_read(&e, paths[0], &err), XPB_OK);
    assert_string_equal(e.key, key);
    assert_string_equal(e.body, body);
    assert_int_equal(e.body_len, strlen(body));
    assert_string_equal(e.server, "https://lb.example:8443");
    assert_string_equal(e.cacert, "/etc/ca.pem");
    assert_int_equal(strlen(e.spooled), 20); /* 2026-01-01T00:00:00Z */
    assert_int_equal(e.spooled[19], 'Z');
    xpb_spool_entry_free(&e);
    xpb_spool_list_free(paths, n);

    /* the same results again are the same entry; other results are another */
    put(path, sizeof path, dir, body, "https://lb.example:8443");
    put(path, sizeof path, dir, "{\"other\":1}", "https://lb.example:8443");
    assert_int_equal(xpb_spool_list(&paths, &n, dir, &err), XPB_OK);
    assert_int_equal(n, 2);
    xpb_spool_list_free(paths, n);

    /* a key that does not match its body is refused */
    assert_int_equal(xpb_spool_put(NULL, 0, dir, key, "https://x", NULL, "{}", 2, &err),
                     XPB_INVALID_ARGUMENT);

    /* remove, twice */
    assert_int_equal(xpb_spool_remove(want, &err), XPB_OK);
    assert_int_equal(xpb_spool_remove(want, &err), XPB_OK);
    assert_int_equal(xpb_spool_list(&paths, &n, dir, &err), XPB_OK);
    assert_int_equal(n, 1);
    xpb_spool_list_free(paths, n);

    /* a missing folder is an empty spool */
    snprintf(dir, sizeof dir, "%s/never", root);
    assert_int_equal(xpb_spool_list(&paths, &n, dir, &err), XPB_OK);
    assert_int_equal(n, 0);
    assert_null(paths);
}

/* Issue 14: a CA file given relative to the current folder is stored absolute, so that a
 * flush from any other folder still finds it. */
static void test_cacert_absolute(void **state)
{
    (void)state;
    char dir[512], path[1024], ca[600], cwd[4096];
    snprintf(dir, sizeof dir, "%s/spool", root);
    snprintf(ca, sizeof ca, "%s/certs", root);
    assert_int_equal(mkdir(ca, 0700), 0);
    snprintf(ca, sizeof ca, "%s/certs/ca.pem", root);
    write_file(ca, "-----BEGIN CERTIFICATE-----\n");
    assert_non_null(getcwd(cwd, sizeof cwd));
    snprintf(path, sizeof path, "%s/certs", root);
    assert_int_equal(chdir(path), 0);
    const char *body = "{\"ca\":1}";
    char key[65];
    xpb_sha256_hex(key, body, strlen(body));
    xpb_err err;
    assert_int_equal(xpb_spool_put(path, sizeof path, dir, key, "https://x", "./ca.pem", body,
                                   strlen(body), &err),
                     XPB_OK);
    /* a file that does not exist (yet) is joined to the current folder */
    const char *body2 = "{\"ca\":2}";
    char key2[65], path2[1024];
    xpb_sha256_hex(key2, body2, strlen(body2));
    assert_int_equal(xpb_spool_put(path2, sizeof path2, dir, key2, "https://x", "later.pem", body2,
                                   strlen(body2), &err),
                     XPB_OK);
    assert_int_equal(chdir(cwd), 0);
    struct xpb_spool_entry e;
    char resolved[4096], want[4200];
    assert_non_null(realpath(ca, resolved));
    assert_int_equal(xpb_spool_read(&e, path, &err), XPB_OK);
    assert_string_equal(e.cacert, resolved);
    xpb_spool_entry_free(&e);
    assert_int_equal(xpb_spool_read(&e, path2, &err), XPB_OK);
    *strrchr(resolved, '/') = '\0'; /* the folder of ca.pem, where the flush ran */
    snprintf(want, sizeof want, "%s/later.pem", resolved);
    assert_string_equal(e.cacert, want);
    xpb_spool_entry_free(&e);
}

static void test_foreign_and_damaged(void **state)
{
    (void)state;
    char dir[512], path[1024], p[1200];
    snprintf(dir, sizeof dir, "%s/spool", root);
    put(path, sizeof path, dir, "{\"good\":1}", "https://x");
    /* files that are not entries */
    snprintf(p, sizeof p, "%s/.%s.1234.abc.tmp", dir, strrchr(path, '/') + 1);
    write_file(p, "{\"spool_version\":1,\"ke"); /* a write cut short by a crash */
    snprintf(p, sizeof p, "%s/notes.txt", dir);
    write_file(p, "hello");
    snprintf(p, sizeof p,
             "%s/ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789.json", dir);
    write_file(p, "{}");
    snprintf(p, sizeof p, "%s/rejected", dir);
    assert_int_equal(mkdir(p, 0700), 0);
    char **paths;
    size_t n;
    xpb_err err;
    assert_int_equal(xpb_spool_list(&paths, &n, dir, &err), XPB_OK);
    assert_int_equal(n, 1);
    assert_string_equal(paths[0], path);
    xpb_spool_list_free(paths, n);

    /* damaged entries are reported, never sent */
    struct xpb_spool_entry e;
    char bad[1200];
    const char *hex = "0000000000000000000000000000000000000000000000000000000000000000";
    snprintf(bad, sizeof bad, "%s/%s.json", dir, hex);
    write_file(bad, "{\"spool_version\":1,\"key\":\"00");
    assert_int_equal(xpb_spool_read(&e, bad, &err), XPB_PARSE_ERROR);
    assert_non_null(strstr(err.msg, "damaged"));
    char text[512];
    snprintf(text, sizeof text,
             "{\"spool_version\":1,\"key\":\"%s\",\"server\":\"https://x\",\"cacert\":null,"
             "\"spooled\":\"2026-01-01T00:00:00Z\",\"body\":\"{\\\"tampered\\\":1}\"}",
             hex);
    write_file(bad, text);
    assert_int_equal(xpb_spool_read(&e, bad, &err), XPB_PARSE_ERROR);
    assert_non_null(strstr(err.msg, "no longer match"));
    write_file(bad, "{\"spool_version\":2,\"key\":\"x\",\"body\":\"{}\"}");
    assert_int_equal(xpb_spool_read(&e, bad, &err), XPB_PARSE_ERROR);
    snprintf(bad, sizeof bad, "%s/missing.json", dir);
    assert_int_equal(xpb_spool_read(&e, bad, &err), XPB_IO_ERROR);
}

static void test_order_and_reject(void **state)
{
    (void)state;
    char dir[512], a[1024], b[1024], c[1024];
    snprintf(dir, sizeof dir, "%s/spool", root);
    put(a, sizeof a, dir, "{\"n\":1}", "https://x");
    put(b, sizeof b, dir, "{\"n\":2}", "https://x");
    put(c, sizeof c, dir, "{\"n\":3}", "https://x");
    /* oldest first, whatever the names */
    struct timespec times[2] = {{1000, 0}, {1000, 0}};
    utimensat(AT_FDCWD, c, times, 0);
    times[0].tv_sec = times[1].tv_sec = 2000;
    utimensat(AT_FDCWD, a, times, 0);
    times[0].tv_sec = times[1].tv_sec = 3000;
    utimensat(AT_FDCWD, b, times, 0);
    char **paths;
    size_t n;
    xpb_err err;
    assert_int_equal(xpb_spool_list(&paths, &n, dir, &err), XPB_OK);
    assert_int_equal(n, 3);
    assert_string_equal(paths[0], c);
    assert_string_equal(paths[1], a);
    assert_string_equal(paths[2], b);
    xpb_spool_list_free(paths, n);

    char moved[1024];
    assert_int_equal(xpb_spool_reject(moved, sizeof moved, dir, a, "runs[0]: bad", &err), XPB_OK);
    assert_non_null(strstr(moved, "/rejected/"));
    struct stat st;
    assert_int_equal(stat(moved, &st), 0);
    assert_int_not_equal(stat(a, &st), 0);
    char reason[1100];
    snprintf(reason, sizeof reason, "%.*s.reason.txt", (int)(strlen(moved) - 5), moved);
    FILE *f = fopen(reason, "r");
    assert_non_null(f);
    char line[128] = "";
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    assert_string_equal(line, "runs[0]: bad\n");
    assert_int_equal(xpb_spool_list(&paths, &n, dir, &err), XPB_OK);
    assert_int_equal(n, 2);
    xpb_spool_list_free(paths, n);
    assert_int_equal(xpb_spool_reject(NULL, 0, dir, "/etc/passwd", "x", &err),
                     XPB_INVALID_ARGUMENT);
}

/* Complete entries in the spool `dir` now. */
static size_t entries_in(const char *dir)
{
    char **paths;
    size_t n = 0;
    xpb_err err;
    if (xpb_spool_list(&paths, &n, dir, &err) != XPB_OK)
        return 0;
    xpb_spool_list_free(paths, n);
    return n;
}

/* A writer killed at random moments leaves only complete entries behind. */
static void test_killed_writer(void **state)
{
    (void)state;
    char dir[512];
    snprintf(dir, sizeof dir, "%s/spool", root);
    xpb_err err;
    assert_int_equal(xpb_spool_ensure(dir, &err), XPB_OK);
    static char body[256 * 1024];
    for (int round = 0; round < 6; round++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            for (int i = 0; i < 400; i++) {
                /* big bodies so that a kill often lands mid-write */
                size_t len = (size_t)snprintf(body, sizeof body,
                                              "{\"round\":%d,\"i\":%d,\"pad\":\"", round, i);
                memset(body + len, 'x', sizeof body - len - 3);
                memcpy(body + sizeof body - 3, "\"}", 3);
                char key[65];
                xpb_sha256_hex(key, body, strlen(body));
                if (xpb_spool_put(NULL, 0, dir, key, "https://x", NULL, body, strlen(body), &err) !=
                    XPB_OK)
                    _exit(1);
            }
            _exit(0);
        }
        /* Wait for this round's first complete entry (slow under sanitizers on a loaded
         * machine), then kill at a moment that varies from round to round. */
        size_t before = entries_in(dir), now = before;
        for (int wait = 0; wait < 20000 && now == before; wait++) {
            struct timespec ms = {0, 1000000L};
            nanosleep(&ms, NULL);
            now = entries_in(dir);
        }
        struct timespec ts = {0, (long)(1 + round * 5) * 1000000L};
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        int status;
        waitpid(pid, &status, 0);
    }
    char **paths;
    size_t n;
    assert_int_equal(xpb_spool_list(&paths, &n, dir, &err), XPB_OK);
    assert_true(n > 0);
    for (size_t i = 0; i < n; i++) {
        struct xpb_spool_entry e;
        if (xpb_spool_read(&e, paths[i], &err) != XPB_OK)
            fail_msg("entry %s is damaged: %s", paths[i], err.msg);
        assert_int_equal(e.body_len, sizeof body - 1);
        xpb_spool_entry_free(&e);
    }
    xpb_spool_list_free(paths, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_location),
        cmocka_unit_test_setup_teardown(test_roundtrip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cacert_absolute, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreign_and_damaged, setup, teardown),
        cmocka_unit_test_setup_teardown(test_order_and_reject, setup, teardown),
        cmocka_unit_test_setup_teardown(test_killed_writer, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
