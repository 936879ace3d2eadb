/* core/plugin/guard.h: the record of which plugin entry point is running, the crash line made
 * from it, and the handler that names a fatal signal inside a recorded call (in a child
 * process) while leaving any other one to the action it had. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "plugin/guard.h"

/* Two function tables to name (only their addresses matter). */
static const int api_x = 1, api_y = 2;

static void reset(void)
{
    xpb_guard_leave();
    xpb_guard_activity(NULL);
    xpb_guard_epilogue(NULL);
}

static char line[4096];

static const char *crash_line(int sig)
{
    xpb_guard_crash_line(line, sizeof line, sig);
    return line;
}

static void test_nothing_recorded(void **state)
{
    (void)state;
    reset();
    strcpy(line, "old");
    assert_int_equal(xpb_guard_crash_line(line, sizeof line, SIGSEGV), 0);
    assert_string_equal(line, "");
    xpb_guard_activity("during list");
    assert_int_equal(xpb_guard_crash_line(line, sizeof line, SIGSEGV), 0);
}

static void test_line_names_plugin_entry_activity(void **state)
{
    (void)state;
    reset();
    xpb_guard_name(&api_x, "backend", "vendor_x");
    xpb_guard_enter(&api_x, "compile");
    assert_string_equal(crash_line(SIGSEGV),
                        "xpubench: crash (SIGSEGV) in backend 'vendor_x', entry point compile\n");
    xpb_guard_leave();
    xpb_guard_activity("during conformance case '%s'", "conv2d_bwd_data 3x3 s2");
    xpb_guard_epilogue("rows above were kept");
    xpb_guard_enter(&api_x, "compile");
    size_t n = xpb_guard_crash_line(line, sizeof line, SIGSEGV);
    assert_string_equal(line, "xpubench: crash (SIGSEGV) in backend 'vendor_x', entry point "
                              "compile, during conformance case 'conv2d_bwd_data 3x3 s2' - rows "
                              "above were kept\n");
    assert_int_equal(n, strlen(line));
    assert_string_equal(crash_line(SIGBUS), "xpubench: crash (SIGBUS) in backend 'vendor_x', "
                                            "entry point compile, during conformance case "
                                            "'conv2d_bwd_data 3x3 s2' - rows above were kept\n");
    xpb_guard_leave();
    assert_int_equal(xpb_guard_crash_line(line, sizeof line, SIGSEGV), 0);
    xpb_guard_forget(&api_x);
    reset();
}

