/* xpb_atomic_write and xpb_atomic_create (which never replaces): content, permissions, parent
 * directories, and failures that leave the old file intact and no temporary file behind. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/atomic_file.h"

static char *make_temp_dir(void)
{
    const char *tmp = getenv("TMPDIR");
    char templ[512];
    snprintf(templ, sizeof templ, "%s/xpb_test_atomic_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    char *dir = mkdtemp(templ);
    assert_non_null(dir);
    return strdup(dir);
}

static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char path[1024];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
            chmod(path, 0700);
            remove_tree(path);
        } else {
            unlink(path);
        }
    }
    closedir(d);
    rmdir(dir);
}

/* The names in `dir`, sorted, joined by spaces ("" when empty). */
static void list_dir(char *out, size_t size, const char *dir)
{
    char names[32][256];
    size_t n = 0;
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < 32)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            snprintf(names[n++], sizeof names[0], "%s", e->d_name);
    closedir(d);
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (strcmp(names[j], names[i]) < 0) {
                char t[256];
                memcpy(t, names[i], sizeof t);
                memcpy(names[i], names[j], sizeof t);
                memcpy(names[j], t, sizeof t);
            }
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        strncat(out, i ? " " : "", size - strlen(out) - 1);
        strncat(out, names[i], size - strlen(out) - 1);
    }
}

static void expect_content(const char *path, const char *want)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    assert_int_equal(n, strlen(want));
    assert_string_equal(buf, want);
}

static mode_t current_umask(void)
{
    mode_t m = umask(022);
    umask(m);
    return m;
}

static void test_creates_file_and_parents(void **state)
{
    (void)state;
    char *dir = make_temp_dir();
    char path[1024], listing[1024];
    snprintf(path, sizeof path, "%s/a/b/c/out.json", dir);
    xpb_err err = {{0}};
    if (xpb_atomic_write(path, "hello\n", 6, &err) != XPB_OK)
        fail_msg("%s", err.msg);
    expect_content(path, "hello\n");
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0666 & ~current_umask());
    snprintf(path, sizeof path, "%s/a/b/c", dir);
    list_dir(listing, sizeof listing, path);
    assert_string_equal(listing, "out.json");
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISDIR(st.st_mode));

    /* Empty content is a valid file; a file name without a directory is relative to cwd. */
    snprintf(path, sizeof path, "%s/empty", dir);
    assert_int_equal(xpb_atomic_write(path, NULL, 0, &err), XPB_OK);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_size, 0);
    char cwd[PATH_MAX];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dir), 0);
    assert_int_equal(xpb_atomic_write("plain.txt", "x", 1, &err), XPB_OK);
    assert_int_equal(chdir(cwd), 0);
    snprintf(path, sizeof path, "%s/plain.txt", dir);
    expect_content(path, "x");

    /* A name of 255 bytes still works: the temporary name is shortened. */
    char name[256];
    memset(name, 'n', 255);
    name[255] = '\0';
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (xpb_atomic_write(path, "long", 4, &err) != XPB_OK)
        fail_msg("%s", err.msg);
    expect_content(path, "long");
    list_dir(listing, sizeof listing, dir);
    assert_non_null(strstr(listing, "a empty nnn"));
    assert_non_null(strstr(listing, "n plain.txt"));
    assert_null(strstr(listing, ".tmp"));

    remove_tree(dir);
    free(dir);
}

static void test_replaces_and_keeps_mode(void **state)
{
    (void)state;
    char *dir = make_temp_dir();
    char path[1024], listing[1024];
    snprintf(path, sizeof path, "%s/results.json", dir);
    xpb_err err = {{0}};
    assert_int_equal(xpb_atomic_write(path, "old content", 11, &err), XPB_OK);
    assert_int_equal(chmod(path, 0640), 0);
    assert_int_equal(xpb_atomic_write(path, "new", 3, &err), XPB_OK);
    expect_content(path, "new");
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    list_dir(listing, sizeof listing, dir);
    assert_string_equal(listing, "results.json");
    remove_tree(dir);
    free(dir);
}

/* xpb_atomic_create never replaces: not a file, a directory, a dangling link; what it creates
 * is complete, and nothing is left behind when it refuses. */
static void test_create_never_replaces(void **state)
{
    (void)state;
    char *dir = make_temp_dir();
    char path[1024], sub[1024], link_path[1024], listing[1024];
    snprintf(path, sizeof path, "%s/new/results.json", dir);
    xpb_err err = {{0}};
    assert_int_equal(xpb_atomic_create(path, "first", 5, &err), XPB_OK);
    expect_content(path, "first");
    assert_int_equal(xpb_atomic_create(path, "second", 6, &err), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(err.msg, "exists already"));
    expect_content(path, "first");
    snprintf(sub, sizeof sub, "%s/new", dir);
    list_dir(listing, sizeof listing, sub);
    assert_string_equal(listing, "results.json"); /* no temporary file left */
    assert_int_equal(xpb_atomic_create(sub, "x", 1, &err), XPB_INVALID_ARGUMENT);
    snprintf(link_path, sizeof link_path, "%s/dangling", dir);
    assert_int_equal(symlink("/nonexistent/target", link_path), 0);
    assert_int_equal(xpb_atomic_create(link_path, "x", 1, &err), XPB_INVALID_ARGUMENT);
    list_dir(listing, sizeof listing, dir);
    assert_string_equal(listing, "dangling new");
    remove_tree(dir);
    free(dir);
}

/* The target is a directory: the temporary file is written, the rename fails, the temporary
 * file must go and the directory stays. */
