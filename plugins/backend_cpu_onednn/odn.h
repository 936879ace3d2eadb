/* cpu_onednn backend internals (prefix odn_).
 *
 * How a program becomes an executable (compile.c, the dispatcher, drives it):
 *   1. fusion.c plans which ops another op's primitive absorbs (post-ops, folded batch norm).
 *   2. Ops are compiled in program order into "steps" (step.c): a oneDNN primitive or an own
 *      OpenMP kernel, each with its operands. Every tensor gets one storage layout (a oneDNN
 *      memory descriptor, decided by the first op that writes it, or for host-written tensors
 *      by the first op that reads it); an op that wants another layout or data type gets a
 *      reorder step into a temporary buffer (operand.c).
 *   3. memplan.c places every buffer in one arena by the steps that use it (buffers whose
 *      step ranges do not overlap share memory), then step.c creates the primitives and
 *      memory objects. run() only executes the steps of a phase (run.c).
 * Tensors cross the boundary in the canonical layout through reorders (transfer.c).
 *
 * Files depend on each other in layers, never in a circle (docs/backend-onednn.md shows the
 * graph): plugin.c -> compile.c -> the op families (prim_*.c, kern_*.c, lower_conv.c) ->
 * reduce.c, fusion.c, tune.c, operand.c -> step.c, memplan.c, pd.c, precision.c -> md.c, errors.c;
 * device.c, transfer.c, run.c, dump.c, threads.c and isa.c sit beside them. */
#ifndef XPB_ODN_H
#define XPB_ODN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <dnnl.h>
#include <dnnl_debug.h>

#include <xpubench/xpubench.h>

#define ODN_ERR_SIZE 1024
#define ODN_NONE UINT32_MAX
/* Operands of one step: more than any step takes (odn_buf_operand aborts beyond). */
#define ODN_MAX_OPERANDS 20

struct xpb_backend {
    dnnl_engine_t engine;
    dnnl_stream_t stream;
    uint32_t device;
    uint32_t default_threads; /* the OpenMP team size when the backend was opened */
    char err[ODN_ERR_SIZE];
};

/* A piece of the arena. */
typedef struct odn_buf {
    size_t bytes;
    uint32_t first, last; /* first and last step that use it; first > last: unused */
    int pinned;           /* lives as long as the executable (persistent, host-visible, keep_all) */
    size_t offset;        /* in the arena, set by the planner */
    char *ptr;            /* resolved after planning; NULL for unused buffers */
} odn_buf;

/* Storage of one program tensor. Memory descriptors use the program's dimension order. */
typedef struct odn_tensor {
    int decided; /* md and buf are set */
    dnnl_memory_desc_t md;
    uint32_t buf;
    /* bf16-mixed: the bf16 copy of an fp32 parameter that compute primitives read, in the
     * same layout as md (so that optimizer kernels update both element by element). */
    uint32_t shadow_buf; /* ODN_NONE when there is none */
    dnnl_memory_desc_t shadow_md;
    uint32_t producer_step; /* WORKSPACE tensors: the step whose primitive wrote it */
    int aliased;            /* shares its buffer with another tensor (reshape views) */
    /* Host boundary: canonical <-> storage reorders, created on the first transfer. */
    dnnl_memory_t host_mem, dev_mem, shadow_mem;
    dnnl_primitive_t to_dev, to_host, to_shadow;
    int transfer_ready;
} odn_tensor;

/* One argument of a step: a buffer seen through a memory descriptor. */
typedef struct odn_operand {
    int arg; /* DNNL_ARG_* for primitives; the slot number for kernels */
    uint32_t buf;
    size_t off; /* bytes from the start of the buffer (a piece of it: LSTM's cell state) */
    dnnl_memory_desc_t md;
    dnnl_memory_t mem; /* primitives: created after planning */
    void *ptr;         /* resolved after planning */
} odn_operand;

typedef struct odn_step odn_step;
/* An own kernel. Reads s->o[slot].ptr / .md and the parameters in s->p / s->f; on failure
 * returns a status and points s->why at a static explanation. */
