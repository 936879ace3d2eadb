/* Polynomial least squares with the degree chosen by leave-one-out error (see report_fit.h). */
#include "report/report_fit.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NO_SKIP SIZE_MAX
#define SATURATION_SHARE 0.9
#define SATURATED_GAIN 0.05
#define ROUNDING 1e-10 /* relative size of rounding errors in a fit */

/* Least squares of y on the powers 0..m-1 of x / scale, leaving out row `skip` (NO_SKIP: none),
 * by Householder QR. `work` holds (m + 2) * n doubles. Returns 0, or -1 when the columns
 * are (numerically) dependent: fewer distinct x than coefficients. */
static int lsq(double *c, const double *x, const double *y, size_t n, int m, double scale,
               size_t skip, double *work)
{
    size_t rows = 0;
    double *a = work, *b = work + (size_t)m * n, *v = b + n; /* a: column-major, rows x m */
    for (size_t i = 0; i < n; i++) {
        if (i == skip)
            continue;
        double t = x[i] / scale, p = 1;
        for (int k = 0; k < m; k++, p *= t)
            a[(size_t)k * n + rows] = p;
        b[rows++] = y[i];
    }
    if (rows < (size_t)m)
        return -1;
    for (int k = 0; k < m; k++) {
        double *col = a + (size_t)k * n, norm = 0;
        for (size_t i = (size_t)k; i < rows; i++)
            norm += col[i] * col[i];
        norm = sqrt(norm);
        if (!(norm > 1e-12 * sqrt((double)rows)))
            return -1; /* this power is a combination of the lower ones on these x */
        double alpha = col[k] > 0 ? -norm : norm, vv = 0;
        for (size_t i = (size_t)k; i < rows; i++) {
            v[i] = col[i] - (i == (size_t)k ? alpha : 0);
            vv += v[i] * v[i];
        }
        for (int j = k; j <= m; j++) { /* the remaining columns, then b (j == m) */
            double *cj = j < m ? a + (size_t)j * n : b, s = 0;
            for (size_t i = (size_t)k; i < rows; i++)
                s += v[i] * cj[i];
            for (size_t i = (size_t)k; vv > 0 && i < rows; i++)
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
    return 0;
}

static double eval_scaled(const double *c, int degree, double t)
{
    double s = 0;
    for (int k = degree; k >= 0; k--)
        s = s * t + c[k];
    return s;
}

/* The leave-one-out RMS error of degree d; NaN when some subset cannot be fitted. */
static double loo_rmse(const double *x, const double *y, size_t n, int d, double scale,
                       double *work)
{
    if (n < (size_t)d + 2)
        return NAN;
    double sum = 0, c[4];
    for (size_t i = 0; i < n; i++) {
        if (lsq(c, x, y, n, d + 1, scale, i, work) != 0)
            return NAN;
        double e = eval_scaled(c, d, x[i] / scale) - y[i];
        sum += e * e;
    }
    return sqrt(sum / (double)n);
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

/* The full fit of `degree` into *out, with its R². -1 when singular. */
static int fit_full(xpb_fit *out, const double *x, const double *y, size_t n, int degree,
                    double scale, double *work)
{
    double c[4] = {0};
    if (lsq(c, x, y, n, degree + 1, scale, NO_SKIP, work) != 0)
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
    double mean = 0, ss_tot = 0, ss_res = 0;
    for (size_t i = 0; i < n; i++)
        mean += y[i] / (double)n;
    for (size_t i = 0; i < n; i++) {
        double e = y[i] - xpb_fit_eval(out, x[i]);
        ss_res += e * e;
        ss_tot += (y[i] - mean) * (y[i] - mean);
    }
    out->r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : ss_res <= 1e-24 * (1 + mean * mean) ? 1 : 0;
    return 0;
}

static double x_scale_of(const double *x, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s = fabs(x[i]) > s ? fabs(x[i]) : s;
    return s > 0 ? s : 1;
}

xpb_status xpb_fit_poly_degree(xpb_fit *out, const double *x, const double *y, size_t n, int degree)
{
    if (check_points(x, y, n) != 0 || degree < 0 || degree > XPB_FIT_MAX_DEGREE)
        return XPB_INVALID_ARGUMENT;
    double *work = malloc((XPB_FIT_MAX_DEGREE + 3) * n * sizeof *work);
    if (!work)
        return XPB_OUT_OF_MEMORY;
    double scale = x_scale_of(x, n);
    xpb_status st = XPB_INVALID_ARGUMENT;
    if (fit_full(out, x, y, n, degree, scale, work) == 0) {
        for (int d = 0; d <= XPB_FIT_MAX_DEGREE; d++)
            out->loo_rmse_by_degree[d] = NAN;
        out->loo_rmse = out->loo_rmse_by_degree[degree] = loo_rmse(x, y, n, degree, scale, work);
        st = XPB_OK;
    }
    free(work);
    return st;
}

xpb_status xpb_fit_poly(xpb_fit *out, const double *x, const double *y, size_t n, int max_degree)
{
    if (check_points(x, y, n) != 0 || max_degree < 0)
        return XPB_INVALID_ARGUMENT;
    if (max_degree > XPB_FIT_MAX_DEGREE)
        max_degree = XPB_FIT_MAX_DEGREE;
    double *work = malloc((XPB_FIT_MAX_DEGREE + 3) * n * sizeof *work);
    if (!work)
        return XPB_OUT_OF_MEMORY;
    double scale = x_scale_of(x, n), loo[4] = {NAN, NAN, NAN, NAN}, y_max = 0;
    for (size_t i = 0; i < n; i++)
        y_max = fabs(y[i]) > y_max ? fabs(y[i]) : y_max;
    int best = 0;
    for (int d = 0; d <= max_degree; d++) {
        loo[d] = loo_rmse(x, y, n, d, scale, work);
        /* a higher degree must predict better by more than rounding to be chosen: on exact
           data every degree above the true one has an error of rounding size */
        if (isfinite(loo[d]) &&
            (!isfinite(loo[best]) || loo[d] < loo[best] * (1 - 1e-9) - ROUNDING * y_max))
            best = d;
    }
    xpb_status st = fit_full(out, x, y, n, best, scale, work) == 0 ? XPB_OK : XPB_INVALID_ARGUMENT;
    free(work);
    if (st == XPB_OK) {
        memcpy(out->loo_rmse_by_degree, loo, sizeof loo);
        out->loo_rmse = loo[best];
    }
    return st;
}

double xpb_fit_eval(const xpb_fit *f, double x)
{
    return eval_scaled(f->scaled, f->degree, x / f->x_scale);
}

long xpb_fit_largest_within(const xpb_fit *f, double budget, long b_max)
{
    for (long b = 1; b <= b_max; b++)
        if (!(xpb_fit_eval(f, (double)b) <= budget))
            return b - 1;
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