static void test_rename_failure_cleans_up(void **state)
{
    (void)state;
    char *dir = make_temp_dir();
    char path[1024], inner[1024], listing[1024];
    snprintf(path, sizeof path, "%s/target", dir);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(inner, sizeof inner, "%s/target/keep", dir);
    xpb_err err = {{0}};
    assert_int_equal(xpb_atomic_write(inner, "kept", 4, &err), XPB_OK);
    assert_int_equal(xpb_atomic_write(path, "data", 4, &err), XPB_IO_ERROR);
    assert_non_null(strstr(err.msg, path));
    assert_non_null(strstr(err.msg, "cannot replace"));
    list_dir(listing, sizeof listing, dir);
    assert_string_equal(listing, "target");
    expect_content(inner, "kept");
    remove_tree(dir);
    free(dir);
}

/* A write that fails half-way (file size limit, as a full disk would): old content intact. */
static void test_write_failure_keeps_old_file(void **state)
{
    (void)state;
    char *dir = make_temp_dir();
    char path[1024], listing[1024];
    snprintf(path, sizeof path, "%s/results.json", dir);
    xpb_err err = {{0}};
    assert_int_equal(xpb_atomic_write(path, "the old results", 15, &err), XPB_OK);

    static char big[65536];
    memset(big, 'x', sizeof big);
    struct rlimit old_limit, small;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
    small = old_limit;
    small.rlim_cur = 4096;
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    xpb_status st = xpb_atomic_write(path, big, sizeof big, &err);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old_limit), 0);
    signal(SIGXFSZ, old_handler);

    assert_int_equal(st, XPB_IO_ERROR);
    assert_non_null(strstr(err.msg, "cannot write"));
    assert_non_null(strstr(err.msg, strerror(EFBIG)));
    expect_content(path, "the old results");
    list_dir(listing, sizeof listing, dir);
    assert_string_equal(listing, "results.json");
    remove_tree(dir);
    free(dir);
}

/* Failures before any temporary file exists: a parent that is a regular file, bad names. */
static void test_create_failure(void **state)
{
    (void)state;
    char *dir = make_temp_dir();
    char path[1024], listing[1024];
    xpb_err err = {{0}};
    snprintf(path, sizeof path, "%s/file", dir);
    assert_int_equal(xpb_atomic_write(path, "f", 1, &err), XPB_OK);
    snprintf(path, sizeof path, "%s/file/sub/out.json", dir);
    assert_int_equal(xpb_atomic_write(path, "x", 1, &err), XPB_IO_ERROR);
    assert_non_null(strstr(err.msg, "cannot create directory"));
    assert_non_null(strstr(err.msg, strerror(ENOTDIR)));
    snprintf(path, sizeof path, "%s/file/out.json", dir);
    assert_int_equal(xpb_atomic_write(path, "x", 1, &err), XPB_IO_ERROR);
    assert_non_null(strstr(err.msg, "out.json"));

    /* Invalid names. */
    assert_int_equal(xpb_atomic_write("", "x", 1, &err), XPB_INVALID_ARGUMENT);
    snprintf(path, sizeof path, "%s/", dir);
    assert_int_equal(xpb_atomic_write(path, "x", 1, &err), XPB_INVALID_ARGUMENT);
    snprintf(path, sizeof path, "%s/nodata", dir);
    assert_int_equal(xpb_atomic_write(path, NULL, 1, &err), XPB_INVALID_ARGUMENT);
    list_dir(listing, sizeof listing, dir);
    assert_string_equal(listing, "file");

    remove_tree(dir);
    free(dir);
}

/* A directory the user may not write to: the temporary file cannot be created. Root may write
 * anywhere, so this case only runs for other users. */
static void test_readonly_directory(void **state)
{
    (void)state;
    if (geteuid() == 0)
        skip();
    char *dir = make_temp_dir();
    char ro[1024], path[1024], listing[1024];
    xpb_err err = {{0}};
    snprintf(ro, sizeof ro, "%s/ro", dir);
    assert_int_equal(mkdir(ro, 0755), 0);
    snprintf(path, sizeof path, "%s/ro/results.json", dir);
    assert_int_equal(xpb_atomic_write(path, "old", 3, &err), XPB_OK);
    assert_int_equal(chmod(ro, 0555), 0);
    assert_int_equal(xpb_atomic_write(path, "new", 3, &err), XPB_IO_ERROR);
    assert_non_null(strstr(err.msg, "temporary file"));
    assert_non_null(strstr(err.msg, strerror(EACCES)));
    expect_content(path, "old");
    list_dir(listing, sizeof listing, ro);
    assert_string_equal(listing, "results.json");
    remove_tree(dir);
    free(dir);
}

/* A device is never replaced, not even by root: /dev/null stays a character device. */
static void test_refuses_device(void **state)
{
    (void)state;
    xpb_err err = {{0}};
    assert_int_equal(xpb_atomic_write("/dev/null", "x", 1, &err), XPB_IO_ERROR);
    assert_non_null(strstr(err.msg, "not a regular file"));
    struct stat st;
    assert_int_equal(stat("/dev/null", &st), 0);
    assert_true(S_ISCHR(st.st_mode));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_creates_file_and_parents),
        cmocka_unit_test(test_replaces_and_keeps_mode),
        cmocka_unit_test(test_create_never_replaces),
        cmocka_unit_test(test_rename_failure_cleans_up),
        cmocka_unit_test(test_write_failure_keeps_old_file),
        cmocka_unit_test(test_create_failure),
        cmocka_unit_test(test_readonly_directory),
        cmocka_unit_test(test_refuses_device),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
