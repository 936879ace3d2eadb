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
 * the compared tensors of the same group, i.e. role). Why this one:
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
 * gradient, judged tensor by tensor with an allowance (near-ties that the host cannot see), or
 * all together as one vector when gradients are not comparable one by one: under reduced
 * precision (batch-norm backward amplifies rounding noise) and after kink flips (kinks.h).
 * The tolerances per precision are one table (xpb_tolerance_for). */
#ifndef XPB_CORE_COMPARE_H
#define XPB_CORE_COMPARE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <xpubench/status.h>

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
} xpb_tolerance;

/* The row for `precision`: static, never NULL (an unknown policy gets the loosest row). */
const xpb_tolerance *xpb_tolerance_for(uint32_t precision);

/* One compared tensor. The sums are over its elements; `error` is set by xpb_compare_judge. */
typedef struct xpb_compare_tensor {
    char name[64];
    uint32_t group; /* floors are per group: the caller's role of the tensor */
    uint32_t kind;  /* xpb_compare_kind */
    int64_t n;
    double diff_sq; /* sum (x - r)^2 */
    double ref_sq;  /* sum r^2 */
    double max_abs; /* max |x - r|; infinity when non-finite */
    double ref_max; /* max |r| */
    int nonfinite;  /* NaN/Inf on either side, not the same on both */
    double error;   /* floored norm-relative error (above) */
} xpb_compare_tensor;

/* The tensors of one comparison. Zero-initialise, then xpb_compare_init. */
typedef struct xpb_compare {
    const xpb_tolerance *tol; /* static row of the table */
    double scale;             /* factor on every tolerance for this comparison (1) */
    /* Elements that crossed a kink on the other side than the reference (kinks.h), 0 when none
     * or not counted: when positive, gradients are judged together. */
    int64_t kink_flips;
    xpb_compare_tensor *v; /* owned; xpb_compare_free */
    size_t n, cap;
} xpb_compare;

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
} xpb_compare_verdict;

/* Starts a comparison for `precision`, every tolerance multiplied by `scale` (1 normally). */
void xpb_compare_init(xpb_compare *c, uint32_t precision, double scale);
void xpb_compare_free(xpb_compare *c); /* NULL-safe; leaves *c empty */

/* Adds tensor `name` (x from the backend, ref from the reference, n elements each).
 * XPB_OUT_OF_MEMORY when the list cannot grow (nothing added). */
xpb_status xpb_compare_add(xpb_compare *c, const char *name, uint32_t group, uint32_t kind,
                           const float *x, const float *ref, int64_t n);

/* Computes every tensor's error (floors need the whole list: call after the last add) and
 * judges the tensors of `kind`. Gradients are judged together when the row has no per-tensor
 * gradient tolerance or c->kink_flips > 0. */
void xpb_compare_judge(xpb_compare_verdict *out, xpb_compare *c, uint32_t kind);

/* The verdict on every kind compared, the one furthest from its tolerance deciding (passed
 * only when every kind passed). */
void xpb_compare_judge_all(xpb_compare_verdict *out, xpb_compare *c);

/* One line per tensor (name, max|ref|, max_abs, error) to f, indented by six spaces; after
 * xpb_compare_judge. */
void xpb_compare_print(FILE *f, const xpb_compare *c);

#endif
