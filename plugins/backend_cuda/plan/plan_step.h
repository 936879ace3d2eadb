/* The steps of the lowering and the views of their operands (plan_step.c). Every function that
 * returns a status leaves the message in the plan on failure (XPB_OUT_OF_MEMORY). */
#ifndef XPB_CUX_PLAN_STEP_H
#define XPB_CUX_PLAN_STEP_H

#include <stdint.h>

#include "plan/plan_types.h"

/* An absent operand (buf and tensor CUX_NONE). */
cux_view cux_no_view(void);
/* A view of buffer `buf` holding tensor `tid`'s value in `type` / `layout`. */
cux_view cux_make_view(const cux_plan *plan, uint32_t buf, uint32_t tid, int type, int layout);
/* True when a tensor of t's dims stored in layout `a` has the same bytes as in `b`. */
int cux_same_bytes(const xpb_tensor_desc *t, int a, int b);
/* True when tensor `t`'s buffer lives as long as the executable (keep_all, or host-visible). */
int cux_pinned_tensor(const cux_plan *plan, const xpb_tensor_desc *t);

/* The storage buffer of tensor `tid`, created on first use. */
xpb_status cux_tensor_buf(cux_plan *plan, uint32_t tid, uint32_t *out);
/* The view of tensor `tid` as it is stored (own kernels read and write any storage). */
xpb_status cux_stored(cux_plan *plan, uint32_t tid, cux_view *v);
/* cux_stored, or an absent view for XPB_NO_TENSOR. */
xpb_status cux_stored_opt(cux_plan *plan, uint32_t tid, cux_view *v);
/* Tensor `tid` as an engine reads it, in `type` and `layout`: the storage when it matches, else
 * the parameter's shadow, else a converted copy made earlier in the phase, else a new one (a
 * conversion step appended now, before the step that reads it). */
xpb_status cux_want(cux_plan *plan, uint32_t tid, int type, int layout, cux_view *v);
/* Tensor `tid` as an engine writes it, in `type` and `layout`: the storage when it matches,
 * else a temporary converted into the storage right after the step (cux_commit). */
xpb_status cux_produce(cux_plan *plan, uint32_t tid, int type, int layout, cux_view *v);
/* A new temporary buffer of `type` with logical dims dims[0..ndim) (ndim <= XPB_MAX_DIMS), row
 * major, holding no program tensor's value, and its view: scratch that a lowering passes between
 * its own steps (its lifetime runs from the first to the last step whose views name it). */
xpb_status cux_temp(cux_plan *plan, int type, uint32_t ndim, const int64_t *dims, cux_view *v);
/* Forgets the converted copies of tensor `tid` (it is being written). */
void cux_invalidate(cux_plan *plan, uint32_t tid);

/* A step of op `op` (CUX_NONE: bookkeeping) with no operands. */
cux_step cux_new_step(const cux_plan *plan, uint32_t op, int engine, int kernel);
/* A conversion step from `from` to `to` for op `op`, in the phase of the op being lowered. */
cux_step cux_convert_step(const cux_plan *plan, uint32_t op, cux_view from, cux_view to);
/* Appends a copy of `s` to the list (*list, *n, *cap), grown as needed. */
xpb_status cux_push_step(cux_step **list, uint32_t *n, uint32_t *cap, cux_plan *plan,
                         const cux_step *s);
/* Appends `s` to plan->steps and then the conversions its outputs asked for. */
xpb_status cux_commit(cux_plan *plan, const cux_step *s);
/* The activation fused into op `i`'s step (plan->fuse[i].act_op) onto step `s`. */
void cux_fused_act(const cux_plan *plan, uint32_t i, cux_step *s);

#endif
