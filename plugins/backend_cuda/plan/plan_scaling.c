/* fp16 loss scaling, decided per phase and per op (docs/backend-cuda.md "Precision policies").
 *
 * Under fp16-mixed the gradients that flow back from a loss are multiplied by the dynamic scale
 * S, so that small ones survive fp16 storage, and divided by S again just before the optimizer
 * reads them. Scaling must be invisible: nothing the host can read and no update whose gradient
 * did not come from a scaled loss may see S. So a phase scales only when
 *   - it holds a loss backward op (SOFTMAX_XENT_BWD, MSE_LOSS_BWD, L1_LOSS_BWD) whose output
 *     reaches, through the ops of the phase, the gradient an optimizer update of the phase
 *     reads (a "dependent" update), and
 *   - no tensor on those paths is host-visible (the host would read S times the value),
 * and then only the loss backward ops on those paths multiply by S, and only the dependent
 * updates are preceded by an UNSCALE of their gradient and skipped when it overflowed. Skipping
 * is all or none for a phase, so the dependent updates run at the end of the phase, after every
 * gradient is computed and unscaled (plan_lower.c): a program may update some parameters while
 * the backward of others still runs (CycleGAN does), and a phase where an op after an update
 * reads what the update wrote cannot be reordered so and does not scale. An
 * update of a gradient the host wrote (the SGD_UPDATE and ADAM_UPDATE cases of the conformance
 * suite) is never scaled, nor a program whose gradients the host reads. The host's training
 * programs put a phase's losses, backward ops and updates in that one phase, so a gradient
 * never crosses phases scaled.
 *
 * Gradient clipping by global norm (CLIP_GRAD_NORM, op set 3) reads the gradients the updates
 * read: in a scaled phase it runs in that deferred tail too, after the unscaling (as PyTorch's
 * GradScaler.unscale_ before clip_grad_norm_), or the phase does not scale.
 *
 * The dynamic scale starts at CUX_SCALE_INITIAL and doubles after CUX_SCALE_INTERVAL clean
 * steps (kernels/elem_math.h, cux_scaler_next); keep_all fixes it at 1 (every tensor is
 * host-visible then, and keeps its defined value). */
#include <stdlib.h>
#include <string.h>

#include "kernels/fault.h"
#include "plan/plan_error.h"
#include "plan/plan_scaling.h"
#include "plan/plan_tensor.h"

/* Marks, in phase [first, end), every tensor computed from a marked one (forward in program
 * order; updates write parameters, which carry no gradient). */
static void mark_forward(const cux_plan *plan, uint32_t first, uint32_t end, uint8_t *mark)
{
    for (uint32_t j = first; j < end; j++) {
        const xpb_op *op = cux_op(plan, j);
        if (cux_is_update(op->kind))
            continue;
        int hit = 0;
        for (uint32_t k = 0; k < op->n_inputs && !hit; k++) {
            uint32_t t = xpb_op_input(plan->prog, op, k);
            hit = t != XPB_NO_TENSOR && mark[t];
        }
        for (uint32_t k = 0; hit && k < op->n_outputs; k++) {
            uint32_t t = xpb_op_output(plan->prog, op, k);
            if (t != XPB_NO_TENSOR)
                mark[t] = 1;
        }
    }
}

/* Marks, in phase [first, end), every tensor a marked one is computed from (backward). */
static void mark_backward(const cux_plan *plan, uint32_t first, uint32_t end, uint8_t *mark)
{
    for (uint32_t j = end; j-- > first;) {
        const xpb_op *op = cux_op(plan, j);
        if (cux_is_update(op->kind))
            continue;
        int hit = 0;
        for (uint32_t k = 0; k < op->n_outputs && !hit; k++) {
            uint32_t t = xpb_op_output(plan->prog, op, k);
            hit = t != XPB_NO_TENSOR && mark[t];
        }
        for (uint32_t k = 0; hit && k < op->n_inputs; k++) {
            uint32_t t = xpb_op_input(plan->prog, op, k);
            if (t != XPB_NO_TENSOR)
                mark[t] = 1;
        }
    }
}

/* True when update op `j` may run at the end of its phase [.., end): no op of the phase after it
 * that is not an update reads a tensor it writes (the parameter and the optimizer's state). */
static int deferrable(const cux_plan *plan, uint32_t j, uint32_t end)
{
    const xpb_op *u = cux_op(plan, j);
    for (uint32_t i = j + 1; i < end; i++) {
        const xpb_op *op = cux_op(plan, i);
        if (cux_is_update(op->kind))
            continue;
        for (uint32_t k = 0; k < op->n_inputs; k++)
            for (uint32_t w = 0; w < u->n_inputs; w++) /* input 1 is the gradient */
                if (w != 1 && xpb_op_input(plan->prog, op, k) == u->inputs[w])
                    return 0;
    }
    return 1;
}

/* True when CLIP_GRAD_NORM op `j` may run at the end of its phase [.., end), after the
 * unscaling: no op after it other than an update or another clip reads a gradient it scales. */
static int clip_deferrable(const cux_plan *plan, uint32_t j, uint32_t end)
{
    const xpb_program *p = plan->prog;
    const xpb_op *c = cux_op(plan, j);
    for (uint32_t i = j + 1; i < end; i++) {
        const xpb_op *op = cux_op(plan, i);
        if (cux_is_update(op->kind) || op->kind == XPB_OP_CLIP_GRAD_NORM)
            continue;
        for (uint32_t k = 0; k < op->n_inputs; k++)
            for (uint32_t w = 0; w < c->n_inputs; w++)
                if (xpb_op_input(p, op, k) == xpb_op_input(p, c, w))
                    return 0;
    }
    return 1;
}

