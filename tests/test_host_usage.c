/* Interference and memory of a run: /proc/stat parsing, the share others took between two
 * samples (with a real busy neighbour), and the resident-set peak reset. */
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
                       "intr 12345\nctxt 999\n";
    double busy, steal;
    int cpus;
    assert_int_equal(xpb_proc_stat_parse(text, &busy, &steal, &cpus), 0);
    /* user + nice + system + irq + softirq + steal; idle, iowait and guest are not added */
    assert_true(busy == 100 + 5 + 50 + 3 + 2 + 7);
    assert_true(steal == 7);
    assert_int_equal(cpus, 2);
    assert_int_equal(xpb_proc_stat_parse("intr 1\n", &busy, &steal, &cpus), -1);
}

static void test_between(void **state)
{
    (void)state;
    xpb_cpu_sample a = {
        .busy_s = 10, .steal_s = 1, .self_s = 2, .wall_s = 100, .cpus = 2, .valid = 1};
    xpb_cpu_sample b = {
        .busy_s = 14, .steal_s = 1.5, .self_s = 4, .wall_s = 102, .cpus = 2, .valid = 1};
    xpb_interference in;
    xpb_interference_between(&in, &a, &b);
    /* others used 4 - 2 = 2 CPU-seconds of 2 s x 2 CPUs */
    assert_true(fabs(in.other_share - 0.5) < 1e-12);
    assert_true(fabs(in.steal_share - 0.125) < 1e-12);
    assert_true(in.flagged);
    b.busy_s = 12.05; /* 0.05 CPU-s of others: 1.25%, under the limit */
    xpb_interference_between(&in, &a, &b);
    assert_false(in.flagged);
    b.valid = 0;
    xpb_interference_between(&in, &a, &b);
    assert_true(isnan(in.other_share));
    assert_false(in.flagged);
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
    xpb_cpu_sample a, b;
    xpb_cpu_sample_now(&a);
    ts.tv_sec = 1;
    ts.tv_nsec = 0;
    nanosleep(&ts, NULL);
    xpb_cpu_sample_now(&b);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    if (!a.valid)
        skip(); /* no /proc/stat in this sandbox */
    xpb_interference in;
    xpb_interference_between(&in, &a, &b);
    /* one busy CPU of `cpus`: at least most of 1/cpus, whatever else the machine does */
    assert_true(in.other_share > 0.6 / a.cpus);
    assert_true(in.flagged);
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
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_between),
        cmocka_unit_test(test_busy_neighbour),
        cmocka_unit_test(test_rss_peak),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
