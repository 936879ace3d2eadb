/* Inside the conformance suite (conformance.h): what a case is, the small language that builds
 * one by hand (conformance_build.c), the catalogue of cases (conformance_cases.c, op set 3 in
 * conformance_cases3.c) and their seeded inputs (conformance_inputs.c, masks in
 * conformance_masks.c). A case is a complete program in fixed-size arrays: one op, a
 * forward/backward pair joined by a WORKSPACE tensor, or a short chain. */
#ifndef XPB_CORE_CONFORMANCE_CASE_H
#define XPB_CORE_CONFORMANCE_CASE_H

#include <stdint.h>

#include <xpubench/program.h>

#define XPB_CT_MAX_TENSORS 32
#define XPB_CT_MAX_OPS 16
/* Operands of one op (more than xpb_op's inline arrays: LSTM_BWD, CLIP_GRAD_NORM). */
#define XPB_CT_MAX_OPERANDS 16

/* How the host fills a host-written tensor of a case (0: it does not). */
typedef enum xpb_ct_init {
    XPB_CT_INIT_NONE = 0,
    XPB_CT_INIT_UNIFORM,  /* in [-1, 1], of mixed magnitude (conformance_inputs.c) */
    XPB_CT_INIT_POSITIVE, /* U(0.5, 1.5): variances, Adam's v */
    XPB_CT_INIT_LABELS,   /* int32 class indices in [0, labels[t]) */
    XPB_CT_INIT_STEP,     /* 3: Adam's step counter */
    /* U(-1, 1) / sqrt(fan in), PyTorch's default weight scale, so that activations stay O(1)
     * through chains */
    XPB_CT_INIT_FANIN,
    /* an additive attention mask [Sq, Sk]: U(-1, 1), about a third of the keys -inf (never key
     * 0, so that no row is all -inf); xpb_ct_masks writes the -inf after xpb_ct_inputs */
    XPB_CT_INIT_MASK,
} xpb_ct_init;

typedef struct xpb_ct_case {
    char name[48];  /* "CONV2D", "chain resblock (inference)" */
    char shape[96]; /* what distinguishes this instance */
    xpb_tensor_desc t[XPB_CT_MAX_TENSORS];
    char tname[XPB_CT_MAX_TENSORS][32];
    uint32_t init[XPB_CT_MAX_TENSORS];  /* xpb_ct_init of host-written tensors */
    int64_t labels[XPB_CT_MAX_TENSORS]; /* XPB_CT_INIT_LABELS: number of classes */
    uint32_t n_t;
    xpb_op ops[XPB_CT_MAX_OPS];
    /* every operand of every op: ops with more than the inline arrays hold point their
     * inputs_all / outputs_all here (xpb_ct_bind) */
    uint32_t all_in[XPB_CT_MAX_OPS][XPB_CT_MAX_OPERANDS];
    uint32_t all_out[XPB_CT_MAX_OPS][XPB_CT_MAX_OPERANDS];
    uint32_t n_ops;
    xpb_phase phase;
    xpb_program prog;
    uint32_t runs;         /* runs of phase 0 before the comparison */
    int overflow;          /* more tensors or ops than the arrays hold: the case is broken */
    double bf16_tol_scale; /* tolerance factor under reduced precision (0 = 1) */
} xpb_ct_case;

/* A growing array of cases. Zero-initialise; release with xpb_ct_list_free. */
typedef struct xpb_ct_list {
    xpb_ct_case *v;
    size_t n, cap;
    int oom; /* a case could not be added */
} xpb_ct_list;

void xpb_ct_list_free(xpb_ct_list *l);

/* ---- the building language (conformance_build.c) ---- */

/* Appends a case named `name` with the printf-formatted shape; NULL (and l->oom) when out of
 * memory. The pointer is into l->v: valid until the next xpb_ct_new on `l`. */
