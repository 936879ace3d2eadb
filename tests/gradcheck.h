/* Header-only harness for the reference-kernel tests (tests/test_ref_*.c).
 *
 * It builds one op with its tensor descs and buffers, runs it through the SDK's shape rules
 * (xpb_op_check, include/xpubench/shapes.h) and ref_kernel_for, and checks an analytic
 * backward result against central finite differences of the forward op. Every function is
 * static inline (no unused warnings); include it after <cmocka.h> or alone.
 *
 * API
 *   gc_op g;                               one op, its descs and its buffers (owned by g)
 *   gc_op_init(&g, kind, &attrs)           attrs may be NULL (all zero); layer is "test"
 *                                          (op-set-3 attributes: set g.op.transpose etc.)
 *   float *gc_in(&g, ndim, dims)           appends an F32 input [dims], zero-filled, e.g.
 *                                          gc_in(&g, 4, (int64_t[]){1, 3, 5, 7})
 *   int32_t *gc_in_i32(&g, ndim, dims)     appends an I32 input
 *   float *gc_out(&g, ndim, dims)          appends an F32 output, zero-filled
 *   int32_t *gc_out_i32(&g, ndim, dims)    appends an I32 output
 *   gc_unwanted(&g, j) / gc_absent(&g, i)  output j not wanted / optional input i absent
 *                                          (XPB_NO_TENSOR: NULL to the rules and the kernel)
 *   gc_op_free(&g)                         frees every buffer of g
 *   int64_t gc_in_numel(&g, i) / gc_out_numel(&g, j)
 *   void gc_args(&g, &args)                ref_op_args pointing into g (to call a kernel)
 *   xpb_status gc_check(&g)                xpb_op_check only; message in g.err
 *   xpb_status gc_run(&g)                  xpb_op_check, then the kernel of g.op.kind;
 *                                          message in g.err. Does not touch g.call_index.
 *   void gc_fill(x, n, seed, lo, hi)       x[i] uniform in [lo, hi) from a seeded RNG
 *   uint64_t gc_rng_next(&state)           the next splitmix64 number of a seeded stream
 *   int gc_allclose(got, want, n, atol, rtol, what)
 *        1 when |got[i] - want[i]| <= atol + rtol * |want[i]| for every i (want in double);
 *        prints "what: max abs .. max rel .. worst index .. got .. want" either way.
 *   int gc_gradcheck(&fwd, out_idx, r, in_idx, analytic, h, atol, rtol, what)
 *        loss L = sum_j r[j] * fwd.out[out_idx][j] (accumulated in double); the numeric
 *        gradient dL/d fwd.in[in_idx][i] = (L(x + h) - L(x - h)) / (actual 2h) for every i,
 *        rerunning fwd (gc_run) each time; compares `analytic` (numel of that input, e.g.
 *        the output of the backward op run with dy = r) with gc_allclose. fwd's inputs are
 *        restored afterwards, its outputs hold the last perturbed run (rerun if needed).
 *        For a loss op ([1] output) pass r = &scale.
 *
 * Typical use (conv2d, gradient with respect to x):
 *   gc_op f, b;  fill f (x, w -> y), gc_run(&f);
 *   set up b = CONV2D_BWD_DATA(dy, w -> dx) with dy filled from gc_fill, gc_run(&b);
 *   assert_true(gc_gradcheck(&f, 0, b.in[0], 0, b.out[0], 1e-2, 1e-3, 1e-3, "conv dx"));
 *
 * Choose h and inputs so that no element crosses a kink (ReLU at 0, max-pool ties, |x|).
 * For an op that is linear in the checked input (conv, linear, pooling, padding) a large h
 * such as 0.25 is exact up to rounding and shrinks fp32 noise, so tolerances near 1e-4 hold. */
#ifndef XPB_TESTS_GRADCHECK_H
#define XPB_TESTS_GRADCHECK_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xpubench/program.h>
#include <xpubench/shapes.h>
#include <xpubench/status.h>

