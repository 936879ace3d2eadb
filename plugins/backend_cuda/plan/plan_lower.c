/* Lowering: every op of every phase becomes one step (plus conversions where an engine needs
 * another element type or layout than a tensor's storage), in program order:
 *
 *   convolutions and transposed convolutions   a cuDNN operation graph (CUX_ENG_CONV), the
 *       transposed ones as the adjoint modes (forward = backward-data, backward-data = forward,
 *       weights = backward-filter with x and dy swapped); their bias gradient an own reduction
 *   linear layers                              a cuBLASLt matmul (CUX_ENG_MATMUL)
 *   MATMUL, BATCHED_MATMUL and their backward  cuBLASLt matmuls, strided-batched
 *       (plan_lower_matmul.c, with CLIP_GRAD_NORM's steps)
 *   LSTM, LSTM_BWD                             cuBLASLt matmuls and own cell kernels per
 *       time step (plan_lower_lstm.c)
 *   everything else                            an own kernel (CUX_ENG_KERNEL), which reads and
 *       writes any storage type and layout, so it needs no conversion
 *   ALL_REDUCE (op set 2)                      an NCCL all-reduce (CUX_ENG_COLL) of the tensor's
 *       storage, in place, with ncclAvg; the ops of one bucket one NCCL group; nothing at all
 *       with one rank (the mean over one rank is the tensor itself)
 *
 * cuDNN reads its operands in the policy's type and the 4-D layout; cuBLASLt in the policy's
 * type, row-major. An operand stored otherwise is converted into a temporary before the step
 * (and the copy reused by later readers in the same phase until the tensor is written again);
 * an output that should be stored otherwise is written to a temporary and converted after the
 * step. RESHAPE shares its input's buffer when the bytes agree, else it is a conversion.
 *
 * Every phase starts with PHASE_BEGIN (resets the phase's status record) and ends with
 * PHASE_END (advances the dropout counters of the phase and, in a phase that scales its loss,
 * the loss scaler). In such a phase (plan_scaling.c decides which, under fp16-mixed) the
 * scaled loss backward steps multiply by the loss scale, and the dependent updates run at the
 * end of the phase, after one UNSCALE step per dependent
 * update's gradient divides it by the scale and records a non-finite value, in which case all
 * of those updates are skipped for the step (CUX_STEP_SKIPPABLE). */
#include "plan/plan_error.h"
#include "plan/plan_lower.h"
#include "plan/plan_lower_engines.h"
#include "plan/plan_lower_kernels.h"
#include "plan/plan_lower_lstm.h"
#include "plan/plan_lower_matmul.h"
#include "plan/plan_step.h"
#include "plan/plan_tensor.h"

/* ---- fp16 loss scaling (plan_scaling.c): the dependent updates of a scaled phase run at its
 * end, each gradient unscaled first, so that all of them or none are skipped ---- */

static xpb_status lower_deferred_updates(cux_plan *plan, uint32_t phase)
{
    const xpb_phase *ph = xpb_program_phase(plan->prog, phase);
    uint32_t end = ph->first_op + ph->n_ops;
    xpb_status st;
    for (uint32_t j = ph->first_op; j < end; j++) {
        const xpb_op *op = cux_op(plan, j);
        if (!cux_is_update(op->kind) || !plan->op_scaled[j])
            continue;
        plan->cur_op = j;
        cux_step s = cux_new_step(plan, j, CUX_ENG_KERNEL, CUX_K_UNSCALE);
        s.n_in = s.n_out = 1;
        if ((st = cux_stored(plan, op->inputs[1], &s.in[0])) != XPB_OK)
            return st;
        s.out[0] = s.in[0]; /* in place */
        if ((st = cux_commit(plan, &s)) != XPB_OK)
            return st;
    }
    /* gradient clipping reads the unscaled gradients (plan_scaling.c defers it here) */
    for (uint32_t j = ph->first_op; j < end; j++)
        if (cux_op(plan, j)->kind == XPB_OP_CLIP_GRAD_NORM && plan->op_scaled[j]) {
            plan->cur_op = j;
            if ((st = cux_lower_clip(plan, j)) != XPB_OK)
                return st;
        }
    for (uint32_t j = ph->first_op; j < end; j++)
        if (cux_is_update(cux_op(plan, j)->kind) && plan->op_scaled[j]) {
            plan->cur_op = j;
            if ((st = cux_lower_kernel(plan, j)) != XPB_OK)
                return st;
        }
    return XPB_OK;
}

