/* Summary statistics (see stats.h). */
#include "run/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double xpb_quantile_sorted(const double *sorted, size_t n, double q)
{
    if (n == 0)
        return NAN;
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)floor(pos), hi = lo + 1 < n ? lo + 1 : lo;
    double frac = pos - (double)lo;
    return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

int xpb_summarize(xpb_summary *out, const double *samples, size_t n)
{
    if (n == 0)
        return -1;
    double *s = malloc(n * sizeof *s);
    if (!s)
        return -1;
    memcpy(s, samples, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += s[i];
    double mean = sum / (double)n, var = 0;
    for (size_t i = 0; i < n; i++)
        var += (s[i] - mean) * (s[i] - mean);
    var = n > 1 ? var / (double)(n - 1) : 0;
    out->mean = mean;
    out->min = s[0];
    out->max = s[n - 1];
    out->p50 = xpb_quantile_sorted(s, n, 0.50);
    out->p95 = xpb_quantile_sorted(s, n, 0.95);
    out->p99 = xpb_quantile_sorted(s, n, 0.99);
    out->cv = mean > 0 ? sqrt(var) / mean : 0;
    free(s);
    return 0;
}
