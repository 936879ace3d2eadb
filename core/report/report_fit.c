/* Polynomial least squares with the degree chosen by AICc or by the physics, and the band that
 * says what a fit is worth (see report_fit.h). */
#include "report/report_fit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "results/interval.h"

#define SATURATION_SHARE 0.9
#define SATURATED_GAIN 0.05
#define ROUNDING 1e-10 /* relative size of rounding errors in a fit */

/* Least squares of y on the powers 0..m-1 of x / scale by Householder QR. `work` holds
 * (m + 2) * n doubles; r (may be NULL) receives the m x m triangle R (r[k][j], k <= j).
 * Returns 0, or -1 when the columns are (numerically) dependent: fewer distinct x than
 * coefficients. */
static int lsq(double *c, double r[4][4], const double *x, const double *y, size_t n, int m,
               double scale, double *work)
{
    double *a = work, *b = work + (size_t)m * n, *v = b + n; /* a: column-major, n x m */
    if (n < (size_t)m)
        return -1;
    for (size_t i = 0; i < n; i++) {
        double t = x[i] / scale, p = 1;
        for (int k = 0; k < m; k++, p *= t)
            a[(size_t)k * n + i] = p;
        b[i] = y[i];
    }
    for (int k = 0; k < m; k++) {
        double *col = a + (size_t)k * n, norm = 0;
        for (size_t i = (size_t)k; i < n; i++)
            norm += col[i] * col[i];
        norm = sqrt(norm);
        if (!(norm > 1e-12 * sqrt((double)n)))
            return -1; /* this power is a combination of the lower ones on these x */
        double alpha = col[k] > 0 ? -norm : norm, vv = 0;
        for (size_t i = (size_t)k; i < n; i++) {
            v[i] = col[i] - (i == (size_t)k ? alpha : 0);
            vv += v[i] * v[i];
        }
        for (int j = k; j <= m; j++) { /* the remaining columns, then b (j == m) */
            double *cj = j < m ? a + (size_t)j * n : b, s = 0;
            for (size_t i = (size_t)k; i < n; i++)
                s += v[i] * cj[i];
            for (size_t i = (size_t)k; vv > 0 && i < n; i++)
                cj[i] -= 2 * s / vv * v[i];
        }
        col[k] = alpha;
    }
    for (int k = m - 1; k >= 0; k--) {
        double s = b[k];
        for (int j = k + 1; j < m; j++)
            s -= a[(size_t)j * n + (size_t)k] * c[j];
        c[k] = s / a[(size_t)k * n + (size_t)k];
    }
    for (int k = 0; r && k < m; k++)
        for (int j = 0; j < m; j++)
            r[k][j] = j >= k ? a[(size_t)j * n + (size_t)k] : 0;
    return 0;
}

static double eval_scaled(const double *c, int degree, double t)
{
    double s = 0;
    for (int k = degree; k >= 0; k--)
        s = s * t + c[k];
    return s;
}

static int check_points(const double *x, const double *y, size_t n)
{
    if (n == 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]) || !isfinite(y[i]))
            return -1;
    return 0;
}

/* The inverse of the upper triangle r (m x m) into out. */
static void invert_upper(double out[4][4], double r[4][4], int m)
{
    memset(out, 0, 4 * sizeof out[0]);
    for (int j = 0; j < m; j++) {
        out[j][j] = 1 / r[j][j];
        for (int i = j - 1; i >= 0; i--) {
            double s = 0;
            for (int k = i + 1; k <= j; k++)
                s += r[i][k] * out[k][j];
            out[i][j] = -s / r[i][i];
        }
    }
}

/* The full fit of `degree` into *out with its R², residual SD and what its band needs; its
 * residual sum of squares into *ss_res. -1 when singular. */