xpb_ct_case *xpb_ct_new(xpb_ct_list *l, const char *name, int training, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Adds a tensor and returns its index. `role` decides the flags: INPUT/PARAM/STATE are
 * host-written (PARAM/STATE persistent, filled as `init` says); `read` makes it host-readable,
 * i.e. compared. Dimensions past `ndim` are ignored. */
uint32_t xpb_ct_tensor(xpb_ct_case *c, const char *name, uint32_t role, uint32_t init, int read,
                       uint32_t ndim, int64_t d0, int64_t d1, int64_t d2, int64_t d3);

/* Shorthands: data input, parameter (fan-in scaled when ndim >= 2), intermediate, compared
 * output, workspace of `dtype`. */
uint32_t xpb_ct_in(xpb_ct_case *c, const char *n, uint32_t nd, int64_t a, int64_t b, int64_t cc,
                   int64_t d);
uint32_t xpb_ct_param(xpb_ct_case *c, const char *n, uint32_t nd, int64_t a, int64_t b, int64_t cc,
                      int64_t d);
uint32_t xpb_ct_mid(xpb_ct_case *c, const char *n, uint32_t nd, int64_t a, int64_t b, int64_t cc,
                    int64_t d);
uint32_t xpb_ct_out(xpb_ct_case *c, const char *n, uint32_t nd, int64_t a, int64_t b, int64_t cc,
                    int64_t d);
uint32_t xpb_ct_ws(xpb_ct_case *c, const char *n, uint32_t dtype, uint32_t nd, int64_t a, int64_t b,
                   int64_t cc, int64_t d);

/* Appends an op reading `in` and writing `out` (XPB_NO_TENSOR: an unwanted output or an absent
 * optional input; up to XPB_CT_MAX_OPERANDS of each) and returns it for its attributes: a
 * pointer into the case, valid while the case is. */
xpb_op *xpb_ct_op(xpb_ct_case *c, uint32_t kind, uint32_t n_in, const uint32_t *in, uint32_t n_out,
                  const uint32_t *out);

/* A literal array of tensor indices for xpb_ct_op. */
#define XPB_CT_T(...)                                                                              \
    (const uint32_t[])                                                                             \
    {                                                                                              \
        __VA_ARGS__                                                                                \
    }

/* Lifetimes and the program header. Call after the last op. */
void xpb_ct_finish(xpb_ct_case *c);

/* Points the program at the case's own arrays and seals it as the host does (each op's op set,
 * attribute bits and name: program/program_abi.h). The case array moves while it grows: call
 * once the list is complete, before the case runs. */
void xpb_ct_bind(xpb_ct_case *c);

/* ---- the catalogue (conformance_cases.c) ---- */

/* Every op and chain case into `l`; the reduced shape set when `quick`. */
void xpb_ct_catalogue(xpb_ct_list *l, int quick);

/* The cases of op set 3 (sequence models: matmuls, attention, layer norm, GELU, embeddings, the
 * LSTM, token losses, AdamW, clipping) and their chains into `l` (conformance_cases3.c). */
void xpb_ct_catalogue3(xpb_ct_list *l, int quick);

/* ---- inputs (conformance_inputs.c) ---- */

/* The host-written inputs of case `c` from `seed`: XPB_CT_MAX_TENSORS buffers, one per
 * tensor that has an init (NULL for the others), every float rounded to bf16 when `round_bf16`
 * (so that both sides see the same numbers under reduced precision). Owned by the caller
 * (xpb_ct_buffers_free); NULL when out of memory. */
void **xpb_ct_inputs(const xpb_ct_case *c, uint64_t seed, int round_bf16);

/* Frees XPB_CT_MAX_TENSORS buffers and the array; NULL is a no-op. */
void xpb_ct_buffers_free(void **buffers);

/* Writes the -inf entries of every XPB_CT_INIT_MASK tensor of `c` into its buffer of `inputs`
 * (from xpb_ct_inputs): the entries below -1/3 except in column 0, so that the mask depends
 * only on the seeded values (conformance_masks.c). */
void xpb_ct_masks(const xpb_ct_case *c, void **inputs);

#endif
