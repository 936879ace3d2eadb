/* The lowering of a model's forward graph to a program (model_program.h): the state it
 * keeps and the steps that share it. Private to core/program/:
 *   lower_emit.c    tensors and ops of the program, the forward form of each node
 *   backward.c      graph-level automatic differentiation: backward ops, gradient sums
 *   lower_phase.c   a training phase (forward, backward, optimizer updates) or inference
 *   lower_sync.c    data-parallel gradient averaging: ALL_REDUCE ops in buckets during backward
 *   model_program.c the whole program: declared tensors, phases, losses, lifetimes, counts */
#ifndef XPB_CORE_LOWERING_H
#define XPB_CORE_LOWERING_H

#include <stdint.h>

#include "program/builder.h"
#include "program/program_data.h"
#include "program/program_options.h"

/* Gradient contributions collected for one value before they are summed. */
typedef struct contrib {
    uint32_t *tensors;
    uint8_t *alias; /* 1: the tensor is shared with another value (ADD passes dy through) */
    size_t n;
} contrib;

typedef struct lowering {
    xpb_model_program *mp;
    const xpb_graph *g;
    const xpb_program_options *cfg;
    size_t cap_tensors, cap_ops;
    uint32_t *tensor_of; /* per graph value: its forward tensor, XPB_NO_TENSOR if none */
    uint32_t *ws_of;     /* per node: first workspace output tensor (ws_*), XPB_NO_TENSOR */
    uint8_t *computed;   /* per node: emitted in an earlier phase */
    contrib *grads;      /* per value */
    double *loss_weight; /* per value */
    xpb_err *err;
    /* Gradient averaging (lower_sync.c), for a program built for more than one rank. */
    uint32_t *param_grad; /* per value: a parameter's finished GRAD tensor, XPB_NO_TENSOR */
    uint32_t *ready_at;   /* per value: the node whose backward completes its gradient, 0 */
    uint32_t *pending;    /* GRAD tensors of the bucket being filled */
    size_t n_pending;
    uint64_t pending_bytes;
    uint32_t next_bucket; /* the bucket number of the next bucket (1, 2, ...) */
} lowering;

/* XPB_OUT_OF_MEMORY with the lowering's message. */
xpb_status xpb_lower_oom(lowering *L);

/* A unique copy of `base` among the program's tensor names ("x", then "x#2" ...), malloc'ed,
 * owned by the caller (the program, once stored); NULL when out of memory. */
char *xpb_lower_unique_name(const xpb_model_program *mp, const char *base);

/* Appends a tensor; `value` is the graph value it holds (0 for none). */
xpb_status xpb_lower_new_tensor(uint32_t *out, lowering *L, const char *name, const char *layer,
                                uint32_t dtype, uint32_t role, uint32_t ndim, const int64_t *dims,
                                uint32_t value);

/* Appends a tensor shaped like tensor `like`, named like it plus `suffix`; a gradient role
 * records `like` as what it is the gradient of. */
xpb_status xpb_lower_tensor_like(uint32_t *out, lowering *L, uint32_t like, const char *suffix,
                                 uint32_t role);

/* Appends an op (attributes copied from `a` when not NULL). */
xpb_status xpb_lower_emit(lowering *L, uint32_t kind, const char *layer, const uint32_t *in,
                          uint32_t n_in, const uint32_t *out, uint32_t n_out,
                          const xpb_op_attrs *a);
/* The same with op set 3's attributes (`a3` may be NULL); ops with more operands than
 * xpb_op's inline arrays get inputs_all / outputs_all, owned by the program. */
xpb_status xpb_lower_emit3(lowering *L, uint32_t kind, const char *layer, const uint32_t *in,
                           uint32_t n_in, const uint32_t *out, uint32_t n_out,
                           const xpb_op_attrs *a, const xpb_op_attrs3 *a3);

/* SplitMix64's finaliser: per-layer seeds from the run's seed. */
uint64_t xpb_lower_mix64(uint64_t z);

/* The forward op(s) of node `nid` in the program's mode (training or evaluation form). */
xpb_status xpb_lower_forward(lowering *L, uint32_t nid);

/* The backward ops of node `nid` given its output gradient `dy` (or, for a loss, its weight
 * `scale`), for the values `rg` marks as needing a gradient. */
xpb_status xpb_lower_backward(lowering *L, uint32_t nid, uint32_t dy, double scale,
                              const uint8_t *rg);

/* Sums the gradient contributions of graph value `value` into one tensor (*out;
 * XPB_NO_TENSOR when none); a parameter's becomes its GRAD tensor "<param>.grad". */
xpb_status xpb_lower_finalize_grad(uint32_t *out, lowering *L, uint32_t value);

/* Marks in `need` the nodes `value` depends on. */
void xpb_lower_mark_ancestors(const xpb_graph *g, uint32_t value, uint8_t *need);

/* Gradient averaging over the ranks of a data-parallel program (lower_sync.c). Whether the
 * program averages: built for more than one rank with parallel data. */
int xpb_lower_sync_enabled(const lowering *L);
/* Before the backward ops of a phase: which node completes each parameter's gradient (the
 * first of its consumers in forward order among `need`, as backward runs in reverse). */
xpb_status xpb_lower_sync_begin(lowering *L, const uint8_t *need, const uint8_t *rg);
/* After the backward ops of node `nid`: finishes the gradients it completed and puts them in
 * the bucket being filled, emitting the bucket's ALL_REDUCE ops once it holds bucket_mb. */
xpb_status xpb_lower_sync_after_node(lowering *L, uint32_t nid, const uint8_t *rg);
/* After the last backward op: the last (partial) bucket. */
xpb_status xpb_lower_sync_end(lowering *L);

/* Phase `p` of a training program / the inference program. */
xpb_status xpb_lower_training_phase(lowering *L, uint32_t p);
xpb_status xpb_lower_inference(lowering *L);

#endif