static int fit_full(xpb_fit *out, double *ss_res, const double *x, const double *y, size_t n,
                    int degree, double scale, double *work)
{
    double c[4] = {0}, r[4][4];
    if (lsq(c, r, x, y, n, degree + 1, scale, work) != 0)
        return -1;
    out->degree = degree;
    out->n = n;
    out->x_scale = scale;
    memset(out->scaled, 0, sizeof out->scaled);
    memset(out->coef, 0, sizeof out->coef);
    for (int k = 0; k <= degree; k++) {
        out->scaled[k] = c[k];
        out->coef[k] = c[k] / pow(scale, k);
    }
    invert_upper(out->rinv, r, degree + 1);
    double mean = 0, ss_tot = 0, ss = 0;
    out->x_min = out->x_max = x[0];
    for (size_t i = 0; i < n; i++) {
        mean += y[i] / (double)n;
        out->x_min = fmin(out->x_min, x[i]);
        out->x_max = fmax(out->x_max, x[i]);
    }
    for (size_t i = 0; i < n; i++) {
        double e = y[i] - xpb_fit_eval(out, x[i]);
        ss += e * e;
        ss_tot += (y[i] - mean) * (y[i] - mean);
    }
    out->r2 = ss_tot > 0 ? 1 - ss / ss_tot : ss <= 1e-24 * (1 + mean * mean) ? 1 : 0;
    out->resid_sd = n > (size_t)degree + 1 ? sqrt(ss / (double)(n - (size_t)degree - 1)) : NAN;
    out->t975 = n > (size_t)degree + 1
                    ? xpb_student_t_quantile(0.975, (double)(n - (size_t)degree - 1))
                    : NAN;
    *ss_res = ss;
    return 0;
}

static double x_scale_of(const double *x, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s = fabs(x[i]) > s ? fabs(x[i]) : s;
    return s > 0 ? s : 1;
}

static size_t distinct_of(const double *x, size_t n)
{
    size_t d = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < i && x[j] != x[i])
            j++;
        d += j == i;
    }
    return d;
}

/* AICc of a fit of `degree` with residual sum of squares ss (floored at the rounding of y, so
 * that exact data does not make it -infinity); NaN when n <= degree + 2. */
static double aicc(double ss, size_t n, int degree, double y_max)
{
    double k = degree + 1, floor = (double)n * pow(ROUNDING * (y_max > 0 ? y_max : 1), 2);
    if ((double)n <= k + 1)
        return NAN;
    return (double)n * log(fmax(ss, floor) / (double)n) + 2 * k +
           2 * k * (k + 1) / ((double)n - k - 1);
}

xpb_status xpb_fit_poly_degree(xpb_fit *out, const double *x, const double *y, size_t n, int degree)
{
    if (check_points(x, y, n) != 0 || degree < 0 || degree > XPB_FIT_MAX_DEGREE)
        return XPB_INVALID_ARGUMENT;
    double *work = malloc((XPB_FIT_MAX_DEGREE + 3) * n * sizeof *work);
    if (!work)
        return XPB_OUT_OF_MEMORY;
    double ss, y_max = 0;
    for (size_t i = 0; i < n; i++)
        y_max = fmax(y_max, fabs(y[i]));
    xpb_status st = XPB_INVALID_ARGUMENT;
    if (fit_full(out, &ss, x, y, n, degree, x_scale_of(x, n), work) == 0) {
        out->rule = XPB_FIT_AICC;
        for (int d = 0; d <= XPB_FIT_MAX_DEGREE; d++)
            out->aicc[d] = d == degree ? aicc(ss, n, d, y_max) : NAN;
        st = XPB_OK;
    }
    free(work);
    return st;
}

/* Whether the data reject the line `line` in favour of degree d: a far better AICc (aiccs[d]
 * against aiccs[1]), and a miss of the line that matters. */
static int line_rejected(const double *aiccs, int d, const xpb_fit *line, const double *x,
                         const double *y, size_t n, double y_max)
{
    if (!isfinite(aiccs[d]) || !isfinite(aiccs[1]) || !(aiccs[d] < aiccs[1] - XPB_FIT_REJECT_AICC))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (fabs(y[i] - xpb_fit_eval(line, x[i])) > XPB_FIT_REJECT_SHARE * y_max)
            return 1;
    return 0;
}

