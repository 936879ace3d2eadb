/* Interference and memory of a run, from the host's counters (see host_usage.h). */
#include "machine/host_usage.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/clock.h"

int xpb_proc_stat_parse(const char *text, double *busy_ticks, double *steal_ticks, int *cpus)
{
    const char *line = text;
    int found = 0;
    *cpus = 0;
    while (line && *line) {
        if (strncmp(line, "cpu ", 4) == 0) {
            /* user nice system idle iowait irq softirq steal [guest guest_nice] */
            double v[8] = {0};
            int n = sscanf(line + 4, "%lf %lf %lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3],
                           &v[4], &v[5], &v[6], &v[7]);
            if (n >= 4) {
                /* guest time is already inside user time: not added again */
                *busy_ticks = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
                *steal_ticks = v[7];
                found = 1;
            }
        } else if (strncmp(line, "cpu", 3) == 0 && line[3] >= '0' && line[3] <= '9') {
            (*cpus)++;
        }
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    return found ? 0 : -1;
}

void xpb_cpu_sample_now(xpb_cpu_sample *out)
{
    memset(out, 0, sizeof *out);
    out->wall_s = xpb_now();
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        out->self_s = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
                      (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return;
    char buf[16384];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    double busy, steal;
    long hz = sysconf(_SC_CLK_TCK);
    if (hz <= 0 || xpb_proc_stat_parse(buf, &busy, &steal, &out->cpus) != 0 || out->cpus < 1)
        return;
    out->busy_s = busy / (double)hz;
    out->steal_s = steal / (double)hz;
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

void xpb_interference_between(xpb_interference *out, const xpb_cpu_sample *before,
                              const xpb_cpu_sample *after)
{
    out->other_share = out->steal_share = NAN;
    out->flagged = 0;
    out->load_1m = load_1m();
    double capacity = (after->wall_s - before->wall_s) * after->cpus;
    if (!before->valid || !after->valid || !(capacity > 0))
        return;
    double others = (after->busy_s - before->busy_s) - (after->self_s - before->self_s);
    double steal = after->steal_s - before->steal_s;
    /* counters tick at 100 Hz: tiny negative values are rounding, not negative work */
    others = others < 0 ? 0 : others;
    out->other_share = others / capacity > 1 ? 1 : others / capacity;
    out->steal_share = steal < 0 ? 0 : steal / capacity > 1 ? 1 : steal / capacity;
    out->flagged = out->other_share > XPB_INTERFERENCE_LIMIT;
}

int xpb_rss_reset_peak(void)
{
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
