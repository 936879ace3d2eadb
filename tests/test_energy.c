/* The RAPL reader against fake powercap trees: package and DRAM domains found (core, uncore
 * and psys skipped), a counter wrap corrected per domain, a root-only counter reported as
 * "permission", no zone reported as "no meter". */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "machine/energy.h"

static char root[256];

static void put(const char *rel, const char *text, mode_t mode)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(chmod(path, mode), 0);
}

static void zone(const char *name, const char *domain, const char *uj, const char *range)
{
    char path[512], rel[256];
    snprintf(path, sizeof path, "%s/%s", root, name);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(rel, sizeof rel, "%s/name", name);
    put(rel, domain, 0644);
    snprintf(rel, sizeof rel, "%s/energy_uj", name);
    put(rel, uj, 0644);
    snprintf(rel, sizeof rel, "%s/max_energy_range_uj", name);
    put(rel, range, 0644);
}

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/xpb_test_energy_XXXXXX");
    return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_domains_and_wrap(void **state)
{
    (void)state;
    zone("intel-rapl:0", "package-0\n", "1000000\n", "262143328850\n");
    zone("intel-rapl:0:0", "core\n", "5\n", "262143328850\n");
    zone("intel-rapl:0:1", "dram\n", "2000000\n", "65712999613\n");
    zone("intel-rapl:1", "package-1\n", "262143000000\n", "262143328850\n");
    zone("intel-rapl:2", "psys\n", "7\n", "100\n");
    xpb_rapl r;
    assert_int_equal(xpb_rapl_open(&r, root), 0);
    assert_int_equal(r.n, 3); /* package-0, dram, package-1: core and psys skipped */
    assert_string_equal(r.domain[0].name, "package-0");
    assert_string_equal(r.domain[1].name, "dram");
    assert_true(r.domain[1].is_dram);
    assert_string_equal(r.domain[2].name, "package-1");
    double before[XPB_RAPL_MAX_DOMAINS], after[XPB_RAPL_MAX_DOMAINS];
    assert_int_equal(xpb_rapl_sample(&r, before), 0);
    assert_true(before[0] == 1e6 && before[1] == 2e6);
    /* 10 J on package 0, 3 J of DRAM, package 1 wraps: 328850 uj to the end + 671150 after */
    put("intel-rapl:0/energy_uj", "11000000\n", 0644);
    put("intel-rapl:0:1/energy_uj", "5000000\n", 0644);
    put("intel-rapl:1/energy_uj", "671150\n", 0644);
    assert_int_equal(xpb_rapl_sample(&r, after), 0);
    double pkg, dram;
    double total = xpb_rapl_joules(&r, before, after, &pkg, &dram);
    assert_true(fabs(pkg - 11.0) < 1e-9);
    assert_true(fabs(dram - 3.0) < 1e-9);
    assert_true(fabs(total - 14.0) < 1e-9);
}

/* What an ordinary user gets from a root-only counter: 0 when the reason is right. */
static int permission_case(void)
{
    xpb_rapl r;
    if (xpb_rapl_open(&r, root) != -1 || r.n != 0)
        return 1;
    if (!strstr(r.reason, "permission: ") ||
        !strstr(r.reason, "intel-rapl:0/energy_uj is readable by root only")) {
        fprintf(stderr, "unexpected reason: %s\n", r.reason);
        return 2;
    }
    return 0;
}

static void test_permission(void **state)
{
    (void)state;
    zone("intel-rapl:0", "package-0\n", "1000\n", "100000\n");
    put("intel-rapl:0/energy_uj", "1000\n", 0400); /* as on kernels since CVE-2020-8694 */
    if (geteuid() != 0) {
        assert_int_equal(permission_case(), 0);
        return;
    }
    /* root reads a 0400 file anyway: check as the unprivileged user "nobody" in a child */
    assert_int_equal(chmod(root, 0755), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0)
        _exit(setgid(65534) == 0 && setuid(65534) == 0 ? permission_case() : 3);
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_no_meter(void **state)
{
    (void)state;
    xpb_rapl r;
    assert_int_equal(xpb_rapl_open(&r, root), -1); /* an empty tree */
    assert_non_null(strstr(r.reason, "no meter: no RAPL package or DRAM zone under"));
    char missing[300];
    snprintf(missing, sizeof missing, "%s/none", root);
    assert_int_equal(xpb_rapl_open(&r, missing), -1);
    assert_non_null(strstr(r.reason, "No such file or directory"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_domains_and_wrap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_permission, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_meter, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