/* ---- collectives ---- */

/* The bucket number of op `i` (0: a bucket of its own; read only when the program's ops have
 * the member, ABI 1.2). */
static uint32_t bucket_of(const cux_plan *plan, uint32_t i)
{
    return XPB_OP_HAS(plan->prog, bucket) ? cux_op(plan, i)->bucket : 0;
}

/* True when op `j` is an ALL_REDUCE of op `i`'s bucket: a non-zero bucket number, the same
 * phase (shapes.h checked that a bucket's ops are consecutive and in one phase). */
static int same_bucket(const cux_plan *plan, uint32_t i, uint32_t j)
{
    return j < plan->prog->n_ops && cux_op(plan, j)->kind == XPB_OP_ALL_REDUCE &&
           bucket_of(plan, i) != 0 && bucket_of(plan, j) == bucket_of(plan, i) &&
           plan->op_phase[j] == plan->op_phase[i];
}

/* ALL_REDUCE op `i`: one NCCL step over the tensor's storage, in place. Its view names the
 * gradient's buffer, so the memory plan keeps the gradient alive (and its bytes unshared) from
 * the backward op that writes it through this step to the update that reads it; everything
 * runs on one stream, so the reduce sees the finished gradient and the update the reduced one.
 * The steps of a bucket are consecutive (the ops are, and none needs a conversion) and form one
 * NCCL group: no memory-plan constraint (a bucket's gradients need not be contiguous) and no
 * packing copies, while NCCL still launches the whole bucket at once. Under fp16-mixed a scaled
 * phase unscales after every reduce of the phase (its updates run at its end): the averaged
 * scaled gradient is the same on every rank, so every rank finds the same overflow and skips
 * alike. */
static xpb_status lower_all_reduce(cux_plan *plan, uint32_t i)
{
    if (plan->opt.ranks <= 1)
        return XPB_OK; /* the identity: no step */
    const xpb_op *op = cux_op(plan, i);
    cux_step s = cux_new_step(plan, i, CUX_ENG_COLL, 0);
    s.n_in = s.n_out = 1;
    xpb_status st = cux_stored(plan, op->inputs[0], &s.in[0]);
    if (st != XPB_OK)
        return st;
    cux_invalidate(plan, op->inputs[0]); /* written in place: converted copies are stale */
    s.out[0] = s.in[0];
    int first = !(i > 0 && same_bucket(plan, i, i - 1)), last = !same_bucket(plan, i, i + 1);
    if (!(first && last)) {
        if (first) {
            s.flags |= CUX_STEP_GROUP_BEGIN;
            plan->n_groups++;
        }
        if (last)
            s.flags |= CUX_STEP_GROUP_END;
    }
    plan->n_coll++;
    return cux_commit(plan, &s);
}

/* ---- phases ---- */

static xpb_status bookkeeping(cux_plan *plan, uint32_t phase, int kernel, uint32_t first_counter,
                              uint32_t n_counters)
{
    cux_step s = cux_new_step(plan, CUX_NONE, CUX_ENG_KERNEL, kernel);
    s.phase = phase;
    s.counter = first_counter;
    s.n_counters = n_counters;
    if (kernel == CUX_K_PHASE_END && plan->phase_scaled[phase])
        s.flags |= CUX_STEP_SCALED; /* advance the loss scaler */
    return cux_push_step(&plan->steps, &plan->n_steps, &plan->cap_steps, plan, &s);
}

