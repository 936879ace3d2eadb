/* Summary statistics of timed samples. */
#ifndef XPB_CORE_STATS_H
#define XPB_CORE_STATS_H

#include <stddef.h>

typedef struct xpb_summary {
    double mean, min, max;
    double p50, p95, p99; /* linear interpolation between order statistics (NumPy's default) */
    double cv;            /* coefficient of variation: sample standard deviation / mean */
} xpb_summary;

/* Summarises n >= 1 samples (not modified). Returns -1 when out of memory or n == 0. */
int xpb_summarize(xpb_summary *out, const double *samples, size_t n);

/* The q-quantile (0..1) of n sorted samples. */
double xpb_quantile_sorted(const double *sorted, size_t n, double q);

#endif
