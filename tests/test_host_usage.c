/* Interference and memory of a run: per-CPU /proc/stat parsing, CPU sets, the share others
 * took of what a run of 1 or 2 threads needed of its CPUs between two samples (on made-up
 * counters, and with a real busy neighbour), and the resident-set peak reset. */
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/clock.h"
#include "machine/host_usage.h"

static void test_parse(void **state)
{
    (void)state;
    const char *text = "cpu  100 5 50 1000 20 3 2 7 11 0\n"
                       "cpu0 50 2 25 500 10 1 1 3 5 0\n"
                       "cpu1 50 3 25 500 10 2 1 4 6 0\n"
                       "cpu3 1 1 1 1 1 1 1 1\n"
                       "intr 12345\nctxt 999\n";
    static double busy[XPB_CPU_MAX], steal[XPB_CPU_MAX];
    struct xpb_cpu_set seen;
    assert_int_equal(xpb_proc_stat_parse(text, busy, steal, &seen), 0);
    /* user + nice + system + irq + softirq + steal; idle, iowait and guest are not added */
    assert_true(busy[0] == 50 + 2 + 25 + 1 + 1 + 3);
    assert_true(busy[1] == 50 + 3 + 25 + 2 + 1 + 4);
    assert_true(steal[1] == 4 && busy[3] == 6);
    assert_int_equal(xpb_cpu_set_count(&seen), 3); /* cpu2 is off-line: no line */
    assert_true(xpb_cpu_set_has(&seen, 3) && !xpb_cpu_set_has(&seen, 2));
    assert_int_equal(xpb_proc_stat_parse("cpu  1 2 3 4\nintr 1\n", busy, steal, &seen), -1);
}

static void test_cpu_set(void **state)
{
    (void)state;
    struct xpb_cpu_set a = {{0}}, b = {{0}};
    xpb_cpu_set_add(&a, 0);
    xpb_cpu_set_add(&a, 65);
    xpb_cpu_set_add(&a, XPB_CPU_MAX); /* out of range: ignored */
    xpb_cpu_set_add(&b, 65);
    xpb_cpu_set_add(&b, 1023);
    xpb_cpu_set_union(&a, &b);
    assert_int_equal(xpb_cpu_set_count(&a), 3);
    assert_true(xpb_cpu_set_has(&a, 1023) && !xpb_cpu_set_has(&a, 64) && !xpb_cpu_set_has(&a, -1));
    struct xpb_cpu_set mine;
    assert_int_equal(xpb_cpu_set_mine(&mine), 0);
    assert_true(xpb_cpu_set_count(&mine) >= 1);
}

/* Two samples 2 s apart of CPUs 0 and 1, the run having used `self` CPU-seconds and CPU i
 * having been busy busy[i] CPU-seconds in all; returned in *out (owned by the caller, free). */
static xpb_cpu_sample *samples(double busy0, double busy1, double steal1, double self)
{
    xpb_cpu_sample *s = calloc(2, sizeof *s);
    assert_non_null(s);
    for (int k = 0; k < 2; k++) {
        xpb_cpu_set_add(&s[k].online, 0);
        xpb_cpu_set_add(&s[k].online, 1);
        s[k].valid = 1;
        s[k].wall_s = 100 + 2 * k;
        s[k].busy_s[0] = 10 + k * busy0;
        s[k].busy_s[1] = 20 + k * busy1;
        s[k].steal_s[1] = 1 + k * steal1;
        s[k].self_s = 5 + k * self;
    }
    return s;
}

