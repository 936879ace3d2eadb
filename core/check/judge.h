/* The one numerical judge of the host: how far a tensor computed by a backend is from the same
 * tensor computed by the reference backend, and whether that is far enough to be wrong. Used by
 * the conformance suite (conformance.h) and by first-step verification (verify.h);
 * docs/conformance.md ("How a comparison judges") explains every number.
 *
 * The metric is the floored norm-relative error of a tensor x against its reference r:
 *
 *     error = ||x - r|| / max(||r||, floor * sqrt(n) * S)
 *
 * (L2 norms over the tensor's n elements; S the largest root-mean-square of a reference among
 * the compared tensors of the same group: the caller's, a role for the conformance suite, a
 * layer for verification's gradients; floor the row's fraction, 100% for a tensor the caller
 * knows is zero in exact arithmetic). Why this one:
 * - a norm, not the largest element: two correct implementations that resolve a ReLU kink or a
 *   max-pool tie differently disagree on single elements by their full size; a norm takes that
 *   as one element among n, a wrong kernel (wrong everywhere, or on a whole border) still moves
 *   it by orders of magnitude more than rounding does;
 * - the floor: a tensor that is ~0 next to its siblings (a bias gradient before instance norm is
 *   zero in exact arithmetic) is pure rounding noise on both sides, and dividing noise by noise
 *   says nothing; it is measured against a fraction of its siblings' scale instead;
 * - NaN or infinity on either side (not the same on both) is an infinite error.
 *
 * Each tensor is judged against the tolerance of its kind: a result of an op case, a forward
 * result of a whole model step (deeper, so more rounding under reduced precision), or a
 * gradient. Gradients are judged tensor by tensor: with the aligned allowance when the
 * reference took the backend's side of every near-tie (kinks.h: verification does), else with
 * the gradient allowance (near-ties the host cannot see); or all together as one vector when
 * they are not comparable one by one: under reduced precision (batch-norm backward amplifies
 * rounding noise) and, unaligned, after kink flips. The tolerances per precision are one table
 * (xpb_tolerance_for).
 *
 * Every compared tensor keeps its worst element (the largest |x - r|, or the first NaN or
 * infinity that disagrees): its flat index, its coordinates in the tensor's shape and both
 * values, so that a failure says where it is (struct xpb_located). */
#ifndef XPB_CORE_JUDGE_H
#define XPB_CORE_JUDGE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <xpubench/status.h>

#include "run/run_options.h" /* struct xpb_located */

/* What a compared tensor is, which decides its tolerance. */
typedef enum xpb_compare_kind {
    XPB_COMPARE_OP = 0,       /* a result of an op or chain case: a few ops deep */
    XPB_COMPARE_FORWARD = 1,  /* a loss, output or state of a model step: the whole net deep */
    XPB_COMPARE_GRADIENT = 2, /* a parameter gradient of a model step (or state holding it) */
} xpb_compare_kind;
#define XPB_COMPARE_KINDS 3

/* The tolerances of one precision policy: one row of the table. */
typedef struct xpb_tolerance {
    uint32_t precision; /* xpb_precision */
    double op;          /* the error of each tensor of an op or chain case */
    double forward;     /* the error of each forward result of a model step */
    /* The error of each gradient: the gradient allowance. 0 when the policy's gradients are
     * never comparable one by one (then only `together` judges them). */
    double gradient;
    double together; /* the error of all gradients as one vector, when judged together */
    double floor;    /* the floor's fraction of the group's scale */
    /* The error of each gradient when the reference took the backend's side of every near-tie
     * (xpb_compare.aligned): rounding alone. 0 when the policy has none (then as unaligned). */
    double aligned;
    /* The floor's fraction of the group's scale for gradients judged by the aligned allowance
     * (verification's groups are layers, whose gradients may differ by 100 times). */
    double aligned_floor;
} xpb_tolerance;

/* The row for `precision`: static, never NULL (an unknown policy gets the loosest row). */
const xpb_tolerance *xpb_tolerance_for(uint32_t precision);

