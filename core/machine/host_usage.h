/* What the host's other work did while a run was timed, and how much memory the run took:
 *   - interference: CPU time the rest of the machine used during the timed region, from the
 *     kernel's counters in /proc/stat minus this process's own CPU time (getrusage), plus time
 *     a hypervisor gave to other guests ("steal"); a run whose neighbours took more than
 *     XPB_INTERFERENCE_LIMIT of the machine is flagged, because its numbers are not its own
 *     (pyperf's system checks play the same role);
 *   - memory: this process's resident set before the run and its peak during it, the peak
 *     being reset between runs through /proc/self/clear_refs (Linux >= 4.0). */
#ifndef XPB_CORE_HOST_USAGE_H
#define XPB_CORE_HOST_USAGE_H

#include <stdint.h>

/* Share of the machine's CPU time taken by others above which a run is flagged. */
#define XPB_INTERFERENCE_LIMIT 0.05

typedef struct xpb_cpu_sample {
    double busy_s;  /* machine-wide non-idle CPU time (all CPUs), seconds */
    double steal_s; /* machine-wide steal time, seconds */
    double self_s;  /* this process's user + system time, seconds */
    double wall_s;  /* monotonic clock */
    int cpus;       /* CPUs the counters cover */
    int valid;      /* 0 when /proc/stat could not be read */
} xpb_cpu_sample;

/* Parses the "cpu" line of /proc/stat text into *busy_ticks and *steal_ticks (clock ticks) and
 * counts the "cpuN" lines into *cpus. 0, or -1 when the text has no cpu line. */
int xpb_proc_stat_parse(const char *text, double *busy_ticks, double *steal_ticks, int *cpus);

/* Samples the counters now. */
void xpb_cpu_sample_now(xpb_cpu_sample *out);

typedef struct xpb_interference {
    double other_share; /* CPU time of others / (wall time x CPUs), in [0, 1]; NaN: unknown */
    double steal_share; /* the part of it that was steal */
    double load_1m;     /* the 1-minute load average at the end; NaN: unknown */
    int flagged;        /* other_share > XPB_INTERFERENCE_LIMIT */
} xpb_interference;

/* What others used between two samples. */
void xpb_interference_between(xpb_interference *out, const xpb_cpu_sample *before,
                              const xpb_cpu_sample *after);

/* Resets the process's peak resident set to its current size: 0, or -1 when the kernel does
 * not allow it (then peaks are since the process started). */
int xpb_rss_reset_peak(void);

/* The process's resident set now and its peak (VmRSS, VmHWM), in bytes; 0 when unknown. */
uint64_t xpb_rss_now(void);
uint64_t xpb_rss_peak(void);

#endif