#include "ref.h"

/* Operands one gc_op holds: more than xpb_op's inline arrays (LSTM_BWD has ten inputs and seven
 * outputs, CLIP_GRAD_NORM one input per gradient); ops with more list them in inputs_all /
 * outputs_all, as a host does. */
#define GC_MAX_IN 12
#define GC_MAX_OUT 8

typedef struct gc_op {
    xpb_op op;
    xpb_tensor_desc in_desc[GC_MAX_IN];
    xpb_tensor_desc out_desc[GC_MAX_OUT];
    float *in[GC_MAX_IN]; /* owned by the gc_op (int32_t data for I32 tensors) */
    float *out[GC_MAX_OUT];
    uint32_t in_ids[GC_MAX_IN], out_ids[GC_MAX_OUT]; /* op.inputs_all / outputs_all */
    uint64_t call_index; /* passed to the kernel as ref_op_args.call_index */
    char err[1024];      /* message of the last failing gc_check / gc_run */
} gc_op;

static inline void gc_op_init(gc_op *g, uint32_t kind, const xpb_op_attrs *attrs)
{
    memset(g, 0, sizeof *g);
    g->op.kind = kind;
    g->op.layer = "test";
    if (attrs)
        g->op.attrs = *attrs;
    for (int i = 0; i < XPB_MAX_OP_INPUTS; i++)
        g->op.inputs[i] = XPB_NO_TENSOR;
    for (int j = 0; j < XPB_MAX_OP_OUTPUTS; j++)
        g->op.outputs[j] = XPB_NO_TENSOR;
}

static inline void gc_op_free(gc_op *g)
{
    for (int i = 0; i < GC_MAX_IN; i++) {
        free(g->in[i]);
        g->in[i] = NULL;
    }
    for (int j = 0; j < GC_MAX_OUT; j++) {
        free(g->out[j]);
        g->out[j] = NULL;
    }
}

/* Fills a desc and returns a zeroed buffer for it (aborts when out of memory: tests only). */
static inline float *gc_tensor_(xpb_tensor_desc *d, const char *name, uint32_t dtype, uint32_t ndim,
                                const int64_t *dims)
{
    if (ndim < 1 || ndim > XPB_MAX_DIMS) {
        fprintf(stderr, "gradcheck: bad ndim %u for %s\n", ndim, name);
        abort();
    }
    memset(d, 0, sizeof *d);
    d->name = name;
    d->layer = "test";
    d->dtype = dtype;
    d->role = XPB_ROLE_ACTIVATION;
    d->ndim = ndim;
    for (uint32_t k = 0; k < XPB_MAX_DIMS; k++)
        d->dims[k] = k < ndim ? dims[k] : 1;
    d->grad_of = XPB_NO_TENSOR;
    float *data = calloc((size_t)xpb_tensor_numel(d), 4);
    if (!data) {
        fprintf(stderr, "gradcheck: out of memory for %s\n", name);
        abort();
    }
    return data;
}

static inline float *gc_add_in_(gc_op *g, uint32_t dtype, uint32_t ndim, const int64_t *dims)
{
    static const char *const names[GC_MAX_IN] = {"in0", "in1", "in2", "in3", "in4",  "in5",
                                                 "in6", "in7", "in8", "in9", "in10", "in11"};
    uint32_t i = g->op.n_inputs;
    if (i >= GC_MAX_IN)
        abort();
    g->in[i] = gc_tensor_(&g->in_desc[i], names[i], dtype, ndim, dims);
    g->in_ids[i] = i;
    if (i < XPB_MAX_OP_INPUTS)
        g->op.inputs[i] = i;
    else
        g->op.inputs_all = g->in_ids;
    g->op.n_inputs = i + 1;
    return g->in[i];
}

