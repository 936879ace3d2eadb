/* The comparison of a backend's tensors with the reference's (see compare.h). */
#include "check/judge.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <xpubench/backend.h>

/* The tolerances, one row per precision policy (docs/conformance.md explains each number):
 * - op: fp32 1e-4, some 1000 ulps of fp32 (two correct fp32 implementations differ by 1e-7 ..
 *   1e-5 on the suite's cases); tf32 and fp16 (10 mantissa bits) 2e-2; bf16 (7 bits) 5e-2.
 * - forward (of a whole model step, 20 to 50 layers deep): fp32 as op; reduced precision
 *   twice op: PyTorch 1.13's own CPU autocast misses CycleGAN's generator output by 0.059
 *   (max-relative), cpu_onednn's bf16 its discriminator losses by 0.04.
 * - gradient (fp32): 100 times op, for the max-pool ties and ReLU kinks the host cannot see: a
 *   correct backend that resolves one differently from the reference moves the gradients below
 *   it (conv6 at batch 64 on oneDNN: 1.7e-3 on conv1.weight.grad).
 * - together 0.5: what is left to check of gradients that are not comparable one by one is
 *   their direction and size; a wrong kernel, a missing or sign-flipped gradient is off by 1 or
 *   more, while bf16 rounding amplified by batch-norm backward at initialisation reaches 0.32
 *   on cpu_onednn (resnet18-cifar, batch 2) and PyTorch 1.13's own CPU autocast 0.28.
 * - floor: 1% of the group's scale in fp32, 10% under reduced precision. */
static const xpb_tolerance tolerances[] = {
    {XPB_PRECISION_FP32, 1e-4, 1e-4, 1e-2, 0.5, 0.01},
    {XPB_PRECISION_TF32, 2e-2, 4e-2, 0.0, 0.5, 0.1},
    {XPB_PRECISION_BF16_MIXED, 5e-2, 1e-1, 0.0, 0.5, 0.1},
    {XPB_PRECISION_FP16_MIXED, 2e-2, 4e-2, 0.0, 0.5, 0.1},
};

const xpb_tolerance *xpb_tolerance_for(uint32_t precision)
{
    for (size_t i = 0; i < sizeof tolerances / sizeof tolerances[0]; i++)
        if (tolerances[i].precision == precision)
            return &tolerances[i];
    return &tolerances[2]; /* bf16: the loosest row */
}

void xpb_compare_init(xpb_compare *c, uint32_t precision, double scale)
{
    memset(c, 0, sizeof *c);
    c->tol = xpb_tolerance_for(precision);
    c->scale = scale > 0 ? scale : 1.0;
}

void xpb_compare_free(xpb_compare *c)
{
    if (!c)
        return;
    free(c->v);
    c->v = NULL;
    c->n = c->cap = 0;
}

xpb_status xpb_compare_add(xpb_compare *c, const char *name, uint32_t group, uint32_t kind,
                           const float *x, const float *ref, int64_t n)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 16;
        xpb_compare_tensor *v = realloc(c->v, cap * sizeof *v);
        if (!v)
            return XPB_OUT_OF_MEMORY;
        c->v = v;
        c->cap = cap;
    }
    xpb_compare_tensor *t = &c->v[c->n++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->group = group;
    t->kind = kind;
    t->n = n;
    for (int64_t i = 0; i < n; i++) {
        double a = x[i], r = ref[i];
        if (!isfinite(a) || !isfinite(r)) {
            /* the same infinity on both sides agrees; NaN never does */
            if (a != r)
                t->nonfinite = 1;
            continue;
        }
        double d = fabs(a - r);
        t->diff_sq += d * d;
        t->ref_sq += r * r;
        if (d > t->max_abs)
            t->max_abs = d;
        if (fabs(r) > t->ref_max)
            t->ref_max = fabs(r);
    }
    if (t->nonfinite)
        t->max_abs = INFINITY;
    return XPB_OK;
}

static double rms(const xpb_compare_tensor *t)
{
    return t->n > 0 ? sqrt(t->ref_sq / (double)t->n) : 0.0;
}