typedef xpb_status (*odn_kernel_fn)(odn_step *s);

enum { ODN_STEP_PRIM = 1, ODN_STEP_KERNEL = 2 };

struct odn_step {
    uint32_t op;              /* program op whose work this step does (profiles) */
    uint32_t kind;            /* ODN_STEP_* */
    dnnl_primitive_desc_t pd; /* owned; primitives only */
    dnnl_primitive_t prim;    /* owned; created after planning */
    odn_kernel_fn fn;         /* kernels only */
    uint32_t n;
    odn_operand o[ODN_MAX_OPERANDS];
    int64_t p[16]; /* kernel parameters */
    float f[8];
    uint64_t calls;  /* completed runs (DROPOUT's mask stream) */
    const char *why; /* kernels: message of the last failure (static or the executable's) */
    void *ctx;       /* kernels: state of the executable they need (ALL_REDUCE: its odn_comm) */
    int nargs;       /* primitives: exec args incl. the scratchpad */
    dnnl_exec_arg_t args[ODN_MAX_OPERANDS + 1];
    dnnl_memory_t scratch_mem;
};

/* A converted copy of a tensor (see xpb_executable.copies). */
typedef struct odn_copy {
    uint32_t tensor, phase, buf;
    dnnl_memory_desc_t md;
} odn_copy;

/* What the fusion planner decided for one op. */
typedef struct odn_fuse {
    uint32_t into;       /* op whose step does this op's work, or ODN_NONE */
    uint32_t eltwise_op; /* RELU / LEAKY_RELU / TANH fused as a post-op, or ODN_NONE */
    uint32_t sum_op;     /* ADD fused as a sum post-op, or ODN_NONE */
    uint32_t sum_tensor; /* the other addend: the result overwrites its buffer */
    uint32_t bn_op;      /* BATCHNORM_INFER folded into this convolution, or ODN_NONE */
    uint32_t out_tensor; /* the tensor the fused chain finally writes */
    /* Training batch norm + ReLU: the forward (BATCHNORM_TRAIN, with eltwise_op its RELU)
     * keeps oneDNN's ReLU mask in ws_buf; the BATCHNORM_BWD that reads it absorbs the
     * RELU_BWD relu_bwd_op and takes that op's dy (bn_fwd_op: the forward). */
    uint32_t relu_bwd_op, bn_fwd_op, ws_buf;
    dnnl_memory_desc_t ws_md;
} odn_fuse;

/* Gradient averaging over the ranks of a data-parallel run (kern_comm.c). */
typedef struct odn_comm {
    const xpb_communicator *comm; /* borrowed from the compile options; NULL: one process */
    float *staging;               /* one bucket's gradients back to back (owned; malloc) */
    size_t cap;                   /* floats it holds: the largest bucket */
    char err[ODN_ERR_SIZE];       /* the last failed all-reduce, for the step's why */
} odn_comm;

struct xpb_executable {
    xpb_backend *be;
    const xpb_program *prog;
    uint32_t precision;
    uint32_t fusion, threads, profiling, keep_all;
    uint32_t transfer;     /* xpb_transfer: STREAMED inputs are written in every timed step */
    int bf16;              /* precision is bf16-mixed */
    odn_tensor *t;         /* per program tensor */
    uint32_t *n_consumers; /* per tensor: ops that read it */
    odn_fuse *fuse;        /* per op */
    uint32_t *op_phase;    /* per op: its phase, or ODN_NONE */
    /* Converted copies made by odn_in (a tensor reordered to another layout or type), reused
     * by later readers of the same phase until the tensor is written again. */
    struct odn_copy *copies;
    uint32_t n_copies, cap_copies;
    odn_buf *bufs;
    uint32_t n_bufs, cap_bufs;
    odn_step *steps;
    uint32_t n_steps, cap_steps;
    odn_step *post; /* steps to append after the step being built (output reorders) */
    uint32_t n_post, cap_post;
    /* Steps run at the start of run() after a host write changed a folded input (inference
     * batch-norm folding). They are not part of any phase. */
    odn_step *prep;
    uint32_t n_prep, cap_prep;
    int prep_stale;
    uint32_t *phase_begin, *phase_end; /* step range of each phase */
    uint32_t cur_op;                   /* op being compiled */
    char *arena;
    size_t arena_bytes;
    int arena_huge; /* transparent huge pages were asked for (memplan.c) */
    char *scratch;  /* shared user-mode scratchpad of every primitive */
    size_t scratch_bytes;
    double *op_seconds; /* per op, when profiling */
    uint64_t *op_calls;
    odn_comm comm; /* ALL_REDUCE's communicator and bucket staging */
    /* A kernel's message of its last failure when it names run-time data (an embedding index
     * and its position): kernels that need one get it as their step's ctx. */
    char kernel_err[ODN_ERR_SIZE];
    char err[ODN_ERR_SIZE];
};

