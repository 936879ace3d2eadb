/* Data-parallel training over MPI ranks, end to end (docs/distributed.md), on loopback with
 * mpirun --oversubscribe (and --allow-run-as-root as root):
 *   - the steps of 2 and 3 ranks equal one process's (tests/dp_check): conv6 (no batch norm)
 *     against one process at the combined batch, two steps; resnet18 (batch norm, statistics
 *     per rank as in PyTorch's DistributedDataParallel) against the mean of one-process steps
 *     on each shard; on cpu_ref and cpu_onednn;
 *   - `xpubench run` under mpirun writes one results file (rank 0) with the world size, the
 *     ranks, the communication per step and the scaling efficiency, and its loss equals one
 *     process's at the combined batch;
 *   - a rank that fails (bad device, out of memory at compile, a device error inside a step,
 *     on rank 1 or rank 0) ends that run on every rank with the rank and the cause, and the
 *     next run goes on; a rank that is killed ends the job within seconds, keeping the
 *     finished runs;
 *   - a rank stopped with SIGSTOP (a rank that hangs) ends the job on every rank within
 *     XPB_DP_TIMEOUT and a few seconds, named with its host, whether the other rank waits for
 *     it in rank 0's one-rank baseline or in a step (`test_dp hung`: at every moment);
 *   - without the MPI module, data parallelism is refused saying what is missing.
 * Tests that need mpirun are skipped, saying so, when it is absent. */
#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <dirent.h>
#include <signal.h>

#include "results/results.h"

#define XPUBENCH XPB_TEST_BINARY_DIR "/xpubench"
#define MODULE XPB_TEST_BINARY_DIR "/modules/xpubench_mpi.so"
#define DP_CHECK XPB_TEST_BINARY_DIR "/tests/dp_check/dp_check"
#define FAULT_PLUGINS XPB_TEST_BINARY_DIR "/tests/dp_fault_backend/plugins"

static char dir[] = "/tmp/xpb_dp_XXXXXX";

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Runs `cmd` with sh (stdout and stderr into dir/out.txt); its exit code, the seconds it took
 * into *seconds (when not NULL). A command still running after 300 s is killed (exit 124). */
static int sh(double *seconds, const char *fmt, ...)
{
    char cmd[4096], full[4400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    snprintf(full, sizeof full, "timeout 300 sh -c '%s' > %s/out.txt 2>&1", cmd, dir);
    double t0 = now();
    int rc = system(full);
    if (seconds)
        *seconds = now() - t0;
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc);
}

/* The output of the last command (static buffer). */
static const char *output(void)
{
    static char buf[1 << 16];
    char path[512];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
    return buf;
}

static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = strstr(text, what); p; p = strstr(p + 1, what))
        n++;
    return n;
}

/* "mpirun [--allow-run-as-root] --oversubscribe -np N" with the environment the tests use. In
 * a sanitizer build Open MPI's own allocations past MPI_Finalize are not reported: the
 * suppressions name its libraries, which only the slow unwinder walks through; `asan` adds
 * options (":detect_leaks=0": LeakSanitizer's tracer itself crashes now and then at the exit
 * of a process that ran oneDNN's threads; AddressSanitizer still checks every access). */
static const char *mpirun_asan(int np, const char *asan)
{
    static char buf[1024];
    snprintf(buf, sizeof buf,
             "XPB_MPI_MODULE=" MODULE " XPB_NO_PROGRESS=1"
             " LSAN_OPTIONS=suppressions=" XPB_TEST_SOURCE_DIR "/tests/lsan_mpi.supp"
             ":print_suppressions=0 ASAN_OPTIONS=${ASAN_OPTIONS}:fast_unwind_on_malloc=0%s"
             " mpirun %s--oversubscribe -np %d",
             asan, geteuid() == 0 ? "--allow-run-as-root " : "", np);
    return buf;
}

/* The backend of the runs that are not about numerics (results, faults, kills): cpu_onednn
 * when this build has it, as it is fast under the sanitizers too (its library is not
 * instrumented), else cpu_ref. LeakSanitizer is off under mpirun with oneDNN (above). */