static inline float *gc_add_out_(gc_op *g, uint32_t dtype, uint32_t ndim, const int64_t *dims)
{
    static const char *const names[GC_MAX_OUT] = {"out0", "out1", "out2", "out3",
                                                  "out4", "out5", "out6", "out7"};
    uint32_t j = g->op.n_outputs;
    if (j >= GC_MAX_OUT)
        abort();
    g->out[j] = gc_tensor_(&g->out_desc[j], names[j], dtype, ndim, dims);
    g->out_ids[j] = GC_MAX_IN + j;
    if (j < XPB_MAX_OP_OUTPUTS)
        g->op.outputs[j] = GC_MAX_IN + j;
    else
        g->op.outputs_all = g->out_ids;
    g->op.n_outputs = j + 1;
    return g->out[j];
}

/* Makes output j "not wanted" (XPB_NO_TENSOR, NULL to the kernel), as a host does for an
 * unwanted workspace or gradient. */
static inline void gc_unwanted(gc_op *g, uint32_t j)
{
    free(g->out[j]);
    g->out[j] = NULL;
    g->out_ids[j] = XPB_NO_TENSOR;
    if (j < XPB_MAX_OP_OUTPUTS)
        g->op.outputs[j] = XPB_NO_TENSOR;
}

/* Makes input i absent (XPB_NO_TENSOR): an optional input in the middle (LSTM_BWD's dh_n). */
static inline void gc_absent(gc_op *g, uint32_t i)
{
    free(g->in[i]);
    g->in[i] = NULL;
    g->in_ids[i] = XPB_NO_TENSOR;
    if (i < XPB_MAX_OP_INPUTS)
        g->op.inputs[i] = XPB_NO_TENSOR;
}

static inline float *gc_in(gc_op *g, uint32_t ndim, const int64_t *dims)
{
    return gc_add_in_(g, XPB_DTYPE_F32, ndim, dims);
}

static inline int32_t *gc_in_i32(gc_op *g, uint32_t ndim, const int64_t *dims)
{
    return (int32_t *)gc_add_in_(g, XPB_DTYPE_I32, ndim, dims);
}

static inline float *gc_out(gc_op *g, uint32_t ndim, const int64_t *dims)
{
    return gc_add_out_(g, XPB_DTYPE_F32, ndim, dims);
}

static inline int32_t *gc_out_i32(gc_op *g, uint32_t ndim, const int64_t *dims)
{
    return (int32_t *)gc_add_out_(g, XPB_DTYPE_I32, ndim, dims);
}

static inline int64_t gc_in_numel(const gc_op *g, uint32_t i)
{
    return xpb_tensor_numel(&g->in_desc[i]);
}

static inline int64_t gc_out_numel(const gc_op *g, uint32_t j)
{
    return xpb_tensor_numel(&g->out_desc[j]);
}

static inline void gc_args(gc_op *g, ref_op_args *a)
{
    memset(a, 0, sizeof *a);
    a->op = &g->op;
    for (uint32_t i = 0; i < g->op.n_inputs; i++) {
        a->in_desc[i] = g->in[i] ? &g->in_desc[i] : NULL;
        a->in[i] = g->in[i];
    }
    for (uint32_t j = 0; j < g->op.n_outputs; j++) {
        a->out_desc[j] = g->out[j] ? &g->out_desc[j] : NULL;
        a->out[j] = g->out[j];
    }
    a->call_index = g->call_index;
    a->err = g->err;
    a->err_size = sizeof g->err;
}

static inline xpb_status gc_check(gc_op *g)
{
    const xpb_tensor_desc *in[GC_MAX_IN] = {0};
    const xpb_tensor_desc *out[GC_MAX_OUT] = {0};
    for (uint32_t i = 0; i < g->op.n_inputs; i++)
        in[i] = g->in[i] ? &g->in_desc[i] : NULL;
    for (uint32_t j = 0; j < g->op.n_outputs; j++)
        out[j] = g->out[j] ? &g->out_desc[j] : NULL;
    g->err[0] = '\0';
    return xpb_op_check(&g->op, in, out, g->err, sizeof g->err);
}