static xpb_status lower_op(cux_plan *plan, uint32_t i)
{
    const xpb_op *op = cux_op(plan, i);
    plan->cur_op = i;
    if (plan->fuse[i].into != CUX_NONE)
        return XPB_OK; /* another op's step does this one's work */
    switch (op->kind) {
    case XPB_OP_CONV2D:
    case XPB_OP_CONV2D_BWD_DATA:
    case XPB_OP_CONV2D_BWD_WEIGHTS:
    case XPB_OP_CONV_T2D:
    case XPB_OP_CONV_T2D_BWD_DATA:
    case XPB_OP_CONV_T2D_BWD_WEIGHTS:
        return cux_lower_conv(plan, i);
    case XPB_OP_LINEAR:
    case XPB_OP_LINEAR_BWD_DATA:
    case XPB_OP_LINEAR_BWD_WEIGHTS:
        return cux_lower_linear(plan, i);
    case XPB_OP_RESHAPE:
        return cux_lower_reshape(plan, i);
    case XPB_OP_ALL_REDUCE:
        return lower_all_reduce(plan, i);
    case XPB_OP_MATMUL:
    case XPB_OP_MATMUL_BWD:
    case XPB_OP_BATCHED_MATMUL:
    case XPB_OP_BATCHED_MATMUL_BWD:
        return cux_lower_matmul(plan, i);
    case XPB_OP_LSTM:
    case XPB_OP_LSTM_BWD:
        return cux_lower_lstm(plan, i);
    case XPB_OP_CLIP_GRAD_NORM:
        if (plan->op_scaled[i])
            return XPB_OK; /* after the unscaling (lower_deferred_updates) */
        return cux_lower_clip(plan, i);
    case XPB_OP_SGD_UPDATE:
    case XPB_OP_ADAM_UPDATE:
    case XPB_OP_ADAMW_UPDATE:
        if (plan->op_scaled[i])
            return XPB_OK; /* at the end of the phase (lower_deferred_updates) */
        return cux_lower_kernel(plan, i);
    default:
        return cux_lower_kernel(plan, i);
    }
}

xpb_status cux_lower(cux_plan *plan)
{
    const xpb_program *p = plan->prog;
    xpb_status st;
    for (uint32_t k = 0; k < p->n_phases; k++) {
        const xpb_phase *ph = xpb_program_phase(p, k);
        plan->n_copies = 0; /* converted copies do not cross phases */
        plan->phase_begin[k] = plan->n_steps;
        uint32_t first_counter = CUX_NONE, n_counters = 0;
        for (uint32_t j = ph->first_op; j < ph->first_op + ph->n_ops; j++)
            if (plan->dropout_of[j] != CUX_NONE) {
                if (first_counter == CUX_NONE)
                    first_counter = plan->dropout_of[j];
                n_counters++;
            }
        plan->cur_op = ph->n_ops ? ph->first_op : CUX_NONE;
        if ((st = bookkeeping(plan, k, CUX_K_PHASE_BEGIN, CUX_NONE, 0)) != XPB_OK)
            return st;
        for (uint32_t j = ph->first_op; j < ph->first_op + ph->n_ops; j++)
            if ((st = lower_op(plan, j)) != XPB_OK)
                return st;
        if (plan->phase_scaled[k] && (st = lower_deferred_updates(plan, k)) != XPB_OK)
            return st;
        if ((st = bookkeeping(plan, k, CUX_K_PHASE_END, first_counter, n_counters)) != XPB_OK)
            return st;
        plan->phase_end[k] = plan->n_steps;
    }
    plan->cur_op = CUX_NONE;
    /* Tensors no step touches still get storage when the host may write or read them. */
    for (uint32_t i = 0; i < p->n_tensors; i++) {
        uint32_t buf;
        if (plan->store[i].buf == CUX_NONE && cux_pinned_tensor(plan, cux_tensor(plan, i)) &&
            (st = cux_tensor_buf(plan, i, &buf)) != XPB_OK)
            return st;
    }
    uint64_t state = (uint64_t)p->n_phases * sizeof(cux_phase_rec) +
                     (uint64_t)plan->n_counters * sizeof(uint64_t);
    if ((st = cux_buf_new(&plan->state_buf, plan, state, CUX_BUF_STATE, CUX_NONE, 1)) != XPB_OK)
        return st;
    for (uint32_t g = 0; g < plan->n_steps; g++)
        if (plan->steps[g].scratch > plan->scratch_bytes)
            plan->scratch_bytes = plan->steps[g].scratch;
    return XPB_OK;
}