#define FAST_BACKEND (XPB_TEST_HAVE_ONEDNN ? "cpu_onednn" : "cpu_ref")

static const char *mpirun(int np)
{
    return mpirun_asan(np, XPB_TEST_HAVE_ONEDNN ? ":detect_leaks=0" : "");
}

/* Skips the test, saying why, when there is no mpirun or no MPI module. */
static void need_mpi(void)
{
    if (!XPB_TEST_HAVE_MPI) {
        fprintf(stderr, "skipped: this build has no MPI module (XPB_WITH_MPI)\n");
        skip();
    }
    if (system("mpirun --version > /dev/null 2>&1") != 0) {
        fprintf(stderr, "skipped: mpirun is not installed (Debian: apt-get install openmpi-bin)\n");
        skip();
    }
}

static void write_file(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static json_t *load(const char *name)
{
    char path[512];
    xpb_err err = {{0}};
    json_t *doc = NULL;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (xpb_results_load(&doc, path, &err) != XPB_OK)
        fail_msg("%s", err.msg);
    return doc;
}

static json_t *at(json_t *v, const char *path)
{
    char key[128];
    while (v && *path) {
        size_t n = strcspn(path, ".");
        snprintf(key, sizeof key, "%.*s", (int)n, path);
        v = (key[0] >= '0' && key[0] <= '9') ? json_array_get(v, (size_t)atoi(key))
                                             : json_object_get(v, key);
        path += n + (path[n] == '.');
    }
    return v;
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* ---- numerical equivalence ---- */

static void check_equivalence(int np, const char *model, const char *backend, const char *how)
{
    const char *args = strcmp(how, "combined") == 0 ? "2 2 1 combined" : "2 1 4 shards";
    double seconds;
    const char *asan = strcmp(backend, "cpu_onednn") == 0 ? ":detect_leaks=0" : "";
    int rc =
        sh(&seconds, "%s " DP_CHECK " %s %s %s 1e-5", mpirun_asan(np, asan), model, backend, args);
    const char *out = output();
    fprintf(stderr, "%s(%.1f s)\n", out, seconds);
    if (rc != 0 || count(out, ": OK") != np)
        fail_msg("dp_check %s %s on %d ranks: exit %d", model, backend, np, rc);
}

static void test_equivalence(void **state)
{
    (void)state;
    need_mpi();
    static const char *const backends[] = {"cpu_ref", "cpu_onednn"};
    for (int np = 2; np <= 3; np++)
        for (int b = 0; b < 2; b++) {
            if (b == 1 && !XPB_TEST_HAVE_ONEDNN)
                continue;
            check_equivalence(np, "conv6", backends[b], "combined");
            check_equivalence(np, "resnet18", backends[b], "shards");
        }
}

/* ---- the results of `xpubench run` under mpirun ---- */

/* A scenario of two runs on FAST_BACKEND: data-parallel and replicas. */
static void write_run_scenario(void)
{
    char text[512];
    snprintf(text, sizeof text,
             "name: dp\n"
             "defaults: {model: conv6, backend: %s, batch: 2, warmup: 1, min_steps: 2, "
             "min_time: 0, repeats: 2}\n"
             "runs:\n"
             "  - {name: data, bucket_mb: 1}\n"
             "  - {name: replicas, parallel: none}\n",
             FAST_BACKEND);
    write_file("dp.yaml", text);
}

static void test_run_results(void **state)
{
    (void)state;
    need_mpi();
    write_run_scenario();
    int rc = sh(NULL, "%s " XPUBENCH " run %s/dp.yaml -o %s/dp.json", mpirun(2), dir, dir);
    const char *out = output();
    if (rc != 0)
        fail_msg("exit %d:\n%s", rc, out);
    assert_int_equal(count(out, "\nresults: "), 1); /* only rank 0 reports */
    json_t *doc = load("dp.json");
    assert_string_equal(json_string_value(at(doc, "runs.0.config.parallel")), "data");
    assert_int_equal(json_integer_value(at(doc, "runs.0.config.world_size")), 2);
    assert_non_null(json_string_value(at(doc, "environment.libraries.mpi")));
    json_t *par = at(doc, "runs.0.metrics.parallel");
    assert_int_equal(json_array_size(at(par, "ranks")), 2);
    assert_int_equal(json_integer_value(at(par, "hosts")), 1);
    assert_true(json_integer_value(at(par, "communication.all_reduces")) > 1); /* buckets */
    assert_int_equal(json_integer_value(at(par, "communication.bytes_per_step")),
                     4 * json_integer_value(at(doc, "runs.0.model.parameters")));
    double share = json_number_value(at(par, "communication.share"));
    double eff = json_number_value(at(par, "scaling_efficiency"));
    assert_true(share > 0 && share < 1);
    assert_string_equal(json_string_value(at(par, "baseline.source")), "measured");
    assert_true(json_number_value(at(par, "baseline.throughput")) > 0);
    assert_true(eff > 0);
    fprintf(stderr, "2 ranks: communication %.1f%% of a step, scaling efficiency %.2f\n",
            share * 100, eff);
    /* the global batch's throughput: both ranks' samples */
    double tp = json_number_value(at(doc, "runs.0.metrics.throughput.median"));
    double r0 = json_number_value(at(par, "ranks.0.throughput"));
    assert_true(tp > r0);
    /* replicas: nothing averaged */
    assert_string_equal(json_string_value(at(doc, "runs.1.config.parallel")), "none");
    assert_int_equal(
        json_integer_value(at(doc, "runs.1.metrics.parallel.communication.all_reduces")), 0);
    double loss_dp = json_number_value(at(doc, "runs.0.metrics.loss.first"));
    json_decref(doc);

    /* one process at the combined batch: the same loss (the mean over the ranks' shards) */
    rc = sh(NULL, "%s" XPUBENCH " run %s/dp.yaml --set batch=4 -o %s/one.json",
            XPB_TEST_HAVE_ONEDNN ? "ASAN_OPTIONS=${ASAN_OPTIONS}:detect_leaks=0 " : "", dir, dir);
    if (rc != 0)
        fail_msg("exit %d:\n%s", rc, output());
    doc = load("one.json");
    double loss_one = json_number_value(at(doc, "runs.0.metrics.loss.first"));
    assert_int_equal(json_integer_value(at(doc, "runs.0.config.world_size")), 1);
    assert_null(at(doc, "runs.0.metrics.parallel"));
    json_decref(doc);
    fprintf(stderr, "loss of the first timed step: 2 ranks x 2 %.9g, 1 process x 4 %.9g\n", loss_dp,
            loss_one);
    assert_true(fabs(loss_dp - loss_one) <= 1e-5 * fabs(loss_one));
}

/* ---- faults ---- */

/* Writes dir/name: a run on the dp_fault backend and a healthy one on FAST_BACKEND, in the
 * order `faulty_first` says, with min_steps `steps`. */
static void write_fault_scenario(const char *name, int faulty_first, int steps)
{
    char faulty[128], healthy[64], text[512];
    snprintf(faulty, sizeof faulty, "  - {name: %s, backend: dp_fault, allow_unsupported: true}\n",
             faulty_first ? "faulty" : "killed");
    snprintf(healthy, sizeof healthy, "  - {name: %s, backend: %s}\n",
             faulty_first ? "healthy" : "finished", FAST_BACKEND);
    snprintf(text, sizeof text,
             "name: faults\n"
             "defaults: {model: conv6, batch: 2, warmup: 1, min_steps: %d, min_time: 0, "
             "repeats: 1, scaling_baseline: absent.json}\n"
             "runs:\n%s%s",
             steps, faulty_first ? faulty : healthy, faulty_first ? healthy : faulty);
    write_file(name, text);
}

/* Injects `fault` and checks every rank ended the faulty run with `status` naming `rank` and
 * the cause, the next run finished, and how long it all took. */
static void check_fault(const char *fault, const char *status, int rank, int exit_code)
{
    double seconds;
    int rc = sh(&seconds,
                "XPB_DP_FAULT=%s XPB_PLUGIN_PATH=" FAULT_PLUGINS " %s " XPUBENCH
                " run %s/faults.yaml -o %s/faults.json --force",
                fault, mpirun(2), dir, dir);
    const char *out = output();
    if (rc != exit_code)
        fail_msg("%s: exit %d, expected %d:\n%s", fault, rc, exit_code, out);
    json_t *doc = load("faults.json");
    const char *error = json_string_value(at(doc, "runs.0.error"));
    char who[32];
    snprintf(who, sizeof who, "rank %d (host ", rank);
    fprintf(stderr, "fault %s: %.1f s, %s: %s\n", fault, seconds,
            json_string_value(at(doc, "runs.0.status")), error);
    assert_string_equal(json_string_value(at(doc, "runs.0.status")), status);
    assert_non_null(strstr(error, who));
    assert_non_null(strstr(error, "(injected fault)"));
    assert_string_equal(json_string_value(at(doc, "runs.1.status")), "ok");
    /* the ranks ended the run on the failure, not on XPB_DP_TIMEOUT's 900 s deadline (a busy
     * machine under the sanitizers took 64 s; quiet, about 20) */
    assert_true(seconds < 300);
    json_decref(doc);
}

static void test_failing_rank(void **state)
{
    (void)state;
    need_mpi();
    write_fault_scenario("faults.yaml", 1, 2);
    check_fault("1:open", "unsupported", 1, 0); /* a bad device: the run unsupported, allowed */
    check_fault("1:compile", "failed", 1, 1);   /* out of memory at compile */
    check_fault("1:step:2", "failed", 1, 1);    /* rank 0 waits in an ALL_REDUCE meanwhile */
    check_fault("0:step:3", "failed", 0, 1);
}

static void test_killed_rank(void **state)
{
    (void)state;
    need_mpi();
    write_fault_scenario("kill.yaml", 0, 3);
    char stamp[512];
    snprintf(stamp, sizeof stamp, "%s/killed_at", dir);
    remove(stamp);
    int rc = sh(NULL,
                "XPB_DP_FAULT=1:kill:3 XPB_DP_FAULT_STAMP=%s XPB_PLUGIN_PATH=" FAULT_PLUGINS
                " %s " XPUBENCH " run %s/kill.yaml -o %s/kill.json",
                stamp, mpirun(2), dir, dir);
    double end = now(), killed = 0;
    FILE *f = fopen(stamp, "r");
    assert_non_null(f);
    assert_int_equal(fscanf(f, "%lf", &killed), 1);
    fclose(f);
    const char *out = output();
    fprintf(stderr, "killed rank 1: the job ended %.2f s later with exit %d\n", end - killed, rc);
    assert_int_not_equal(rc, 0);
    assert_true(end - killed < 10);
    assert_non_null(strstr(out, "rank 1"));
    assert_non_null(strstr(out, "signal 9"));
    json_t *doc = load("kill.json"); /* valid, with the run that finished */
    assert_int_equal(json_array_size(at(doc, "runs")), 1);
    assert_string_equal(json_string_value(at(doc, "runs.0.id")), "finished");
    assert_string_equal(json_string_value(at(doc, "runs.0.status")), "ok");
    json_decref(doc);
}

/* ---- a rank that hangs (issue 22 item 5) ---- */

#define HUNG_TIMEOUT 10 /* XPB_DP_TIMEOUT of these jobs, seconds */
#define HUNG_SLACK 8    /* what the job may take beyond it (measured 1-5 s on a loaded machine) */

/* Whether /proc/<pid>/<file> holds `want` among its NUL-separated strings. */
static int proc_has(const char *pid, const char *file, const char *want)
{
    char path[300], buf[1 << 15];
    snprintf(path, sizeof path, "/proc/%s/%s", pid, file);
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    for (size_t i = 0; i < n; i += strlen(buf + i) + 1)
        if (strstr(buf + i, want))
            return 1;
    return 0;
}

/* The pid of rank `rank` of this test's jobs (XPB_TEST_MARK in its environment), 0 when
 * there is none; with rank -1, any xpubench process of them. */
static pid_t job_rank(int rank)
{
    char mark[300], who[64];
    snprintf(mark, sizeof mark, "XPB_TEST_MARK=%s", dir);
    snprintf(who, sizeof who, "OMPI_COMM_WORLD_RANK=%d", rank);
    DIR *d = opendir("/proc");
    pid_t found = 0;
    for (struct dirent *e; d && !found && (e = readdir(d));)
        if (e->d_name[0] >= '1' && e->d_name[0] <= '9' &&
            proc_has(e->d_name, "cmdline", "xpubench") && proc_has(e->d_name, "environ", mark) &&
            (rank < 0 || proc_has(e->d_name, "environ", who)))
            found = (pid_t)atoi(e->d_name);
    if (d)
        closedir(d);
    return found;
}

/* Runs a 2-rank job of hung.yaml, stops rank `rank` with SIGSTOP `delay` seconds after it
 * started, and checks that every rank ended within HUNG_TIMEOUT + HUNG_SLACK of the stop with
 * a line naming the stopped rank and its host, and that the results file, when there is one,
 * says the invocation did not complete. */
static void check_stopped(int rank, double delay)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "XPB_TEST_MARK=%s XPB_DP_TIMEOUT=%d %s " XPUBENCH
             " run %s/hung.yaml -o %s/hung.json --force > %s/out.txt 2>&1",
             dir, HUNG_TIMEOUT, mpirun(2), dir, dir, dir);
    double start = now();
    pid_t job = fork();
    assert_true(job >= 0);
    if (job == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    struct timespec pause = {(time_t)delay, (long)((delay - (double)(time_t)delay) * 1e9)};
    nanosleep(&pause, NULL);
    pid_t victim = job_rank(rank);
    if (!victim || kill(victim, SIGSTOP) != 0) {
        waitpid(job, NULL, 0);
        fprintf(stderr, "rank %d at %.1f s: the job had ended already\n", rank, delay);
        return;
    }
    double stopped = now();
    int status = 0;
    double end = stopped;
    while (waitpid(job, &status, WNOHANG) == 0 && (end = now()) - stopped < 120)
        usleep(50000);
    pid_t left = job_rank(-1);
    if (left) { /* never leave a stopped process behind, even when the test fails */
        kill(left, SIGKILL);
        kill(job, SIGKILL);
        waitpid(job, NULL, 0);
    }
    const char *out = output();
    const char *line = strstr(out, "ending the job");
    while (line && line > out && line[-1] != '\n')
        line--;
    fprintf(stderr, "rank %d stopped %.1f s into the job: it ended %.1f s later: %.300s\n", rank,
            stopped - start, end - stopped, line ? line : out);
    assert_int_equal(left, 0);
    assert_true(end - stopped < HUNG_TIMEOUT + HUNG_SLACK);
    assert_true(!WIFEXITED(status) || WEXITSTATUS(status) != 0);
    assert_non_null(line);
    char named[64];
    snprintf(named, sizeof named, "from rank %d (host ", rank);
    /* a rank stopped before MPI started (or while it ends) is caught by the watchdog instead */
    assert_true(strstr(line, named) || strstr(line, "did not finish within"));
    json_t *doc = NULL;
    xpb_err err = {{0}};
    char path[512];
    snprintf(path, sizeof path, "%s/hung.json", dir);
    if (xpb_results_load(&doc, path, &err) == XPB_OK)
        assert_true(json_is_true(at(doc, "interrupted")));
    json_decref(doc);
    remove(path);
}

/* Two runs on cpu_ref (quick stages, so that the stops fall in every one of them), each
 * starting with rank 0's one-rank baseline while rank 1 waits. */
static void write_hung_scenario(void)
{
    write_file("hung.yaml", "name: hung\n"
                            "defaults: {model: conv6, backend: cpu_ref, batch: 1, warmup: 1, "
                            "min_steps: 6, min_time: 0, repeats: 2}\n"
                            "runs:\n  - {name: first}\n  - {name: second}\n");
}

/* A rank stopped during rank 0's baseline (rank 1 waiting for it, patiently) and during the
 * data-parallel steps. */
static void test_stopped_rank(void **state)
{
    (void)state;
    need_mpi();
    write_hung_scenario();
    check_stopped(1, 4);
    check_stopped(0, 7);
}

/* A rank stopped at every moment of the job, two seconds apart, the ranks taking turns (rank 0
 * at 1, 5, 9, 13 s, rank 1 at 3, 7, 11, 15 s): eight jobs of up to 20 s (heavy; both ranks at
 * every moment doubled the suite's longest test to five minutes). */
static void test_stopped_rank_any_moment(void **state)
{
    (void)state;
    need_mpi();
    write_hung_scenario();
    int rank = 0;
    for (double delay = 1; delay <= 15; delay += 2, rank = 1 - rank)
        check_stopped(rank, delay);
}

/* ---- without the module ---- */

static void test_without_module(void **state)
{
    (void)state;
    write_file("data.yaml", "name: data\n"
                            "runs:\n"
                            "  - {model: conv6, batch: 2, warmup: 0, min_steps: 1, "
                            "min_time: 0, repeats: 1, parallel: data, allow_unsupported: true}\n");
    /* alone, asking for data parallelism: refused, saying what is missing */
    int rc = sh(NULL, "%s" XPUBENCH " run %s/data.yaml -o %s/data.json",
                XPB_TEST_HAVE_MPI ? "XPB_MPI_MODULE=/nonexistent/xpubench_mpi.so " : "", dir, dir);
    assert_int_equal(rc, 0); /* unsupported, like a backend this machine lacks (allowed) */
    json_t *doc = load("data.json");
    const char *error = json_string_value(at(doc, "runs.0.error"));
    fprintf(stderr, "alone: %s\n", error);
    assert_string_equal(json_string_value(at(doc, "runs.0.status")), "unsupported");
    assert_non_null(strstr(error, XPB_TEST_HAVE_MPI ? "XPB_MPI_MODULE names" : "built without"));
    assert_non_null(strstr(error, XPB_TEST_HAVE_MPI ? "cannot be read" : "libopenmpi-dev"));
    json_decref(doc);
    if (!XPB_TEST_HAVE_MPI || system("mpirun --version > /dev/null 2>&1") != 0)
        return;
    /* two ranks without the module: every rank says it, nothing runs */
    rc = sh(NULL,
            "%s -x XPB_MPI_MODULE=/nonexistent/xpubench_mpi.so " XPUBENCH
            " run %s/data.yaml -o %s/none.json",
            mpirun(2), dir, dir);
    const char *out = output();
    fprintf(stderr, "two ranks: exit %d\n%s", rc, out);
    assert_int_not_equal(rc, 0);
    assert_int_equal(count(out, "launched as rank "), 2);
    assert_non_null(strstr(out, "of 2 by mpirun (Open MPI): data-parallel runs need the MPI "
                                "module"));
}

/* `test_dp equivalence` runs the numerical equivalence (ctest's test_dp_equivalence, labelled
 * heavy: its cpu_ref steps take minutes under the sanitizers, and the sanitizer pass already
 * runs every MPI path through the other tests); `test_dp hung` stops a rank at every moment of
 * a job (test_dp_hung, heavy: 8 jobs of up to 20 s); `test_dp` alone runs the rest. */
int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_without_module), cmocka_unit_test(test_run_results),
        cmocka_unit_test(test_failing_rank),   cmocka_unit_test(test_killed_rank),
        cmocka_unit_test(test_stopped_rank),
    };
    const struct CMUnitTest equivalence[] = {cmocka_unit_test(test_equivalence)};
    const struct CMUnitTest any_moment[] = {cmocka_unit_test(test_stopped_rank_any_moment)};
    if (argc > 1 && strcmp(argv[1], "equivalence") == 0)
        return cmocka_run_group_tests_name("test_dp_equivalence", equivalence, setup, teardown);
    if (argc > 1 && strcmp(argv[1], "hung") == 0)
        return cmocka_run_group_tests_name("test_dp_hung", any_moment, setup, teardown);
    return cmocka_run_group_tests(tests, setup, teardown);
}
