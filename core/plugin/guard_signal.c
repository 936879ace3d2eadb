/* The handler of fatal signals (see guard.h): names a crash inside a plugin entry point and
 * leaves every other crash to the action it had before. Only async-signal-safe calls here:
 * write, _exit, sigaction, raise, pause. */
#include "plugin/guard.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
#define N_FATAL (sizeof fatal_signals / sizeof fatal_signals[0])

static struct sigaction previous[N_FATAL]; /* the actions before xpb_guard_install */
static volatile sig_atomic_t exit_code = 1;
static int installed;
static atomic_flag reporting = ATOMIC_FLAG_INIT;
/* The alternate stack the handler runs on, so that a plugin's stack overflow is named too
 * (static: SIGSTKSZ is no constant since glibc 2.34). */
static char alternate_stack[64 * 1024];

static void write_all(const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(STDERR_FILENO, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

static void on_fatal(int sig, siginfo_t *info, void *context)
{
    (void)context;
    char line[2 * XPB_GUARD_NAME_MAX + 2 * XPB_GUARD_TEXT_MAX + 128];
    size_t n = xpb_guard_crash_line(line, sizeof line, sig);
    if (n > 0) {
        /* Another thread crashing at the same time waits for the first one's _exit. */
        if (atomic_flag_test_and_set(&reporting))
            for (;;)
                pause();
        write_all(line, n);
        _exit(exit_code);
    }
    /* Not inside a plugin: the action from before. A fault returns to the faulting
     * instruction, which faults again and meets that action with its own context; a signal
     * that was sent (raise, abort, kill) is sent again. */
    for (size_t i = 0; i < N_FATAL; i++)
        if (fatal_signals[i] == sig)
            sigaction(sig, &previous[i], NULL);
    if (!info || info->si_code <= 0)
        raise(sig);
}

int xpb_guard_install(int code)
{
    exit_code = code;
    if (installed)
        return 0;
    stack_t current;
    if (sigaltstack(NULL, &current) == 0 && (current.ss_flags & SS_DISABLE)) {
        stack_t ours = {.ss_sp = alternate_stack, .ss_size = sizeof alternate_stack};
        (void)sigaltstack(&ours, NULL); /* without it only a stack overflow goes unnamed */
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fatal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < N_FATAL; i++)
        sigaddset(&sa.sa_mask, fatal_signals[i]); /* a fault in the handler kills at once */
    for (size_t i = 0; i < N_FATAL; i++)
        if (sigaction(fatal_signals[i], &sa, &previous[i]) != 0)
            return -1;
    installed = 1;
    return 0;
}
