/* Confidence intervals for benchmark numbers (docs/results.md, "Uncertainty").
 *
 * The unit of replication is the repeat: each repeat of a run is its own timing window, while
 * the steps inside one are not independent of each other (a slow neighbour or a clock change
 * moves many of them together). So intervals come from the per-repeat throughputs, on a log
 * scale (ratios of speeds are what people compare, and a log scale makes them symmetric):
 *   - a run's throughput: Student's t-interval on the mean of log(repeat throughput), i.e. an
 *     interval for the geometric mean throughput;
 *   - a speedup between two runs: Welch's t-interval on the difference of the two means of log
 *     throughput (Welch-Satterthwaite degrees of freedom), exponentiated.
 * Both need at least two repeats on each side; with fewer there is no interval. */
#ifndef XPB_CORE_INTERVAL_H
#define XPB_CORE_INTERVAL_H

#include <stddef.h>

/* P(T <= t) for Student's t distribution with df > 0 degrees of freedom. */
double xpb_student_t_cdf(double t, double df);

/* The p-quantile (0 < p < 1) of Student's t with df > 0; NaN for arguments outside. */
double xpb_student_t_quantile(double p, double df);

/* A ratio and its interval: ratio in [low, high] at the given level. */
typedef struct xpb_interval {
    double estimate;
    double low, high; /* NaN when there is no interval (too few samples) */
} xpb_interval;

/* The geometric mean of x[0..n-1] (all > 0) and its `level` (e.g. 0.95) interval. Returns 0;
 * -1 when n == 0 or a value is not > 0. With n == 1 the interval is NaN. */
int xpb_interval_geomean(xpb_interval *out, const double *x, size_t n, double level);

/* geomean(b) / geomean(a) and its Welch interval: how many times larger b is than a.
 * Returns 0; -1 when a side is empty or has a value not > 0. The interval is NaN unless both
 * sides have at least two values. */
int xpb_interval_ratio(xpb_interval *out, const double *a, size_t na, const double *b, size_t nb,
                       double level);

/* Whether the interval excludes 1 (a real difference); 0 when there is no interval. */
int xpb_interval_significant(const xpb_interval *iv);

#endif