static void test_signal_names(void **state)
{
    (void)state;
    reset();
    xpb_guard_name(&api_x, "model", "conv6");
    xpb_guard_enter(&api_x, "build");
    static const struct {
        int sig;
        const char *name;
    } cases[] = {{SIGSEGV, "(SIGSEGV)"}, {SIGBUS, "(SIGBUS)"},   {SIGFPE, "(SIGFPE)"},
                 {SIGILL, "(SIGILL)"},   {SIGABRT, "(SIGABRT)"}, {SIGUSR1, "(signal 10)"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        crash_line(cases[i].sig);
        assert_non_null(strstr(line, cases[i].name));
        assert_non_null(strstr(line, "in model 'conv6', entry point build\n"));
    }
    xpb_guard_forget(&api_x);
    reset();
}

/* A table nobody named, a file being loaded, and names counted per registry. */
static void test_unnamed_file_and_forget(void **state)
{
    (void)state;
    reset();
    xpb_guard_enter(&api_y, "run");
    assert_string_equal(crash_line(SIGSEGV),
                        "xpubench: crash (SIGSEGV) in plugin '?', entry point run\n");
    xpb_guard_enter_file("/opt/x/vendor_x.so", "xpb_plugin_query");
    xpb_guard_activity("while loading plugins");
    assert_string_equal(crash_line(SIGSEGV), "xpubench: crash (SIGSEGV) in plugin file "
                                             "'/opt/x/vendor_x.so', entry point xpb_plugin_query, "
                                             "while loading plugins\n");
    xpb_guard_activity(NULL);
    /* the same .so in two registries: named until both forgot it */
    xpb_guard_name(&api_y, "backend", "twice");
    xpb_guard_name(&api_y, "backend", "twice");
    xpb_guard_forget(&api_y);
    xpb_guard_enter(&api_y, "run");
    assert_non_null(strstr(crash_line(SIGSEGV), "in backend 'twice'"));
    xpb_guard_forget(&api_y);
    xpb_guard_enter(&api_y, "run");
    assert_non_null(strstr(crash_line(SIGSEGV), "in plugin '?'"));
    /* the program room's observer form */
    xpb_guard_name(&api_y, "backend", "observed");
    xpb_guard_call(&api_y, "write");
    assert_non_null(strstr(crash_line(SIGSEGV), "in backend 'observed', entry point write\n"));
    xpb_guard_call(&api_y, NULL);
    assert_int_equal(xpb_guard_crash_line(line, sizeof line, SIGSEGV), 0);
    xpb_guard_forget(&api_y);
    reset();
}

/* A line longer than the buffer is cut and still ends the line. */
static void test_cut_short(void **state)
{
    (void)state;
    reset();
    char small[40];
    xpb_guard_name(&api_x, "backend", "a_backend_with_a_rather_long_name");
    xpb_guard_enter(&api_x, "compile");
    size_t n = xpb_guard_crash_line(small, sizeof small, SIGSEGV);
    assert_int_equal(n, sizeof small - 1);
    assert_int_equal(strlen(small), n);
    assert_int_equal(small[n - 1], '\n');
    assert_int_equal(strncmp(small, "xpubench: crash (SIGSEGV) in backend", 36), 0);
    assert_int_equal(xpb_guard_crash_line(small, 1, SIGSEGV), 0);
    xpb_guard_forget(&api_x);
    reset();
}

/* ---- the handler, in child processes ---- */

#define CHILD_EXIT 77

enum how { RAISE_SEGV, RAISE_FPE, ABORT, NULL_STORE };

__attribute__((no_sanitize("address", "undefined"))) static void fault(enum how how)
{
    volatile uintptr_t address = 0;
    switch (how) {
    case RAISE_SEGV:
        raise(SIGSEGV);
        break;
    case RAISE_FPE:
        raise(SIGFPE);
        break;
    case ABORT:
        abort();
    case NULL_STORE:
        *(volatile int *)address = 1;
        break;
    }
}

/* Runs `how` in a child with the handler installed, inside a recorded call when `inside`; the
 * child's wait status, and what it wrote to stderr into `err`. */
static int child(enum how how, int inside, char *err, size_t err_size)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        /* cmocka's own handlers would be "the action from before" */
        static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
        for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
            signal(fatal[i], SIG_DFL);
        if (xpb_guard_install(CHILD_EXIT) != 0)
            _exit(3);
        xpb_guard_name(&api_x, "backend", "vendor_x");
        xpb_guard_activity("during run '[1/1] test'");
        if (inside)
            xpb_guard_enter(&api_x, "run");
        fault(how);
        _exit(0); /* not reached */
    }
    close(fds[1]);
    size_t n = 0;
    ssize_t r;
    while (n + 1 < err_size && (r = read(fds[0], err + n, err_size - 1 - n)) > 0)
        n += (size_t)r;
    err[n] = '\0';
    close(fds[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return status;
}

static void test_handler_inside_a_plugin(void **state)
{
    (void)state;
    static const struct {
        enum how how;
        const char *sig;
    } cases[] = {{RAISE_SEGV, "SIGSEGV"},
                 {NULL_STORE, "SIGSEGV"},
                 {RAISE_FPE, "SIGFPE"},
                 {ABORT, "SIGABRT"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[2048], want[256];
        int status = child(cases[i].how, 1, err, sizeof err);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), CHILD_EXIT);
        snprintf(want, sizeof want,
                 "xpubench: crash (%s) in backend 'vendor_x', entry point run, during run "
                 "'[1/1] test'\n",
                 cases[i].sig);
        assert_non_null(strstr(err, want));
    }
}

/* Outside a recorded call the signal gets the action it had before the handler: without
 * sanitizers the default one, so the process dies of the signal, as it would have. */
static void test_handler_outside_a_plugin(void **state)
{
    (void)state;
    static const enum how hows[] = {RAISE_SEGV, NULL_STORE, ABORT};
    static const int sigs[] = {SIGSEGV, SIGSEGV, SIGABRT};
    for (size_t i = 0; i < sizeof hows / sizeof hows[0]; i++) {
        char err[4096];
        int status = child(hows[i], 0, err, sizeof err);
        assert_null(strstr(err, "xpubench: crash"));
        assert_false(WIFEXITED(status) && WEXITSTATUS(status) == CHILD_EXIT);
#if !defined(__SANITIZE_ADDRESS__)
        assert_true(WIFSIGNALED(status));
        assert_int_equal(WTERMSIG(status), sigs[i]);
#else
        (void)sigs;
#endif
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nothing_recorded),
        cmocka_unit_test(test_line_names_plugin_entry_activity),
        cmocka_unit_test(test_signal_names),
        cmocka_unit_test(test_unnamed_file_and_forget),
        cmocka_unit_test(test_cut_short),
        cmocka_unit_test(test_handler_inside_a_plugin),
        cmocka_unit_test(test_handler_outside_a_plugin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