/* Decides phase `phase`: flags its scaled loss backward ops and dependent updates in
 * plan->op_scaled and sets plan->phase_scaled. `from`, `to` are scratch marks per tensor. */
static void decide_phase(cux_plan *plan, uint32_t phase, uint8_t *from, uint8_t *to)
{
    const xpb_program *p = plan->prog;
    const xpb_phase *ph = xpb_program_phase(p, phase);
    uint32_t first = ph->first_op, end = ph->first_op + ph->n_ops;
    memset(from, 0, p->n_tensors);
    memset(to, 0, p->n_tensors);
#if defined(XPB_CUDA_STANDIN)
    if (cux_fault("loss_scaling_every_update")) { /* the rule before 1952368 */
        for (uint32_t j = first; j < end; j++)
            if (cux_is_update(cux_op(plan, j)->kind))
                plan->op_scaled[j] = plan->phase_scaled[phase] = plan->scaled = 1;
        return;
    }
#endif
    /* what the loss gradients reach, and which updates read such a gradient */
    for (uint32_t j = first; j < end; j++) {
        const xpb_op *op = cux_op(plan, j);
        if (cux_is_loss_bwd(op->kind) && op->n_outputs > 0 && op->outputs[0] != XPB_NO_TENSOR)
            from[op->outputs[0]] = 1;
    }
    mark_forward(plan, first, end, from);
    int dependent = 0;
    for (uint32_t j = first; j < end; j++) {
        const xpb_op *op = cux_op(plan, j);
        if (cux_is_update(op->kind) && from[op->inputs[1]]) {
            to[op->inputs[1]] = 1;
            dependent++;
        }
    }
    if (!dependent)
        return;
    /* the updates run after everything else of the phase (all or none of them, once every
     * gradient's overflow is known): nothing after an update may read what it writes */
    for (uint32_t j = first; j < end; j++)
        if (cux_is_update(cux_op(plan, j)->kind) && to[cux_op(plan, j)->inputs[1]] &&
            !deferrable(plan, j, end))
            return;
    /* gradient clipping (CLIP_GRAD_NORM) must see unscaled gradients: it joins the deferred tail,
     * after the unscaling and before the updates, which needs every gradient it clips to be a
     * dependent update's (so unscaled) and nothing after it but updates and other clips to read
     * them */
    for (uint32_t j = first; j < end; j++) {
        const xpb_op *op = cux_op(plan, j);
        if (op->kind != XPB_OP_CLIP_GRAD_NORM)
            continue;
        int scaled = 0, unscaled = 0;
        for (uint32_t k = 0; k < op->n_inputs; k++) {
            uint32_t g = xpb_op_input(p, op, k);
            scaled |= from[g] != 0;
            unscaled |= to[g] == 0;
        }
        if (!scaled)
            continue;
        if (unscaled || !clip_deferrable(plan, j, end))
            return;
    }
    /* the scaled region: on a path from a loss gradient to a dependent update's gradient */
    mark_backward(plan, first, end, to);
    for (uint32_t t = 0; t < p->n_tensors; t++)
        if (from[t] && to[t] && cux_host_visible(xpb_program_tensor(p, t)))
            return; /* the host would see the scale: this phase does not scale */
    for (uint32_t j = first; j < end; j++) {
        const xpb_op *op = cux_op(plan, j);
        if (cux_is_loss_bwd(op->kind) && op->n_outputs > 0 && op->outputs[0] != XPB_NO_TENSOR &&
            to[op->outputs[0]])
            plan->op_scaled[j] = 1;
        if (cux_is_update(op->kind) && to[op->inputs[1]])
            plan->op_scaled[j] = 1;
        int in_order = 0;
#if defined(XPB_CUDA_STANDIN)
        in_order = cux_fault("clip_before_unscale"); /* clipping the scaled gradients */
#endif
        for (uint32_t k = 0; op->kind == XPB_OP_CLIP_GRAD_NORM && !in_order && k < op->n_inputs;
             k++)
            if (from[xpb_op_input(p, op, k)])
                plan->op_scaled[j] = 1; /* runs after the unscaling (plan_lower.c) */
    }
    plan->phase_scaled[phase] = 1;
    plan->scaled = 1;
}

xpb_status cux_plan_scaling(cux_plan *plan)
{
    const xpb_program *p = plan->prog;
    plan->op_scaled = calloc(p->n_ops + 1u, sizeof *plan->op_scaled);
    plan->phase_scaled = calloc(p->n_phases + 1u, sizeof *plan->phase_scaled);
    if (!plan->op_scaled || !plan->phase_scaled)
        return cux_fail(plan, XPB_OUT_OF_MEMORY, "compile: out of memory (loss scaling)");
    int dynamic = !plan->opt.keep_all;
    plan->scale_initial = dynamic ? CUX_SCALE_INITIAL : 1.0f;
    plan->scale_interval = dynamic ? CUX_SCALE_INTERVAL : 0u;
    if (plan->opt.precision != XPB_PRECISION_FP16_MIXED)
        return XPB_OK;
    uint8_t *from = malloc(p->n_tensors + 1u), *to = malloc(p->n_tensors + 1u);
    if (!from || !to) {
        free(from);
        free(to);
        return cux_fail(plan, XPB_OUT_OF_MEMORY, "compile: out of memory (loss scaling)");
    }
    for (uint32_t k = 0; k < p->n_phases; k++)
        decide_phase(plan, k, from, to);
    free(from);
    free(to);
    return XPB_OK;
}
