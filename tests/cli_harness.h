/* Running this build's xpubench from a test (tests/test_cli.c, test_cuda_host.c,
 * test_report_cli.c, test_crash.c, test_info_program.c): the command's standard output and
 * error go to files in the test's scratch folder `tmpdir` (declared here, created by the
 * test's setup, make_tmpdir), read back whole. */
#ifndef XPB_TESTS_CLI_HARNESS_H
#define XPB_TESTS_CLI_HARNESS_H

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmpdir[256];

/* The whole file (an empty string when it cannot be read); the caller frees it. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return strdup("");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = calloc(1, (size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n)
        buf[0] = '\0';
    fclose(f);
    return buf;
}

/* Creates the scratch folder /tmp/<prefix>XXXXXX into tmpdir; 0, or -1. For a group setup. */
__attribute__((unused)) static int make_tmpdir(const char *prefix)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/%sXXXXXX", prefix);
    return mkdtemp(tmpdir) ? 0 : -1;
}

/* Removes the scratch folder and what is in it; 0, or -1. For a group teardown. */
__attribute__((unused)) static int remove_tmpdir(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Starts xpubench with args (NULL-terminated, without the program), its output into
 * tmpdir/stdout and tmpdir/stderr. */
static pid_t spawn(const char *const *args)
{
    char out[300], err[300];
    snprintf(out, sizeof out, "%s/stdout", tmpdir);
    snprintf(err, sizeof err, "%s/stderr", tmpdir);
    pid_t pid = fork();
    if (pid == 0) {
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(o, 1);
        dup2(e, 2);
        const char *argv[32] = {XPB_TEST_BINARY_DIR "/xpubench"};
        for (int i = 0; args[i] && i < 30; i++)
            argv[i + 1] = args[i];
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    return pid;
}

/* The exit code of pid (128 + the signal when one ended it). */
static int wait_exit(pid_t pid)
{
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Runs xpubench with the NULL-terminated arguments; returns its exit code; *out and *err (when
 * not NULL) get what it printed (the caller frees them). */
static int xpb(char **out, char **err, ...)
{
    const char *args[32];
    int n = 0;
    va_list ap;
    va_start(ap, err);
    for (const char *a; n < 31 && (a = va_arg(ap, const char *));)
        args[n++] = a;
    va_end(ap);
    args[n] = NULL;
    int rc = wait_exit(spawn(args));
    char path[300];
    if (out) {
        snprintf(path, sizeof path, "%s/stdout", tmpdir);
        *out = slurp(path);
    }
    if (err) {
        snprintf(path, sizeof path, "%s/stderr", tmpdir);
        *err = slurp(path);
    }
    return rc;
}

#endif
