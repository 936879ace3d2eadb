/* The comparison of a backend's tensors with the reference's (see judge.h). */
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
 *   it (conv6 at batch 64 on oneDNN: 1.7e-3 on conv1.weight.grad). The conformance suite's
 *   model rows only: verification aligns the near-ties.
 * - aligned (fp32): the forward tolerance, for gradients against a reference that took the
 *   backend's side of every near-tie (kinks.h), where only rounding is left: cpu_onednn's
 *   largest error on the standard runs is 2.9e-5 (a batch-norm weight gradient of
 *   resnet18-imagenet-train), and a weight gradient 1e-3 off fails tenfold. Floored by 0.1% of
 *   the layer's scale (verification groups gradients by layer): a weight gradient can be 1/100
 *   of its own bias gradient (conv6's fc2), and a larger floor would dilute its error.
 * - together 0.5: what is left to check of gradients that are not comparable one by one is
 *   their direction and size; a wrong kernel, a missing or sign-flipped gradient is off by 1 or
 *   more, while bf16 rounding amplified by batch-norm backward at initialisation reaches 0.32
 *   on cpu_onednn (resnet18-cifar, batch 2) and PyTorch 1.13's own CPU autocast 0.28.
 * - floor: 1% of the group's scale in fp32, 10% under reduced precision. A tensor that is zero
 *   in exact arithmetic is floored by 100% of it: both sides hold rounding noise (cpu_onednn's
 *   on CycleGAN's biases before instance norm: up to 1.2e-5 of the layer's scale). */
static const xpb_tolerance tolerances[] = {
    /* precision, op, forward, gradient, together, floor, aligned, aligned floor */
    {XPB_PRECISION_FP32, 1e-4, 1e-4, 1e-2, 0.5, 0.01, 1e-4, 1e-3},
    {XPB_PRECISION_TF32, 2e-2, 4e-2, 0.0, 0.5, 0.1, 0.0, 0.0},
    {XPB_PRECISION_BF16_MIXED, 5e-2, 1e-1, 0.0, 0.5, 0.1, 0.0, 0.0},
    {XPB_PRECISION_FP16_MIXED, 2e-2, 4e-2, 0.0, 0.5, 0.1, 0.0, 0.0},
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

xpb_status xpb_compare_add_shaped(xpb_compare *c, const char *name, uint32_t group, uint32_t kind,
                                  const float *x, const float *ref, uint32_t ndim,
                                  const int64_t *dims)
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
    t->ndim = ndim >= 1 && ndim <= 4 ? ndim : 1;
    t->n = 1;
    for (uint32_t d = 0; d < 4; d++) {
        t->dims[d] = d < t->ndim ? dims[d] : 1;
        t->n *= t->dims[d];
    }
    double worst = -1.0;
    for (int64_t i = 0; i < t->n; i++) {
        double a = x[i], r = ref[i];
        if (!isfinite(a) || !isfinite(r)) {
            /* the same infinity on both sides agrees; NaN never does. The first disagreement
             * is the worst element. */
            if (a != r && !t->nonfinite) {
                t->nonfinite = 1;
                t->worst = i;
            }
            continue;
        }
        double d = fabs(a - r);
        t->diff_sq += d * d;
        t->ref_sq += r * r;
        if (d > worst && !t->nonfinite) {
            worst = d;
            t->worst = i;
        }
        if (d > t->max_abs)
            t->max_abs = d;
        if (fabs(r) > t->ref_max)
            t->ref_max = fabs(r);
    }
    if (t->nonfinite)
        t->max_abs = INFINITY;
    if (t->n > 0) {
        t->worst_x = x[t->worst];
        t->worst_ref = ref[t->worst];
    }
    return XPB_OK;
}

xpb_status xpb_compare_add(xpb_compare *c, const char *name, uint32_t group, uint32_t kind,
                           const float *x, const float *ref, int64_t n)
{
    return xpb_compare_add_shaped(c, name, group, kind, x, ref, 1, &n);
}

void xpb_compare_coords(int64_t coords[4], int64_t index, uint32_t ndim, const int64_t *dims)
{
    for (int d = 3; d >= 0; d--) {
        int64_t size = (uint32_t)d < ndim && dims[d] > 0 ? dims[d] : 1;
        coords[d] = (uint32_t)d < ndim ? index % size : 0;
        index /= size;
    }
}

void xpb_compare_format_located(char *buf, size_t size, const struct xpb_located *l)
{
    char at[96] = "";
    size_t used = 0;
    for (uint32_t d = 0; d < l->ndim && d < 4 && used < sizeof at; d++)
        used += (size_t)snprintf(at + used, sizeof at - used, "%s%lld", d ? ", " : "",
                                 (long long)l->coords[d]);
    snprintf(buf, size, "element %lld (%s): %.7g against %.7g", (long long)l->index, at, l->value,
             l->reference);
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
        double fraction = c->tol->floor;
        if (t->zero)
            fraction = 1.0;
        else if (t->kind == XPB_COMPARE_GRADIENT && c->aligned && c->tol->aligned > 0.0)
            fraction = c->tol->aligned_floor;
        double floor = fraction * sqrt((double)t->n) * scale;
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
    if (c->aligned && c->tol->aligned > 0.0)
        return c->tol->aligned * c->scale;
    if (c->tol->gradient <= 0.0 || c->kink_flips > 0)
        return 0.0;
    return c->tol->gradient * c->scale;
}

/* The location of tensor t, judged against `tolerance`. */
static void locate(struct xpb_located *l, const xpb_compare_tensor *t, double tolerance)
{
    memset(l, 0, sizeof *l);
    snprintf(l->tensor, sizeof l->tensor, "%s", t->name);
    l->error = t->error;
    l->tolerance = tolerance;
    l->index = t->worst;
    l->ndim = t->ndim;
    xpb_compare_coords(l->coords, t->worst, t->ndim, t->dims);
    l->value = t->worst_x;
    l->reference = t->worst_ref;
}

/* How far a located failure is from its tolerance (its error when judged together). */
static double ratio_of(const struct xpb_located *l)
{
    return l->tolerance > 0.0 ? l->error / l->tolerance : l->error;
}

/* Inserts *l into the verdict's located failures, kept furthest from tolerance first (the
 * nearest falls off a full list). */
static void insert_located(xpb_compare_verdict *out, const struct xpb_located *l)
{
    uint32_t at = out->n_located;
    while (at > 0 && ratio_of(&out->located[at - 1]) < ratio_of(l))
        at--;
    if (at >= XPB_COMPARE_LOCATED_MAX)
        return;
    uint32_t last =
        out->n_located < XPB_COMPARE_LOCATED_MAX ? out->n_located : XPB_COMPARE_LOCATED_MAX - 1;
    memmove(&out->located[at + 1], &out->located[at], (last - at) * sizeof out->located[0]);
    out->located[at] = *l;
    if (out->n_located < XPB_COMPARE_LOCATED_MAX)
        out->n_located++;
}

/* Counts tensor t as failing and locates it. */
static void add_failing(xpb_compare_verdict *out, const xpb_compare_tensor *t, double tolerance)
{
    struct xpb_located l;
    out->failing++;
    locate(&l, t, tolerance);
    insert_located(out, &l);
}

void xpb_compare_judge(xpb_compare_verdict *out, xpb_compare *c, uint32_t kind)
{
    memset(out, 0, sizeof *out);
    compute_errors(c);
    double each = each_tolerance(c, kind);
    double worst_ratio = -1.0;
    size_t worst = 0;
    for (size_t i = 0; i < c->n; i++) {
        xpb_compare_tensor *t = &c->v[i];
        if (t->kind != kind)
            continue;
        out->compared++;
        t->tolerance = each;
        if (each > 0.0 && !(t->error <= each))
            add_failing(out, t, each);
        if (t->max_abs > out->max_abs)
            out->max_abs = t->max_abs;
        double ratio = each > 0.0 ? t->error / each : t->error;
        if (ratio > worst_ratio) { /* errors are never NaN: a non-finite one is infinite */
            worst_ratio = ratio;
            snprintf(out->worst, sizeof out->worst, "%s", t->name);
            out->worst_error = t->error;
            worst = i;
        }
    }
    out->together = each == 0.0;
    out->tolerance = out->together ? c->tol->together * c->scale : each;
    out->error = out->together ? together_error(c, kind) : out->worst_error;
    out->passed = out->compared == 0 || out->error <= out->tolerance;
    if (out->together && !out->passed) /* no tensor has a tolerance: locate the worst */
        add_failing(out, &c->v[worst], 0.0);
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
        xpb_compare_verdict sum = *out;
        sum.max_abs = out->max_abs > v.max_abs ? out->max_abs : v.max_abs;
        sum.compared = out->compared + v.compared;
        sum.passed = out->passed && v.passed;
        sum.failing = out->failing + v.failing;
        for (uint32_t k = 0; k < v.n_located; k++)
            insert_located(&sum, &v.located[k]);
        if (v.error / v.tolerance > worst) {
            worst = v.error / v.tolerance;
            *out = v;
        }
        out->max_abs = sum.max_abs;
        out->compared = sum.compared;
        out->passed = sum.passed;
        out->failing = sum.failing;
        out->n_located = sum.n_located;
        memcpy(out->located, sum.located, sizeof sum.located);
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
        if (t->tolerance > 0.0 && !(t->error <= t->tolerance)) {
            struct xpb_located l;
            char where[192];
            locate(&l, t, t->tolerance);
            xpb_compare_format_located(where, sizeof where, &l);
            fprintf(f, "        worst %s\n", where);
        }
    }
}
