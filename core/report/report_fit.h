/* Polynomial least squares for the report's curves (memory and step time against batch size):
 * a polynomial of degree 0 to 3 fitted by least squares (Householder QR on the Vandermonde
 * matrix of x scaled by its largest |x|, so that a cubic in batch sizes up to 65536 stays well
 * conditioned). The degree is chosen by one of two rules:
 *   - XPB_FIT_AICC, an information criterion: the corrected Akaike criterion
 *     AICc = n ln(SSres / n) + 2k + 2k(k + 1) / (n - k - 1), k = degree + 1 coefficients,
 *     which charges every coefficient more the fewer the points; the lowest degree whose AICc
 *     is within XPB_FIT_AICC_MARGIN of the smallest wins (Burnham and Anderson: models within
 *     2 of the best are about equally supported, so the simpler one). A degree is tried only when
 * AICc is defined (n > degree + 2) and the distinct x leave it a residual (degree <= distinct x -
 * 2): three points support a constant, four a line, five a quadratic, six a cubic;
 *   - XPB_FIT_LINEAR_UNLESS_REJECTED, physics: memory is a fixed part plus a part per sample,
 *     so the fit is a line unless the data reject it: a higher degree only when its AICc is
 *     lower than the line's by more than XPB_FIT_REJECT_AICC (Burnham and Anderson's "no
 *     support" for the line) and the line misses some point by more than
 *     XPB_FIT_REJECT_SHARE of the largest |y| (a miss that matters: sub-MiB noise at small
 *     batches never bends a memory fit).
 * Every fit says what it is worth: R² (the share of the variation it explains), the residual
 * standard deviation, the range of x it saw (a value beyond it is an extrapolation, by the
 * factor x / largest fitted x), and a 95% band at any x that widens with the extrapolation. */
#ifndef XPB_CORE_REPORT_FIT_H
#define XPB_CORE_REPORT_FIT_H

#include <stddef.h>

#include <xpubench/status.h>

#define XPB_FIT_MAX_DEGREE 3
#define XPB_FIT_AICC_MARGIN 2.0
#define XPB_FIT_REJECT_AICC 10.0
#define XPB_FIT_REJECT_SHARE 0.02
/* Below this R² a fit explains too little to conclude from (saturation, the best throughput,
 * the largest batch that fits): the report shows the fit and says why it concludes nothing. */
#define XPB_FIT_R2_MIN 0.9
/* The part of a projection's increment beyond the data that the band adds as model error:
 * memory sweeps of conv6 and resnet18 on cpu_onednn fitted on batches 1..32 missed batch 128
 * by up to 21% of that increment (cpu_onednn picks algorithms by timing at compile, which moves
 * its scratch memory from run to run), docs/report.md. */
#define XPB_FIT_MODEL_ERROR 0.25

typedef enum xpb_fit_rule {
    XPB_FIT_AICC,                  /* degree by AICc */
    XPB_FIT_LINEAR_UNLESS_REJECTED /* a line unless the data reject it */
} xpb_fit_rule;

typedef struct xpb_fit {
    int degree;          /* 0 .. XPB_FIT_MAX_DEGREE */
    xpb_fit_rule rule;   /* how the degree was chosen (xpb_fit_poly_degree: XPB_FIT_AICC) */
    size_t n;            /* points fitted */
    double coef[4];      /* y = coef[0] + coef[1] x + coef[2] x^2 + coef[3] x^3, in the data's
                            units (zero above the degree) */
    double r2;           /* coefficient of determination on the points (1: exact) */
    double resid_sd;     /* residual standard deviation, sqrt(SSres / (n - degree - 1)), in y's
                            unit; NaN when n <= degree + 1 (no residual left) */
    double aicc[4];      /* AICc per degree; NaN for degrees not tried */
    double x_min, x_max; /* the range of the fitted x */
    double t975;         /* internal: t(0.975, n - degree - 1), NaN without residual */
    double x_scale;      /* internal: x is divided by it before the powers */
    double scaled[4];    /* internal: coefficients of the scaled x */
    double rinv[4][4];   /* internal: R^-1 of the QR of the scaled design matrix (leverage) */
} xpb_fit;

/* Fits x[0..n) -> y[0..n) with the degree (at most max_degree, at most 3) that `rule` picks.
 * With a single distinct x the fit is the mean (degree 0). Returns XPB_INVALID_ARGUMENT when n
 * is 0, max_degree is negative or a value is not finite, XPB_OUT_OF_MEMORY. */
xpb_status xpb_fit_poly(xpb_fit *out, const double *x, const double *y, size_t n, int max_degree,
                        xpb_fit_rule rule);

/* Fits exactly `degree` (0..3) by least squares, without choosing. XPB_INVALID_ARGUMENT when
 * there are fewer than degree + 1 distinct x values. */
xpb_status xpb_fit_poly_degree(xpb_fit *out, const double *x, const double *y, size_t n,
                               int degree);

/* The fitted value at x. */
double xpb_fit_eval(const xpb_fit *f, double x);

/* How far beyond the data x is: x / the largest fitted x (at most 1 inside the data). */
double xpb_fit_extrapolation(const xpb_fit *f, double x);

/* The half-width of the fit's 95% band at x: the prediction interval of a new point,
 * t(0.975, n - degree - 1) s sqrt(1 + h(x)) with s the residual SD and h(x) the leverage of x
 * (which grows with x's distance from the fitted x's), plus, beyond the largest fitted x,
 * XPB_FIT_MODEL_ERROR times the projected increment |f(x) - f(x_max)|, the error of the model
 * itself, which the residuals of the measured range cannot show. NaN when there is no
 * residual left (n <= degree + 1). */
double xpb_fit_band(const xpb_fit *f, double x);

/* The largest batch b in [1, b_max] such that the fit plus `band` times its band
 * (xpb_fit_band: -1 the band's low edge, 0 the fit, 1 its high edge) stays at or below `budget`
 * at every batch 1..b: 0 when it is above already at batch 1, b_max when it never gets there.
 * A NaN band counts as 0. */
long xpb_fit_largest_within(const xpb_fit *f, double budget, long b_max, int band);

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
 * [lo, hi] (a fit that predicts no time has no throughput). What to conclude from it depends
 * on the fit's R² (XPB_FIT_R2_MIN): the caller's to judge. */
xpb_status xpb_fit_saturation(xpb_saturation *out, const xpb_fit *step_time, long lo, long hi);

#endif
