/* Olympic scoring and the reference-convergence check (see tta_score.h). */
#include "run/tta_score.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y ? 1 : 0;
}

void xpb_tta_olympic(xpb_tta_score *out, const double *values, size_t n)
{
    memset(out, 0, sizeof *out);
    out->mean = out->min = out->max = out->stdev = NAN;
    out->runs = n;
    if (n == 0)
        return;
    double *v = malloc(n * sizeof *v);
    if (!v)
        return;
    int unmeasured = 0;
    double sum = 0, sq = 0;
    for (size_t i = 0; i < n; i++) {
        v[i] = values[i];
        unmeasured |= isnan(values[i]);
        if (isfinite(values[i])) {
            out->converged++;
            sum += values[i];
            sq += values[i] * values[i];
            out->min = isnan(out->min) || values[i] < out->min ? values[i] : out->min;
            out->max = isnan(out->max) || values[i] > out->max ? values[i] : out->max;
        }
    }
    if (out->converged >= 2) {
        double m = sum / (double)out->converged;
        double var = (sq - (double)out->converged * m * m) / (double)(out->converged - 1);
        out->stdev = var > 0 ? sqrt(var) : 0;
    }
    if (!unmeasured) {
        qsort(v, n, sizeof *v, by_value);
        size_t lo = n >= 3 ? 1 : 0, hi = n >= 3 ? n - 1 : n;
        double total = 0;
        for (size_t i = lo; i < hi; i++)
            total += v[i];
        out->used = hi - lo;
        out->mean = isfinite(total) ? total / (double)out->used : NAN;
    }
    free(v);
}

/* Measured on cpu_onednn (fp32) with the shipped settings of configs/tta-fashion-mnist.yaml: the
 * median epoch of the evaluation at which the test accuracy first reached the target
 * (docs/results.md, "Reference convergence points", says over how many seeds). A model without
 * a measured point has none: nothing is flagged for it. */
static const struct {
    const char *model, *data;
    double target, epochs;
} references[] = {
    {"conv6", "fashion-mnist", 0.90, 4.5},
    {"resnet18", "fashion-mnist", 0.92, 3.5},
};

double xpb_tta_reference_epochs(const char *model, const char *data, double target)
{
    for (size_t i = 0; i < sizeof references / sizeof references[0]; i++)
        if (model && data && strcmp(references[i].model, model) == 0 &&
            strcmp(references[i].data, data) == 0 && fabs(references[i].target - target) < 1e-9)
            return references[i].epochs;
    return 0;
}

int xpb_tta_outside_reference(double epochs, double ref)
{
    return ref > 0 && isfinite(epochs) && (epochs < 0.5 * ref || epochs > 2.0 * ref);
}