/* ---- errors (errors.c) ---- */

/* Formats "<message>" into `buf` (ODN_ERR_SIZE bytes: a backend's err, or the static
 * message of last_error(NULL)) and returns `st`. */
xpb_status odn_set_error(char *buf, xpb_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Formats "<message>" into exe->err and returns `st`. */
xpb_status odn_fail(xpb_executable *exe, xpb_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Like odn_fail for a failed oneDNN call made for the current op: names the op, its layer and
 * oneDNN's status. */
xpb_status odn_dnnl_fail(xpb_executable *exe, dnnl_status_t s, const char *what);
/* "op <i> <KIND> (layer '<name>')" of op i into the caller's buffer; KIND is the host's name
 * for kinds these headers do not know (xpb_op_kind_name). */
void odn_op_label(const xpb_executable *exe, uint32_t op, char *buf, size_t size);

#define ODN_TRY(exe, call, what)                                                                   \
    do {                                                                                           \
        dnnl_status_t odn_s_ = (call);                                                             \
        if (odn_s_ != dnnl_success)                                                                \
            return odn_dnnl_fail((exe), odn_s_, (what));                                           \
    } while (0)

/* ---- memory descriptors (md.c) ---- */

/* A dense row-major descriptor of tensor `t`'s logical shape with data type `dt`. */
void odn_md_plain(dnnl_memory_desc_t *md, const xpb_tensor_desc *t, dnnl_data_type_t dt);
/* A descriptor of `ndims` / `dims` with format tag `tag` (dnnl_format_tag_any allowed). */
void odn_md_tag(dnnl_memory_desc_t *md, int ndims, const int64_t *dims, dnnl_data_type_t dt,
                dnnl_format_tag_t tag);
/* True when `md` is dense row-major (the canonical layout) for its dims. */
int odn_md_is_plain(const dnnl_memory_desc_t *md);
/* `in` with dimensions 0 and 1 swapped logically (same bytes): transposed-convolution weights
 * are [C,K,kh,kw] in the program and {K,C,kh,kw} for oneDNN. */
void odn_md_swap01(dnnl_memory_desc_t *out, const dnnl_memory_desc_t *in);
/* A descriptor of `dims` / `dt` in the same format tag as `ref` (plain, nChw16c, nhwc, ...;
 * dense row-major when `ref` is something else or NULL). */
void odn_md_like(dnnl_memory_desc_t *out, const dnnl_memory_desc_t *ref, int ndims,
                 const int64_t *dims, dnnl_data_type_t dt);
/* `in` with another data type (same layout). */
void odn_md_retype(dnnl_memory_desc_t *out, const dnnl_memory_desc_t *in, dnnl_data_type_t dt);
/* Dense row-major `dims` with the leading dims padded with 1s to `ndims` (>= n). */
void odn_md_padded(dnnl_memory_desc_t *out, uint32_t n, const int64_t *dims, int ndims,
                   dnnl_data_type_t dt);
/* The matrix view of a dense row-major tensor [.., r, c] (n dims) as `ndims` dims (leading
 * 1s added): [.., r, c], or with `transposed` [.., c, r] over the same bytes. */
void odn_md_matrix(dnnl_memory_desc_t *out, uint32_t n, const int64_t *dims, int transposed,
                   int ndims, dnnl_data_type_t dt);

/* Where channels live in a 4-D activation layout, for the own kernels that walk it in place:
 * (image n, channel group g, h, w) -> a run of `vec` contiguous channels at
 * n*sn + g*sg + h*sh + w*sw (NCHW: vec 1; NHWC: one group; nChw8c/16c: blocks). */
typedef struct odn_channel_runs {
    int64_t groups, vec, sn, sg, sh, sw;
} odn_channel_runs;
/* Fills *l for `md`; 0 when `md` is none of those layouts. */
int odn_channel_runs_of(const dnnl_memory_desc_t *md, odn_channel_runs *l);

/* ---- the bf16-mixed policy (precision.c) ---- */

/* The data type the precision policy wants for tensor `tid` when an op may choose. */
dnnl_data_type_t odn_pref_dt(const xpb_executable *exe, uint32_t tid);
/* True when a bf16 reader of tensor `t` gets a bf16 shadow of an fp32 master. */
int odn_keeps_master(const xpb_tensor_desc *t);

/* ---- buffers and their placement (memplan.c) ---- */

/* A new buffer of `bytes`; returns XPB_OUT_OF_MEMORY (with a message) on failure. */
xpb_status odn_buf_new(uint32_t *out, xpb_executable *exe, size_t bytes, int pinned);
/* Marks buffer use by steps, places buffers in one arena and allocates it. */
xpb_status odn_plan_memory(xpb_executable *exe);
/* Releases the arena (none: a no-op). */
void odn_arena_free(xpb_executable *exe);

/* ---- primitive descriptors (pd.c) ---- */

/* Creates a primitive descriptor for `op_desc` with user-mode scratchpad and `post_ops`
 * (NULL: none). `hint` is the forward primitive descriptor of a backward op. */
xpb_status odn_pd_create(dnnl_primitive_desc_t *out, xpb_executable *exe, const void *op_desc,
                         const_dnnl_post_ops_t post_ops, const_dnnl_primitive_desc_t hint,
                         const char *what);
/* The primitive descriptor of backward op `bwd_desc`, with a forward one of `fwd_desc` (no
 * post-ops) as its hint. */
xpb_status odn_pd_create_bwd(dnnl_primitive_desc_t *out, xpb_executable *exe, const void *fwd_desc,
                             const void *bwd_desc, const char *what);
/* A reorder's primitive descriptor from `src` to `dst` with user-mode scratchpad. */
xpb_status odn_reorder_pd_create(dnnl_primitive_desc_t *out, xpb_executable *exe,
                                 const dnnl_memory_desc_t *src, const dnnl_memory_desc_t *dst);
/* Replaces *pd by a primitive descriptor of `alt_desc` when oneDNN picks the same
 * implementation for it (to write gradients straight in their parameter's layout). */
void odn_pd_prefer(xpb_executable *exe, dnnl_primitive_desc_t *pd, const void *alt_desc,
                   const_dnnl_primitive_desc_t hint);
/* Descriptor `what` (dnnl_query_src_md, ...) of a primitive descriptor; owned by `pd`. */
const dnnl_memory_desc_t *odn_pd_md(const_dnnl_primitive_desc_t pd, dnnl_query_t what);

/* ---- steps (step.c) ---- */

enum { ODN_LIST_STEPS = 0, ODN_LIST_POST = 1, ODN_LIST_PREP = 2 };

void odn_step_init(odn_step *s, xpb_executable *exe, uint32_t kind);
/* Adds buffer `buf` directly. */
void odn_buf_operand(odn_step *s, int arg, uint32_t buf, const dnnl_memory_desc_t *md);
/* Adds the piece of buffer `buf` that starts `off` bytes in. */
void odn_buf_operand_at(odn_step *s, int arg, uint32_t buf, size_t off,
                        const dnnl_memory_desc_t *md);
/* Appends a finished step to `list` as it is (no operand handling). Takes ownership of s->pd
 * even on failure. */
xpb_status odn_push_step(xpb_executable *exe, int list, odn_step *s);
/* Appends the step (and the output reorders its operands asked for). Takes ownership of
 * s->pd even on failure. */
xpb_status odn_commit(xpb_executable *exe, odn_step *s);
/* Appends a reorder step from (src_buf, src_md) to (dst_buf, dst_md) to `list`
 * (exe->steps, exe->post or exe->prep) for op exe->cur_op. */
xpb_status odn_emit_reorder(xpb_executable *exe, int list, uint32_t src_buf,
                            const dnnl_memory_desc_t *src_md, uint32_t dst_buf,
                            const dnnl_memory_desc_t *dst_md);
/* Creates the memory objects and primitives of steps (after planning). */
xpb_status odn_finalize_steps(xpb_executable *exe, odn_step *steps, uint32_t n);
/* Executes steps [begin, end) of `steps`, timing them per op when profiling. */
xpb_status odn_exec_steps(xpb_executable *exe, odn_step *steps, uint32_t begin, uint32_t end);
/* Frees a step's primitive, descriptor and memory objects. */
void odn_step_free(odn_step *s);

/* ---- storage decisions and operands (operand.c) ---- */

/* The storage descriptor of a tensor that is decided, or NULL; owned by the executable. */
const dnnl_memory_desc_t *odn_tensor_md(const xpb_executable *exe, uint32_t tid);
/* Fixes the storage of tensor `tid` to `md` (allocating its buffer). */
xpb_status odn_decide(xpb_executable *exe, uint32_t tid, const dnnl_memory_desc_t *md);
/* Makes tensor `tid` share the buffer of tensor `other`, seen through `md`. */
xpb_status odn_alias(xpb_executable *exe, uint32_t tid, uint32_t other,
                     const dnnl_memory_desc_t *md);
/* Adds tensor `tid` as a read operand seen through `want` (NULL: as it is stored; a tensor
 * not yet decided is then stored dense row-major in its preferred type). A reorder into a
 * temporary buffer is emitted first when the storage differs from `want`. */
xpb_status odn_in(xpb_executable *exe, odn_step *s, int arg, uint32_t tid,
                  const dnnl_memory_desc_t *want);
/* Adds tensor `tid` as a written operand of descriptor `have`. A tensor not yet decided takes
 * `have`; otherwise a reorder from a temporary buffer follows the step. */
xpb_status odn_out(xpb_executable *exe, odn_step *s, int arg, uint32_t tid,
                   const dnnl_memory_desc_t *have);
/* odn_out, or a step-private buffer when `tid` is XPB_NO_TENSOR (an output nobody wants). */
xpb_status odn_out_opt(xpb_executable *exe, odn_step *s, int arg, uint32_t tid,
                       const dnnl_memory_desc_t *have);
/* Adds tensor `tid` as an operand updated in place (reorders before and after if needed). */
xpb_status odn_inout(xpb_executable *exe, odn_step *s, int arg, uint32_t tid,
                     const dnnl_memory_desc_t *want);
/* Adds a step-private buffer of descriptor `md` (a workspace nobody else reads). */
xpb_status odn_scratch_operand(xpb_executable *exe, odn_step *s, int arg,
                               const dnnl_memory_desc_t *md);
/* Reshaped and strided views of a tensor stored dense row-major (op set 3: matrices seen
 * transposed, a [4H, I] weight as oneDNN's 5-D ldgoi, rank padded with leading 1s).
 * odn_in_as reads tensor `tid` stored dense row-major in view->data_type (odn_in's reorder or
 * copy first when it is stored otherwise) and hands the step those bytes described by `view`,
 * a descriptor of the same elements in another shape; when `want` (NULL: `view`) differs
 * from `view`, a reorder from the view into a temporary in `want` comes first. */
xpb_status odn_in_as(xpb_executable *exe, odn_step *s, int arg, uint32_t tid,
                     const dnnl_memory_desc_t *view, const dnnl_memory_desc_t *want);
/* The step writes `have` (NULL: `view`); tensor `tid` (XPB_NO_TENSOR: a step-private buffer)
 * is stored dense row-major in view->data_type when it is not decided yet and receives the
 * elements through `view`, with reorders after the step where `have`, or its storage,
 * differ. */
xpb_status odn_out_as(xpb_executable *exe, odn_step *s, int arg, uint32_t tid,
                      const dnnl_memory_desc_t *view, const dnnl_memory_desc_t *have);

/* ---- implementation choice by timing (tune.c) ---- */

/* Decisions remembered for the rest of the process, by kind and key bytes (zero any
 * padding): odn_memo_find sets *value and returns 1 when `key` was added before. */
enum { ODN_MEMO_TUNE = 1, ODN_MEMO_LOWER = 2 };
int odn_memo_find(int kind, const void *key, size_t size, int *value);
void odn_memo_add(int kind, const void *key, size_t size, int value);

#define ODN_TUNE_FP32 1u /* odn_pd_tuned: tune under fp32 too, not only under bf16-mixed */
/* odn_pd_tuned: another implementation replaces oneDNN's first choice only when it is at least
 * 25% faster. Implementations round differently, and a near tie can go either way from one
 * process to the next: with this, fp32 training's numbers change between processes only when
 * the measured ratio sits near the margin. */
#define ODN_TUNE_CLEAR_WIN 2u
/* Like odn_pd_create, but under bf16-mixed (and fp32 with ODN_TUNE_FP32) it times every
 * implementation oneDNN offers with these post-ops (plus the reorders from want[k], the layout
 * argument args[k] is stored in, to what the candidate reads; NULL: no cost) and keeps the
 * fastest. The choice is remembered per `op_desc` (desc_size bytes) and post-ops for the rest
 * of the process. */
xpb_status odn_pd_tuned(dnnl_primitive_desc_t *out, xpb_executable *exe, const void *op_desc,
                        size_t desc_size, const_dnnl_post_ops_t po, unsigned flags,
                        const_dnnl_primitive_desc_t hint, const int *args,
                        const dnnl_memory_desc_t *const *want, int n_want, const char *what);

#define ODN_TUNE_RUNS 3 /* timed executions per candidate; the fastest counts */
/* Seconds one execution of `pd` takes on scratch memory (best of ODN_TUNE_RUNS), plus the
 * reorders from want[k] to what it reads for argument args[k]; negative when it cannot run. */
double odn_time_pd(xpb_executable *exe, const_dnnl_primitive_desc_t pd, const int *args,
                   const dnnl_memory_desc_t *const *want, int n_want);

/* ---- fusion (fusion.c) ---- */

/* Fills exe->fuse: which ops other ops absorb (exe->fusion on, keep_all off). */
xpb_status odn_plan_fusion(xpb_executable *exe);
/* Post-ops for the chain op `op` heads (eltwise / sum); *out NULL when there are none. The
 * caller destroys *out. */
xpb_status odn_fused_post_ops(dnnl_post_ops_t *out, xpb_executable *exe, uint32_t op);

/* ---- convolution backward weights as im2col + matmul (lower_conv.c) ---- */

/* A convolution's geometry; dilation counts from 1. Lives in odn_step.p for the kernels. */
typedef struct odn_conv_shape {
    int64_t n, c, h, w, k, kh, kw, oh, ow, sh, sw, ph, pw, dh, dw;
} odn_conv_shape;

/* True when the lowered backward weights beats `direct` (timed once per shape and layouts
 * per process) for dY stored as dy_md and x as x_md. */
int odn_lowered_bwdw_wins(xpb_executable *exe, const odn_conv_shape *c, dnnl_data_type_t dt,
                          const dnnl_memory_desc_t *x_md, const dnnl_memory_desc_t *dy_md, int bias,
                          const_dnnl_primitive_desc_t direct);
/* Emits im2col, the matmul and the bias sum for CONV2D_BWD_WEIGHTS (dy, x -> dw[, db]). */
xpb_status odn_emit_lowered_bwdw(xpb_executable *exe, const odn_conv_shape *c, dnnl_data_type_t dt,
                                 uint32_t dy, uint32_t x, uint32_t dw, uint32_t db);

/* ---- summing down to a shape (reduce.c) ---- */

/* Emits y = the buffer `src_buf` (descriptor `src_md`) summed over the dims where `view`, a
 * view of tensor y of the same rank (XPB_NO_TENSOR: a step-private buffer), has 1; a copy
 * when it has none. */
xpb_status odn_emit_sum_to(xpb_executable *exe, uint32_t src_buf, const dnnl_memory_desc_t *src_md,
                           uint32_t y, const dnnl_memory_desc_t *view);

/* ---- op families: each compiles program op exe->cur_op into steps ---- */

xpb_status odn_compile_conv(xpb_executable *exe);   /* prim_conv.c: CONV2D*, CONV_T2D* */
xpb_status odn_compile_linear(xpb_executable *exe); /* prim_ip.c: LINEAR* */
xpb_status odn_compile_bnorm(xpb_executable *exe);  /* prim_bnorm.c: BATCHNORM_* */
/* prim_eltwise.c: RELU, LEAKY_RELU, TANH, GELU and their backward ops, SCALE */
xpb_status odn_compile_eltwise(xpb_executable *exe);
xpb_status odn_compile_pool(xpb_executable *exe);    /* prim_pool.c: *POOL* */
xpb_status odn_compile_elem(xpb_executable *exe);    /* kern_elem.c: ADD, RESHAPE, FILL, COPY */
xpb_status odn_compile_pad(xpb_executable *exe);     /* kern_pad.c: REFLECTION_PAD* */
xpb_status odn_compile_inorm(xpb_executable *exe);   /* kern_inorm.c: INSTANCENORM* */
xpb_status odn_compile_loss(xpb_executable *exe);    /* kern_loss.c: SOFTMAX_XENT*, *_LOSS* */
xpb_status odn_compile_dropout(xpb_executable *exe); /* kern_dropout.c */
xpb_status odn_compile_optim(xpb_executable *exe);   /* kern_optim.c: SGD, ADAM(W)_UPDATE */
xpb_status odn_compile_comm(xpb_executable *exe);    /* kern_comm.c: ALL_REDUCE (op set 2) */
/* op set 3 */
xpb_status odn_compile_matmul(xpb_executable *exe);  /* prim_matmul.c: (BATCHED_)MATMUL(_BWD) */
xpb_status odn_compile_bcast(xpb_executable *exe);   /* prim_bcast.c: ADD_BROADCAST, MUL, SUM_TO */
xpb_status odn_compile_permute(xpb_executable *exe); /* prim_permute.c: PERMUTE */
xpb_status odn_compile_softmax(xpb_executable *exe); /* prim_softmax.c: SOFTMAX(_BWD) */
xpb_status odn_compile_lnorm(xpb_executable *exe);   /* prim_lnorm.c: LAYER_NORM(_BWD) */
xpb_status odn_compile_lstm(xpb_executable *exe);    /* lower_lstm.c: LSTM(_BWD) */
/* kern_lstm_cell.c: the element-wise halves of an LSTM time step (operands there) */
xpb_status odn_lstm_cell_fwd(odn_step *s);
xpb_status odn_lstm_cell_bwd(odn_step *s);
xpb_status odn_compile_embed(xpb_executable *exe); /* kern_embed.c: EMBEDDING(_BWD) */
xpb_status odn_compile_clip(xpb_executable *exe);  /* kern_clip.c: CLIP_GRAD_NORM */
/* Reads the communicator of the compile options (ABI 1.2; NULL for one process) into exe->comm,
 * refusing one that lacks what ALL_REDUCE calls. */
xpb_status odn_comm_setup(xpb_executable *exe, const xpb_compile_options *opts);
/* Frees the bucket staging. */
void odn_comm_free(xpb_executable *exe);

/* ---- bf16 conversions (the policy is precision.c) ---- */

static inline float odn_bf16_to_f32(uint16_t v)
{
    union {
        uint32_t u;
        float f;
    } x = {.u = (uint32_t)v << 16};
    return x.f;
}

static inline uint16_t odn_f32_to_bf16(float f)
{
    union {
        float f;
        uint32_t u;
    } x = {.f = f};
    /* round to nearest even; a NaN stays a quiet NaN. Branch-free, so loops vectorize. */
    uint32_t rounded = x.u + 0x7fffu + ((x.u >> 16) & 1u);
    uint32_t nan = (x.u & 0x7fffffffu) > 0x7f800000u;
    return (uint16_t)(nan ? (x.u >> 16) | 0x40u : rounded >> 16);
}

/* Element i of a buffer of type dt (f32 or bf16) as float / stored from float. */
static inline float odn_load(const void *p, dnnl_data_type_t dt, int64_t i)
{
    return dt == dnnl_bf16 ? odn_bf16_to_f32(((const uint16_t *)p)[i]) : ((const float *)p)[i];
}

static inline void odn_store(void *p, dnnl_data_type_t dt, int64_t i, float v)
{
    if (dt == dnnl_bf16)
        ((uint16_t *)p)[i] = odn_f32_to_bf16(v);
    else
        ((float *)p)[i] = v;
}

/* ---- the dispatcher (compile.c) ---- */

/* compile(): *out is owned by the caller and released with odn_destroy. On failure the message
 * is in be->err. */
xpb_status odn_compile_program(xpb_executable **out, xpb_backend *be, const xpb_program *prog,
                               const xpb_compile_options *opts);
/* destroy(): frees everything the executable holds; NULL is a no-op. */
void odn_destroy(xpb_executable *exe);

/* ---- running and reporting (run.c) ---- */

xpb_status odn_run(xpb_executable *exe, uint32_t phase);
xpb_status odn_profile_read(xpb_executable *exe, xpb_op_profile *out, uint32_t capacity,
                            uint32_t *count);
xpb_status odn_memory_stats(xpb_executable *exe, xpb_memory_stats *out);

/* ---- the host boundary (transfer.c) ---- */

xpb_status odn_write(xpb_executable *exe, uint32_t tensor, const void *data, size_t bytes);
/* write() restricted to INPUT tensors; done when it returns (see transfer.c). */
xpb_status odn_write_async(xpb_executable *exe, uint32_t tensor, const void *data, size_t bytes);
xpb_status odn_read(xpb_executable *exe, uint32_t tensor, void *data, size_t bytes);
/* Creates the transfer reorders of every host-written INPUT tensor now, so that writing a
 * streamed batch in a timed step creates nothing (after planning). */
xpb_status odn_transfer_prepare_inputs(xpb_executable *exe);
/* Frees the transfer objects of every tensor. */
void odn_transfer_free(xpb_executable *exe);

/* ---- steps as text (dump.c) ---- */

/* Prints every step (op, primitive and implementation or kernel, operands with their layouts)
 * to `f`: compile does it when the environment variable XPB_ONEDNN_DUMP is set. */
void odn_dump_steps(const xpb_executable *exe, FILE *f);

/* ---- threads (threads.c) ---- */

/* The OpenMP team size of the calling thread (OMP_NUM_THREADS or all CPUs), at least 1. */
uint32_t odn_default_threads(void);
/* Sets the OpenMP thread count for this executable's work (0: leave it). */
void odn_set_threads(uint32_t threads);

/* ---- the device (device.c) ---- */

/* The isa.h feature bits that both CPUID and the ISA oneDNN dispatches to have. */
uint32_t odn_cpu_features(void);
/* Fills the members of *out that out->struct_size covers: name, kind CPU, memory 0 (host
 * memory), libraries (oneDNN's version and ISA), precisions and emulated precisions, threads,
 * and with an opened backend `be` the measured peaks (measured once per process; NULL: peaks
 * 0, unknown, nothing is measured). */
void odn_device_describe(xpb_device_info *out, xpb_backend *be);

/* ---- memory bandwidth (bandwidth.c) ---- */

/* The host memory's STREAM triad bandwidth in bytes/s on `threads` threads (the best of five
 * runs after a warm-up), and how it was measured into `source`; 0 when the arrays cannot be
 * allocated. Takes about half a second. */
double odn_measure_bandwidth(char *source, size_t size, int threads);

#endif
