/* What the host's other work did while a run was timed, and how much memory the run took:
 *   - interference: CPU time other processes took of the CPUs the run needed, from the
 *     kernel's per-CPU counters in /proc/stat ("cpuN" lines) over the run's CPUs (its affinity
 *     set, sched_getaffinity) minus this process's own CPU time (getrusage), plus time a
 *     hypervisor gave to other guests ("steal"). A run of T threads on a set of C CPUs needs
 *     min(T, C) of them: what others took beyond the C - min(T, C) CPUs it leaves free is what
 *     it lost to them. A run whose neighbours took more than XPB_INTERFERENCE_LIMIT of what it
 *     needed is flagged, because its numbers are not its own (pyperf's system checks play the
 *     same role). docs/report.md gives the calibration of the limit;
 *   - memory: this process's resident set before the run and its peak during it, the peak
 *     being reset between runs through /proc/self/clear_refs (Linux >= 4.0), after handing the
 *     heap's free memory back to the kernel (malloc_trim), so that a run's growth is what it
 *     needs and not what earlier runs left in the allocator. */
#ifndef XPB_CORE_HOST_USAGE_H
#define XPB_CORE_HOST_USAGE_H

#include <stdint.h>

/* Share of the run's needed CPU time taken by others above which a run is flagged
 * (calibrated with a one-core busy loop against 1- and 2-thread runs: docs/report.md). */
#define XPB_INTERFERENCE_LIMIT 0.05

/* CPUs the counters and sets cover (CPU numbers 0 .. XPB_CPU_MAX - 1), as cpu_set_t does. */
#define XPB_CPU_MAX 1024

/* A set of CPUs: CPU i is bit i % 64 of bits[i / 64]. */
struct xpb_cpu_set {
    uint64_t bits[XPB_CPU_MAX / 64];
};

void xpb_cpu_set_add(struct xpb_cpu_set *s, int cpu);
int xpb_cpu_set_has(const struct xpb_cpu_set *s, int cpu);
int xpb_cpu_set_count(const struct xpb_cpu_set *s);
void xpb_cpu_set_union(struct xpb_cpu_set *s, const struct xpb_cpu_set *other);

/* The CPUs the calling thread may run on (sched_getaffinity; threads it starts inherit them)
 * into *out: 0, or -1 (then *out is empty). */
int xpb_cpu_set_mine(struct xpb_cpu_set *out);

typedef struct xpb_cpu_sample {
    double busy_s[XPB_CPU_MAX];  /* per CPU: non-idle time since boot, seconds */
    double steal_s[XPB_CPU_MAX]; /* per CPU: steal time, seconds */
    struct xpb_cpu_set online;   /* the CPUs /proc/stat has a line for */
    double self_s;               /* this process's user + system time, seconds */
    double wall_s;               /* monotonic clock */
    int valid;                   /* 0 when /proc/stat could not be read */
} xpb_cpu_sample;

/* Parses the "cpuN" lines of /proc/stat text: busy[N] and steal[N] in clock ticks (user +
 * nice + system + irq + softirq + steal; idle, iowait and guest, which user time already
 * holds, are not busy), and N into *seen. busy and steal hold XPB_CPU_MAX entries; CPUs beyond
 * are ignored. 0, or -1 when the text has no cpuN line. */
int xpb_proc_stat_parse(const char *text, double *busy, double *steal, struct xpb_cpu_set *seen);

/* Samples the counters now. */
void xpb_cpu_sample_now(xpb_cpu_sample *out);

typedef struct xpb_interference {
    double other_share; /* CPU time others took of what the run needed of its CPUs, in [0, 1]:
                           max(0, others' time on the set - (C - N) x wall) / (N x wall), with C
                           the set's on-line CPUs and N = min(threads, C); NaN: unknown */
    double steal_share; /* the part of it that was steal, on the same scale */
    double load_1m;     /* the 1-minute load average at the end; NaN: unknown */
    int cpus;           /* C */
    double needed;      /* N */
    int flagged;        /* other_share > XPB_INTERFERENCE_LIMIT */
} xpb_interference;

/* What others took between two samples of the CPUs in `set` (NULL: every CPU) from a run of
 * `threads` threads (<= 0: as many as the set has CPUs), whose own CPU time is after->self_s -
 * before->self_s. */
void xpb_interference_between(xpb_interference *out, const xpb_cpu_sample *before,
                              const xpb_cpu_sample *after, const struct xpb_cpu_set *set,
                              double threads);

/* Hands the heap's free memory back to the kernel and resets the process's peak resident set
 * to its current size: 0, or -1 when the kernel does not allow it (then peaks are since the
 * process started). */
int xpb_rss_reset_peak(void);

/* The process's resident set now and its peak (VmRSS, VmHWM), in bytes; 0 when unknown. */
uint64_t xpb_rss_now(void);
uint64_t xpb_rss_peak(void);

#endif