static void test_between(void **state)
{
    (void)state;
    xpb_interference in;
    /* a run of two threads on both CPUs: others took 1 CPU-s of its 2 x 2 s */
    xpb_cpu_sample *s = samples(2, 2, 0.5, 3);
    xpb_interference_between(&in, &s[0], &s[1], NULL, 2);
    assert_int_equal(in.cpus, 2);
    assert_true(in.needed == 2);
    assert_true(fabs(in.other_share - 0.25) < 1e-12);
    assert_true(fabs(in.steal_share - 0.125) < 1e-12);
    assert_true(in.flagged);
    free(s);
    /* one thread on two CPUs while a busy loop held the other: the run lost nothing */
    s = samples(2, 1.98, 0, 1.98);
    xpb_interference_between(&in, &s[0], &s[1], NULL, 1);
    assert_true(in.needed == 1);
    assert_true(in.other_share == 0 && !in.flagged);
    /* ... but as many threads as CPUs (0: unknown) would have lost half of their time */
    xpb_interference_between(&in, &s[0], &s[1], NULL, 0);
    assert_true(fabs(in.other_share - 0.5) < 1e-12 && in.flagged);
    free(s);
    /* one thread, and others took 0.3 CPU-s beyond the CPU it left them: 15% */
    s = samples(2, 2, 0, 1.7);
    xpb_interference_between(&in, &s[0], &s[1], NULL, 1);
    assert_true(fabs(in.other_share - 0.15) < 1e-12 && in.flagged);
    free(s);
    /* a run pinned to CPU 1: CPU 0's busy loop is none of its business */
    s = samples(2, 2, 0, 1.99);
    struct xpb_cpu_set one = {{0}};
    xpb_cpu_set_add(&one, 1);
    xpb_interference_between(&in, &s[0], &s[1], &one, 1);
    assert_int_equal(in.cpus, 1);
    assert_true(fabs(in.other_share - 0.005) < 1e-12 && !in.flagged);
    /* more threads than CPUs need all of them */
    xpb_interference_between(&in, &s[0], &s[1], &one, 8);
    assert_true(in.needed == 1);
    s[1].valid = 0;
    xpb_interference_between(&in, &s[0], &s[1], NULL, 1);
    assert_true(isnan(in.other_share));
    assert_false(in.flagged);
    free(s);
}

/* A child that keeps one CPU busy is seen by the real counters. */
static void test_busy_neighbour(void **state)
{
    (void)state;
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        volatile unsigned long x = 0;
        for (;;)
            x++;
    }
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL); /* let it start */
    xpb_cpu_sample *s = calloc(2, sizeof *s);
    assert_non_null(s);
    xpb_cpu_sample_now(&s[0]);
    ts.tv_sec = 1;
    ts.tv_nsec = 0;
    nanosleep(&ts, NULL);
    xpb_cpu_sample_now(&s[1]);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    if (!s[0].valid) {
        free(s);
        skip(); /* no /proc/stat in this sandbox */
    }
    xpb_interference in;
    xpb_interference_between(&in, &s[0], &s[1], NULL, 0);
    /* one busy CPU of `cpus`: at least most of 1/cpus, whatever else the machine does */
    assert_true(in.other_share > 0.6 / in.cpus);
    assert_true(in.flagged);
    free(s);
}

static void test_rss_peak(void **state)
{
    (void)state;
    if (xpb_rss_reset_peak() != 0)
        skip(); /* a kernel without clear_refs */
    uint64_t base = xpb_rss_now();
    assert_true(base > 0);
    size_t n = 64u << 20;
    char *p = malloc(n);
    assert_non_null(p);
    memset(p, 1, n);
    uint64_t peak = xpb_rss_peak();
    free(p);
    assert_true(peak >= base + (n * 9) / 10);
    /* after a reset the peak is the current size again (a sanitizer's quarantine may keep
     * the freed block resident, so "current" is measured, not assumed) */
    assert_int_equal(xpb_rss_reset_peak(), 0);
    uint64_t now = xpb_rss_now(), after = xpb_rss_peak();
    assert_true(after <= now + (4u << 20));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),    cmocka_unit_test(test_cpu_set),
        cmocka_unit_test(test_between),  cmocka_unit_test(test_busy_neighbour),
        cmocka_unit_test(test_rss_peak),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
