/* Interference and memory of a run, from the host's counters (see host_usage.h). */
#define _GNU_SOURCE /* sched_getaffinity, CPU_ISSET */
#include "machine/host_usage.h"

#include <malloc.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/clock.h"

void xpb_cpu_set_add(struct xpb_cpu_set *s, int cpu)
{
    if (cpu >= 0 && cpu < XPB_CPU_MAX)
        s->bits[cpu / 64] |= (uint64_t)1 << (cpu % 64);
}

int xpb_cpu_set_has(const struct xpb_cpu_set *s, int cpu)
{
    return cpu >= 0 && cpu < XPB_CPU_MAX && (s->bits[cpu / 64] >> (cpu % 64) & 1u);
}

int xpb_cpu_set_count(const struct xpb_cpu_set *s)
{
    int n = 0;
    for (size_t i = 0; i < XPB_CPU_MAX / 64; i++)
        n += __builtin_popcountll(s->bits[i]);
    return n;
}

void xpb_cpu_set_union(struct xpb_cpu_set *s, const struct xpb_cpu_set *other)
{
    for (size_t i = 0; i < XPB_CPU_MAX / 64; i++)
        s->bits[i] |= other->bits[i];
}

int xpb_cpu_set_mine(struct xpb_cpu_set *out)
{
    memset(out, 0, sizeof *out);
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return -1;
    for (int cpu = 0; cpu < XPB_CPU_MAX && cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &set))
            xpb_cpu_set_add(out, cpu);
    return 0;
}

int xpb_proc_stat_parse(const char *text, double *busy, double *steal, struct xpb_cpu_set *seen)
{
    memset(seen, 0, sizeof *seen);
    for (const char *line = text; line && *line;) {
        /* cpuN user nice system idle iowait irq softirq steal [guest guest_nice] */
        int cpu = -1;
        double v[8] = {0};
        if (strncmp(line, "cpu", 3) == 0 && line[3] >= '0' && line[3] <= '9' &&
            sscanf(line + 3, "%d %lf %lf %lf %lf %lf %lf %lf %lf", &cpu, &v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5], &v[6], &v[7]) >= 5 &&
            cpu >= 0 && cpu < XPB_CPU_MAX) {
            /* guest time is already inside user time: not added again */
            busy[cpu] = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
            steal[cpu] = v[7];
            xpb_cpu_set_add(seen, cpu);
        }
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
    return xpb_cpu_set_count(seen) > 0 ? 0 : -1;
}

/* The whole of /proc/stat, NUL-terminated (owned by the caller, free), or NULL. */
static char *read_proc_stat(void)
{
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        len += fread(buf + len, 1, cap - 1 - len, f);
        if (len < cap - 1 || feof(f) || ferror(f))
            break;
        char *bigger = realloc(buf, 2 * cap);
        if (!bigger)
            free(buf);
        buf = bigger;
        cap *= 2;
    }
    fclose(f);
    if (buf)
        buf[len] = '\0';
    return buf;
}

void xpb_cpu_sample_now(xpb_cpu_sample *out)
{
    memset(out, 0, sizeof *out);
    out->wall_s = xpb_now();
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        out->self_s = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
                      (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
    char *text = read_proc_stat();
    long hz = sysconf(_SC_CLK_TCK);
    if (!text || hz <= 0 || xpb_proc_stat_parse(text, out->busy_s, out->steal_s, &out->online)) {
        free(text);
        return;
    }
    free(text);
    for (int cpu = 0; cpu < XPB_CPU_MAX; cpu++) {
        out->busy_s[cpu] /= (double)hz;
        out->steal_s[cpu] /= (double)hz;
    }
    out->valid = 1;
}

/* The 1-minute load average, or NaN. */
static double load_1m(void)
{
    double load = NAN;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &load) != 1)
            load = NAN;
        fclose(f);
    }
    return load;
}

static double clamp01(double v)
{
    return v < 0 ? 0 : v > 1 ? 1 : v;
}

void xpb_interference_between(xpb_interference *out, const xpb_cpu_sample *before,
                              const xpb_cpu_sample *after, const struct xpb_cpu_set *set,
                              double threads)
{
    memset(out, 0, sizeof *out);
    out->other_share = out->steal_share = NAN;
    out->load_1m = load_1m();
    if (!before->valid || !after->valid)
        return;
    double busy = 0, steal = 0;
    for (int cpu = 0; cpu < XPB_CPU_MAX; cpu++) {
        if (!xpb_cpu_set_has(&after->online, cpu) || !xpb_cpu_set_has(&before->online, cpu) ||
            (set && !xpb_cpu_set_has(set, cpu)))
            continue;
        busy += after->busy_s[cpu] - before->busy_s[cpu];
        steal += after->steal_s[cpu] - before->steal_s[cpu];
        out->cpus++;
    }
    double wall = after->wall_s - before->wall_s;
    out->needed = threads > 0 && threads < out->cpus ? threads : out->cpus;
    if (out->cpus == 0 || !(wall > 0))
        return;
    /* counters tick at 100 Hz: tiny negative values are rounding, not negative work */
    double others = busy - (after->self_s - before->self_s);
    double spare = (out->cpus - out->needed) * wall; /* CPU time the run leaves to others */
    double taken = others - spare > 0 ? others - spare : 0;
    out->other_share = clamp01(taken / (out->needed * wall));
    out->steal_share = fmin(out->other_share, clamp01(steal / (out->needed * wall)));
    out->flagged = out->other_share > XPB_INTERFERENCE_LIMIT;
}

int xpb_rss_reset_peak(void)
{
    malloc_trim(0);
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f)
        return -1;
    int ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* A "Vm...:  <n> kB" line of /proc/self/status, in bytes. */
static uint64_t status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return 0;
    char line[256];
    uint64_t bytes = 0;
    size_t n = strlen(key);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, n) == 0 && line[n] == ':') {
            unsigned long long kb;
            if (sscanf(line + n + 1, "%llu", &kb) == 1)
                bytes = (uint64_t)kb * 1024u;
            break;
        }
    fclose(f);
    return bytes;
}

uint64_t xpb_rss_now(void)
{
    return status_kb("VmRSS");
}

uint64_t xpb_rss_peak(void)
{
    return status_kb("VmHWM");
}