/* One compared tensor. The sums are over its elements; `error` is set by xpb_compare_judge. */
typedef struct xpb_compare_tensor {
    char name[64];
    uint32_t group; /* floors are per group: the caller's role of the tensor */
    uint32_t kind;  /* xpb_compare_kind */
    int64_t n;
    uint32_t ndim;    /* the shape, for coordinates: 1 and {n} when the caller gave none */
    int64_t dims[4];  /* unused dims are 1 */
    double diff_sq;   /* sum (x - r)^2 */
    double ref_sq;    /* sum r^2 */
    double max_abs;   /* max |x - r|; infinity when non-finite */
    double ref_max;   /* max |r| */
    int nonfinite;    /* NaN/Inf on either side, not the same on both */
    int64_t worst;    /* index of the worst element (the first one when all agree) */
    double worst_x;   /* its value from the backend */
    double worst_ref; /* and from the reference */
    /* 1: zero in exact arithmetic (the caller knows it from the program: a bias before a
     * normalisation); both sides hold rounding noise, measured against the whole scale of its
     * group (a floor of 100%). */
    int zero;
    double error;     /* floored norm-relative error (above) */
    double tolerance; /* set by xpb_compare_judge: its own, 0 when judged together */
} xpb_compare_tensor;

/* The tensors of one comparison. Zero-initialise, then xpb_compare_init. */
typedef struct xpb_compare {
    const xpb_tolerance *tol; /* static row of the table */
    double scale;             /* factor on every tolerance for this comparison (1) */
    /* Elements that crossed a kink on the other side than the reference (kinks.h), 0 when none
     * or not counted: when positive and not aligned, gradients are judged together. */
    int64_t kink_flips;
    /* 1: the reference took the backend's side of every near-tie (kinks.h's aligned
     * reference), so each gradient is judged by the aligned allowance whatever kink_flips. */
    int aligned;
    xpb_compare_tensor *v; /* owned; xpb_compare_free */
    size_t n, cap;
} xpb_compare;

/* How many failing tensors a verdict locates. */
#define XPB_COMPARE_LOCATED_MAX 8

/* The verdict on one kind of tensors. */
typedef struct xpb_compare_verdict {
    int compared;     /* number of tensors of the kind */
    int passed;       /* 1: within tolerance (also when nothing was compared) */
    int together;     /* 1: judged as one vector (gradients), 0: tensor by tensor */
    double error;     /* the deciding error: the worst tensor's, or the vector's */
    double tolerance; /* the deciding tolerance */
    double max_abs;   /* largest |x - r| of any element */
    /* The tensor with the largest error / tolerance (when together: the largest error), "" when
     * nothing was compared. A copy: valid as long as the verdict. */
    char worst[64];
    double worst_error; /* its error */
    /* The tensors outside their tolerance (when judged together and failing: the worst one),
     * the furthest first: `failing` of them, the first n_located located. */
    uint32_t failing;
    uint32_t n_located;
    struct xpb_located located[XPB_COMPARE_LOCATED_MAX];
} xpb_compare_verdict;

/* Starts a comparison for `precision`, every tolerance multiplied by `scale` (1 normally). */
void xpb_compare_init(xpb_compare *c, uint32_t precision, double scale);
void xpb_compare_free(xpb_compare *c); /* NULL-safe; leaves *c empty */

/* Adds tensor `name` (x from the backend, ref from the reference, n elements each, located
 * by flat index). XPB_OUT_OF_MEMORY when the list cannot grow (nothing added). */
xpb_status xpb_compare_add(xpb_compare *c, const char *name, uint32_t group, uint32_t kind,
                           const float *x, const float *ref, int64_t n);

/* xpb_compare_add of a tensor of shape dims[0 .. ndim) (row-major; ndim 1..4), whose worst
 * element is then located by coordinates too. */
xpb_status xpb_compare_add_shaped(xpb_compare *c, const char *name, uint32_t group, uint32_t kind,
                                  const float *x, const float *ref, uint32_t ndim,
                                  const int64_t *dims);

/* The coordinates of flat index `index` in a row-major tensor of shape dims[0 .. ndim). */
void xpb_compare_coords(int64_t coords[4], int64_t index, uint32_t ndim, const int64_t *dims);

/* "element 1234 (0, 5, 3, 2): 0.1234 against 0.4567" into buf (always terminated). */
void xpb_compare_format_located(char *buf, size_t size, const struct xpb_located *l);

/* Computes every tensor's error (floors need the whole list: call after the last add) and
 * judges the tensors of `kind`. Gradients are judged together when the row has no per-tensor
 * gradient tolerance or c->kink_flips > 0. */
void xpb_compare_judge(xpb_compare_verdict *out, xpb_compare *c, uint32_t kind);

/* The verdict on every kind compared, the one furthest from its tolerance deciding (passed
 * only when every kind passed). */
void xpb_compare_judge_all(xpb_compare_verdict *out, xpb_compare *c);

/* One line per tensor (name, max|ref|, max_abs, error) to f, indented by six spaces, and under
 * a tensor outside its tolerance its worst element (index, coordinates, both values); after
 * xpb_compare_judge. */
void xpb_compare_print(FILE *f, const xpb_compare *c);

#endif
