/* Confidence intervals (see interval.h). The t distribution's CDF is the regularised
 * incomplete beta function, evaluated by its continued fraction (modified Lentz's method);
 * quantiles invert the CDF by bisection, which is plenty fast for a handful of calls. */
#include "results/interval.h"

#include <math.h>

/* log B(a, b). */
static double log_beta(double a, double b)
{
    return lgamma(a) + lgamma(b) - lgamma(a + b);
}

/* The continued fraction of I_x(a, b), valid for x < (a + 1) / (a + b + 2). */
static double beta_fraction(double a, double b, double x)
{
    const double tiny = 1e-300, eps = 1e-15;
    double c = 1, d = 1 - (a + b) * x / (a + 1);
    d = fabs(d) < tiny ? tiny : d;
    d = 1 / d;
    double f = d;
    for (int m = 1; m <= 1000; m++) {
        for (int half = 0; half < 2; half++) {
            /* even term m(b-m)x / ((a+2m-1)(a+2m)), odd term -(a+m)(a+b+m)x / ((a+2m)(a+2m+1)) */
            double num = half == 0 ? m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
                                   : -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
            d = 1 + num * d;
            d = fabs(d) < tiny ? tiny : d;
            c = 1 + num / c;
            c = fabs(c) < tiny ? tiny : c;
            d = 1 / d;
            f *= d * c;
            if (half == 1 && fabs(d * c - 1) < eps)
                return f;
        }
    }
    return f;
}

/* The regularised incomplete beta function I_x(a, b), 0 <= x <= 1. */
static double incomplete_beta(double a, double b, double x)
{
    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    double front = exp(a * log(x) + b * log1p(-x) - log_beta(a, b));
    if (x < (a + 1) / (a + b + 2))
        return front * beta_fraction(a, b, x) / a;
    return 1 - front * beta_fraction(b, a, 1 - x) / b; /* symmetry: I_x(a,b) = 1 - I_1-x(b,a) */
}

double xpb_student_t_cdf(double t, double df)
{
    if (!(df > 0) || isnan(t))
        return NAN;
    double tail = 0.5 * incomplete_beta(df / 2, 0.5, df / (df + t * t));
    return t >= 0 ? 1 - tail : tail;
}

double xpb_student_t_quantile(double p, double df)
{
    if (!(p > 0 && p < 1) || !(df > 0))
        return NAN;
    if (p == 0.5)
        return 0;
    if (p < 0.5)
        return -xpb_student_t_quantile(1 - p, df);
    double lo = 0, hi = 1;
    while (xpb_student_t_cdf(hi, df) < p && hi < 1e12)
        hi *= 2;
    for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
        double mid = 0.5 * (lo + hi);
        if (xpb_student_t_cdf(mid, df) < p)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

/* Mean and sample variance of log(x); -1 when a value is not > 0. */
static int log_moments(double *mean, double *var, const double *x, size_t n)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(x[i] > 0) || isinf(x[i]))
            return -1;
        sum += log(x[i]);
    }
    *mean = sum / (double)n;
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (log(x[i]) - *mean) * (log(x[i]) - *mean);
    *var = n > 1 ? ss / (double)(n - 1) : NAN;
    return 0;
}

int xpb_interval_geomean(xpb_interval *out, const double *x, size_t n, double level)
{
    double mean, var;
    out->estimate = out->low = out->high = NAN;
    if (n == 0 || log_moments(&mean, &var, x, n))
        return -1;
    out->estimate = exp(mean);
    if (n < 2)
        return 0;
    double half = xpb_student_t_quantile(0.5 + level / 2, (double)(n - 1)) * sqrt(var / n);
    out->low = exp(mean - half);
    out->high = exp(mean + half);
    return 0;
}

int xpb_interval_ratio(xpb_interval *out, const double *a, size_t na, const double *b, size_t nb,
                       double level)
{
    double ma, va, mb, vb;
    out->estimate = out->low = out->high = NAN;
    if (na == 0 || nb == 0 || log_moments(&ma, &va, a, na) || log_moments(&mb, &vb, b, nb))
        return -1;
    out->estimate = exp(mb - ma);
    if (na < 2 || nb < 2)
        return 0;
    double sa = va / na, sb = vb / nb, se = sqrt(sa + sb);
    if (se == 0) { /* identical repeats on both sides: the difference is exactly known */
        out->low = out->high = out->estimate;
        return 0;
    }
    double df = (sa + sb) * (sa + sb) / (sa * sa / (na - 1) + sb * sb / (nb - 1));
    double half = xpb_student_t_quantile(0.5 + level / 2, df) * se;
    out->low = exp(mb - ma - half);
    out->high = exp(mb - ma + half);
    return 0;
}

int xpb_interval_significant(const xpb_interval *iv)
{
    if (isnan(iv->low) || isnan(iv->high))
        return 0;
    return iv->low > 1 || iv->high < 1;
}