static inline xpb_status gc_run(gc_op *g)
{
    xpb_status st = gc_check(g);
    if (st != XPB_OK)
        return st;
    ref_kernel_fn fn = ref_kernel_for(g->op.kind);
    if (!fn) {
        snprintf(g->err, sizeof g->err, "no reference kernel for %s", xpb_op_name(g->op.kind));
        return XPB_UNSUPPORTED;
    }
    ref_op_args a;
    gc_args(g, &a);
    st = fn(&a);
    if (st != XPB_OK)
        fprintf(stderr, "gradcheck: %s failed: %s\n", xpb_op_name(g->op.kind), g->err);
    return st;
}

/* splitmix64: the seeded RNG of the harness (state is any seed, advanced in place). */
static inline uint64_t gc_rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline void gc_fill(float *x, int64_t n, uint64_t seed, double lo, double hi)
{
    uint64_t s = seed;
    for (int64_t i = 0; i < n; i++) {
        double u = (double)(gc_rng_next(&s) >> 11) * 0x1.0p-53;
        x[i] = (float)(lo + (hi - lo) * u);
    }
}

static inline int gc_allclose(const float *got, const double *want, int64_t n, double atol,
                              double rtol, const char *what)
{
    double max_abs = 0, max_rel = 0, worst_ratio = -1;
    int64_t worst = -1;
    int ok = 1;
    for (int64_t i = 0; i < n; i++) {
        double err = fabs((double)got[i] - want[i]);
        double bound = atol + rtol * fabs(want[i]);
        double rel = err / (fabs(want[i]) > 1e-30 ? fabs(want[i]) : 1e-30);
        if (!(err <= bound)) /* also catches NaN */
            ok = 0;
        if (err > max_abs || err != err)
            max_abs = err;
        if (rel > max_rel || rel != rel)
            max_rel = rel;
        double ratio = err / bound;
        if (worst < 0 || ratio > worst_ratio || ratio != ratio) {
            worst_ratio = ratio;
            worst = i;
        }
    }
    printf("%s %s: n %lld, max abs err %.3g, max rel err %.3g", ok ? "ok  " : "FAIL", what,
           (long long)n, max_abs, max_rel);
    if (worst >= 0)
        printf(", worst index %lld (got %.9g, want %.9g)", (long long)worst, (double)got[worst],
               want[worst]);
    printf("\n");
    return ok;
}

static inline double gc_loss_(gc_op *fwd, uint32_t out_idx, const float *r, int *ok)
{
    if (gc_run(fwd) != XPB_OK) {
        *ok = 0;
        return 0;
    }
    double loss = 0;
    int64_t n = gc_out_numel(fwd, out_idx);
    for (int64_t j = 0; j < n; j++)
        loss += (double)r[j] * (double)fwd->out[out_idx][j];
    return loss;
}

static inline int gc_gradcheck(gc_op *fwd, uint32_t out_idx, const float *r, uint32_t in_idx,
                               const float *analytic, double h, double atol, double rtol,
                               const char *what)
{
    int64_t n = gc_in_numel(fwd, in_idx);
    double *numeric = calloc((size_t)n, sizeof *numeric);
    if (!numeric)
        abort();
    float *x = fwd->in[in_idx];
    int ok = 1;
    for (int64_t i = 0; i < n && ok; i++) {
        float x0 = x[i];
        float xp = (float)((double)x0 + h);
        float xm = (float)((double)x0 - h);
        x[i] = xp;
        double lp = gc_loss_(fwd, out_idx, r, &ok);
        x[i] = xm;
        double lm = gc_loss_(fwd, out_idx, r, &ok);
        x[i] = x0;
        numeric[i] = (lp - lm) / ((double)xp - (double)xm);
    }
    if (!ok) {
        printf("FAIL %s: forward %s failed: %s\n", what, xpb_op_name(fwd->op.kind), fwd->err);
        free(numeric);
        return 0;
    }
    ok = gc_allclose(analytic, numeric, n, atol, rtol, what);
    free(numeric);
    return ok;
}

#endif
