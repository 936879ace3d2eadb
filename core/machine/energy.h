/* The host's energy meter: Intel/AMD RAPL counters under /sys/class/powercap (the powercap
 * "intel-rapl" zones), package and DRAM domains, read before and after the timed steps. Each
 * domain's counter wraps at its max_energy_range_uj; a delta is taken modulo that range (a
 * timed region shorter than one wrap period, minutes at full power, is assumed). The energy
 * files are readable by root only on most kernels since 2020 (CVE-2020-8694): then nothing is
 * measured and the reason says so. */
#ifndef XPB_CORE_ENERGY_H
#define XPB_CORE_ENERGY_H

#include <stddef.h>

#define XPB_RAPL_MAX_DOMAINS 16

typedef struct xpb_rapl_domain {
    char path[256];  /* the zone's energy_uj file */
    char name[32];   /* "package-0", "dram" ... */
    int is_dram;     /* 1: a DRAM domain, else a package domain */
    double range_uj; /* counter range; 0 when unknown (no wrap correction) */
} xpb_rapl_domain;

typedef struct xpb_rapl {
    size_t n; /* readable package and DRAM domains */
    xpb_rapl_domain domain[XPB_RAPL_MAX_DOMAINS];
    char reason[320]; /* when n == 0: why there is no meter ("permission: ...", "no RAPL ...") */
} xpb_rapl;

/* Finds the package and DRAM zones under `root` (NULL: /sys/class/powercap). Returns 0 when
 * at least one is readable, -1 otherwise with the reason in r->reason. Subdomains of a package
 * other than DRAM (core, uncore) are skipped: the package already counts them. */
int xpb_rapl_open(xpb_rapl *r, const char *root);

/* Reads every domain's counter, in microjoules, into uj[0 .. r->n). 0, or -1 when a read
 * failed (the counters of a moment are then unusable). */
int xpb_rapl_sample(const xpb_rapl *r, double *uj);

/* The energy between two samples, in joules, per kind: *package (sum of package domains) and
 * *dram (sum of DRAM domains, 0 when there is none); returns their sum. A counter that went
 * down wrapped once: its delta is after + range - before. */
double xpb_rapl_joules(const xpb_rapl *r, const double *before, const double *after,
                       double *package, double *dram);

#endif