xpb_status xpb_fit_poly(xpb_fit *out, const double *x, const double *y, size_t n, int max_degree,
                        xpb_fit_rule rule)
{
    if (check_points(x, y, n) != 0 || max_degree < 0)
        return XPB_INVALID_ARGUMENT;
    size_t distinct = distinct_of(x, n);
    if (max_degree > XPB_FIT_MAX_DEGREE)
        max_degree = XPB_FIT_MAX_DEGREE;
    double *work = malloc((XPB_FIT_MAX_DEGREE + 3) * n * sizeof *work);
    xpb_fit *fits = malloc((XPB_FIT_MAX_DEGREE + 1) * sizeof *fits);
    if (!work || !fits) {
        free(work);
        free(fits);
        return XPB_OUT_OF_MEMORY;
    }
    double scale = x_scale_of(x, n), y_max = 0, a[4] = {NAN, NAN, NAN, NAN};
    for (size_t i = 0; i < n; i++)
        y_max = fmax(y_max, fabs(y[i]));
    int have[4] = {0}, best = -1;
    for (int d = 0; d <= max_degree; d++) {
        double ss;
        /* a degree the points determine with a residual to spare (or the mean of one x) */
        if ((d > 0 && (size_t)d + 2 > distinct) || fit_full(&fits[d], &ss, x, y, n, d, scale, work))
            continue;
        have[d] = 1;
        a[d] = aicc(ss, n, d, y_max);
    }
    if (rule == XPB_FIT_AICC) { /* the lowest degree within the margin of the smallest AICc */
        double least = INFINITY;
        for (int d = 0; d <= max_degree; d++)
            least = isfinite(a[d]) ? fmin(least, a[d]) : least;
        for (int d = max_degree; d >= 0; d--)
            if (isfinite(a[d]) && a[d] <= least + XPB_FIT_AICC_MARGIN)
                best = d;
        if (best < 0 && have[0])
            best = 0; /* too few points for any criterion: the mean */
    }
    if (rule == XPB_FIT_LINEAR_UNLESS_REJECTED) {
        best = have[1] ? 1 : have[0] ? 0 : -1;
        int line = best == 1;
        for (int d = 2; line && d <= max_degree; d++) /* the best degree that rejects the line */
            if (have[d] && line_rejected(a, d, &fits[1], x, y, n, y_max) &&
                (best == 1 || a[d] < a[best]))
                best = d;
    }
    xpb_status st = best >= 0 ? XPB_OK : XPB_INVALID_ARGUMENT;
    if (st == XPB_OK) {
        *out = fits[best];
        out->rule = rule;
        memcpy(out->aicc, a, sizeof a);
    }
    free(work);
    free(fits);
    return st;
}

double xpb_fit_eval(const xpb_fit *f, double x)
{
    return eval_scaled(f->scaled, f->degree, x / f->x_scale);
}

double xpb_fit_extrapolation(const xpb_fit *f, double x)
{
    return f->x_max > 0 ? x / f->x_max : NAN;
}

double xpb_fit_band(const xpb_fit *f, double x)
{
    if (isnan(f->resid_sd))
        return NAN;
    int m = f->degree + 1;
    double v[4], t = x / f->x_scale, p = 1, h = 0;
    for (int k = 0; k < m; k++, p *= t)
        v[k] = p;
    for (int i = 0; i < m; i++) { /* w = R^-T v; h = |w|^2 */
        double w = 0;
        for (int j = 0; j <= i; j++)
            w += f->rinv[j][i] * v[j];
        h += w * w;
    }
    double band = f->t975 * f->resid_sd * sqrt(1 + h);
    if (x > f->x_max)
        band += XPB_FIT_MODEL_ERROR * fabs(xpb_fit_eval(f, x) - xpb_fit_eval(f, f->x_max));
    return band;
}

long xpb_fit_largest_within(const xpb_fit *f, double budget, long b_max, int band)
{
    for (long b = 1; b <= b_max; b++) {
        double w = band ? xpb_fit_band(f, (double)b) : 0;
        if (!(xpb_fit_eval(f, (double)b) + band * (isnan(w) ? 0 : w) <= budget))
            return b - 1;
    }
    return b_max;
}

xpb_status xpb_fit_saturation(xpb_saturation *out, const xpb_fit *step_time, long lo, long hi)
{
    if (lo < 1 || hi < lo)
        return XPB_INVALID_ARGUMENT;
    double best = 0;
    for (long b = lo; b <= hi; b++) {
        double t = xpb_fit_eval(step_time, (double)b);
        if (!(t > 0))
            return XPB_INVALID_ARGUMENT;
        best = (double)b / t > best ? (double)b / t : best;
    }
    out->best = best;
    out->batch = hi;
    for (long b = lo; b <= hi; b++)
        if ((double)b / xpb_fit_eval(step_time, (double)b) >= SATURATION_SHARE * best) {
            out->batch = b;
            break;
        }
    long half = hi / 2 > lo ? hi / 2 : lo;
    double t_hi = (double)hi / xpb_fit_eval(step_time, (double)hi);
    double t_half = (double)half / xpb_fit_eval(step_time, (double)half);
    out->last_gain = t_hi / t_half - 1;
    out->saturated = out->last_gain < SATURATED_GAIN;
    return XPB_OK;
}
