/* Polynomial least squares for the report's curves (memory and step time against batch size):
 * a polynomial of degree 0 to 3 fitted by least squares (Householder QR on the Vandermonde
 * matrix of x scaled to [-1, 1], so that a cubic in batch sizes up to 65536 stays well
 * conditioned), the degree chosen by leave-one-out cross-validation: each point is predicted
 * by the fit to the others, and the degree with the smallest root-mean-square prediction error
 * wins (a lower degree on ties). R² says how much of the variation the fit explains; the
 * leave-one-out error says how well it predicts a point it did not see, which is what a
 * projection to larger batches needs. */
#ifndef XPB_CORE_REPORT_FIT_H
#define XPB_CORE_REPORT_FIT_H

#include <stddef.h>

#include <xpubench/status.h>

#define XPB_FIT_MAX_DEGREE 3

typedef struct xpb_fit {
    int degree;      /* 0 .. XPB_FIT_MAX_DEGREE */
    size_t n;        /* points fitted */
    double coef[4];  /* y = coef[0] + coef[1] x + coef[2] x^2 + coef[3] x^3, in the data's units
                        (zero above the degree) */
    double r2;       /* coefficient of determination on the points (1: exact) */
    double loo_rmse; /* leave-one-out RMS error of the chosen degree; NaN when
                        there were too few points to leave one out */
    double loo_rmse_by_degree[4]; /* the same per degree; NaN for degrees not tried */
    double x_scale;               /* internal: |x| is divided by it before the powers */
    double scaled[4];             /* internal: coefficients of the scaled x */
} xpb_fit;

/* Fits x[0..n) -> y[0..n) with the degree (at most max_degree, at most 3) whose leave-one-out
 * error is smallest. A degree d is tried when leaving any point out still leaves d + 1
 * distinct x values (so d <= distinct - 2); with a single distinct x the fit is the mean
 * (degree 0, loo_rmse NaN). Returns XPB_INVALID_ARGUMENT when n is 0, max_degree is negative
 * or a value is not finite. */
xpb_status xpb_fit_poly(xpb_fit *out, const double *x, const double *y, size_t n, int max_degree);

/* Fits exactly `degree` (0..3) by least squares, without choosing; loo_rmse is computed when
 * possible. XPB_INVALID_ARGUMENT when there are fewer than degree + 1 distinct x values. */
xpb_status xpb_fit_poly_degree(xpb_fit *out, const double *x, const double *y, size_t n,
                               int degree);

/* The fitted value at x. */
double xpb_fit_eval(const xpb_fit *f, double x);

/* The largest batch b in [1, b_max] such that the fit stays at or below `budget` at every
 * batch 1..b: 0 when it is above already at batch 1, b_max when it never gets there. */
long xpb_fit_largest_within(const xpb_fit *f, double budget, long b_max);

/* Where throughput saturates, from a fit of step time against batch over the measured batches
 * [lo, hi]: throughput(b) = b / step_time(b). */
typedef struct xpb_saturation {
    long batch;       /* the smallest batch in [lo, hi] whose fitted throughput reaches 90%
                         of the best fitted throughput in [lo, hi] */
    double best;      /* that best throughput, samples/s when step times are in seconds */
    double last_gain; /* fitted throughput at hi / at hi/2 (at least lo) - 1: what the last
                         doubling of the batch gained */
    int saturated;    /* last_gain < 5%: larger batches would not run much faster */
} xpb_saturation;

/* XPB_INVALID_ARGUMENT when lo < 1, hi < lo or the fitted step time is not > 0 somewhere in
 * [lo, hi] (a fit that predicts no time has no throughput). */
xpb_status xpb_fit_saturation(xpb_saturation *out, const xpb_fit *step_time, long lo, long hi);

#endif