/* ||x - r|| / max(||r||, floor * sqrt(n) * S), S the largest reference RMS of the group. */
static void compute_errors(xpb_compare *c)
{
    for (size_t i = 0; i < c->n; i++) {
        xpb_compare_tensor *t = &c->v[i];
        double scale = 0.0;
        for (size_t j = 0; j < c->n; j++)
            if (c->v[j].group == t->group && rms(&c->v[j]) > scale)
                scale = rms(&c->v[j]);
        double floor = c->tol->floor * sqrt((double)t->n) * scale;
        double norm = sqrt(t->ref_sq) > floor ? sqrt(t->ref_sq) : floor;
        if (t->nonfinite)
            t->error = INFINITY;
        else if (t->diff_sq == 0.0)
            t->error = 0.0;
        else
            t->error = norm > 0.0 ? sqrt(t->diff_sq) / norm : INFINITY;
    }
}

/* ||x - r|| / ||r|| over every tensor of `kind` taken as one vector. */
static double together_error(const xpb_compare *c, uint32_t kind)
{
    double diff = 0.0, ref = 0.0;
    for (size_t i = 0; i < c->n; i++) {
        if (c->v[i].kind != kind)
            continue;
        if (c->v[i].nonfinite)
            return INFINITY;
        diff += c->v[i].diff_sq;
        ref += c->v[i].ref_sq;
    }
    if (diff == 0.0)
        return 0.0;
    return ref > 0.0 ? sqrt(diff / ref) : INFINITY;
}

/* The tolerance of each tensor of `kind`; 0 when the kind is judged together. */
static double each_tolerance(const xpb_compare *c, uint32_t kind)
{
    if (kind == XPB_COMPARE_OP)
        return c->tol->op * c->scale;
    if (kind == XPB_COMPARE_FORWARD)
        return c->tol->forward * c->scale;
    if (c->tol->gradient <= 0.0 || c->kink_flips > 0)
        return 0.0;
    return c->tol->gradient * c->scale;
}

void xpb_compare_judge(xpb_compare_verdict *out, xpb_compare *c, uint32_t kind)
{
    memset(out, 0, sizeof *out);
    compute_errors(c);
    double each = each_tolerance(c, kind);
    double worst_ratio = -1.0;
    for (size_t i = 0; i < c->n; i++) {
        const xpb_compare_tensor *t = &c->v[i];
        if (t->kind != kind)
            continue;
        out->compared++;
        if (t->max_abs > out->max_abs)
            out->max_abs = t->max_abs;
        double ratio = each > 0.0 ? t->error / each : t->error;
        if (ratio > worst_ratio) { /* errors are never NaN: a non-finite one is infinite */
            worst_ratio = ratio;
            snprintf(out->worst, sizeof out->worst, "%s", t->name);
            out->worst_error = t->error;
        }
    }
    out->together = each == 0.0;
    out->tolerance = out->together ? c->tol->together * c->scale : each;
    out->error = out->together ? together_error(c, kind) : out->worst_error;
    out->passed = out->compared == 0 || out->error <= out->tolerance;
}

void xpb_compare_judge_all(xpb_compare_verdict *out, xpb_compare *c)
{
    memset(out, 0, sizeof *out);
    out->passed = 1;
    double worst = -1.0;
    for (uint32_t kind = 0; kind < XPB_COMPARE_KINDS; kind++) {
        xpb_compare_verdict v;
        xpb_compare_judge(&v, c, kind);
        if (!v.compared)
            continue;
        double max_abs = out->max_abs > v.max_abs ? out->max_abs : v.max_abs;
        int compared = out->compared + v.compared, passed = out->passed && v.passed;
        if (v.error / v.tolerance > worst) {
            worst = v.error / v.tolerance;
            *out = v;
        }
        out->max_abs = max_abs;
        out->compared = compared;
        out->passed = passed;
    }
}

void xpb_compare_print(FILE *f, const xpb_compare *c)
{
    if (!f)
        return;
    for (size_t i = 0; i < c->n; i++) {
        const xpb_compare_tensor *t = &c->v[i];
        fprintf(f, "      %-40s max|ref| %10.3e  max_abs %10.3e  error %10.3e%s\n", t->name,
                t->ref_max, t->max_abs, t->error,
                t->kind == XPB_COMPARE_GRADIENT ? "  (gradient)" : "");
    }
}
