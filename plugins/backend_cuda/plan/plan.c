/* cux_plan_build: the order of the planning passes (plan.h) and the per-op tables they share. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"
#include "plan/plan_check.h"
#include "plan/plan_error.h"
#include "plan/plan_fusion.h"
#include "plan/plan_lower.h"
#include "plan/plan_memory.h"
#include "plan/plan_scaling.h"
#include "plan/plan_tensor.h"

void cux_plan_free(cux_plan *plan)
{
    if (!plan)
        return;
    free(plan->store);
    free(plan->fuse);
    free(plan->op_phase);
    free(plan->n_readers);
    free(plan->dropout_of);
    free(plan->bufs);
    free(plan->steps);
    free(plan->phase_begin);
    free(plan->phase_end);
    free(plan->prep);
    free(plan->copies);
    free(plan->post);
    free(plan->phase_scaled);
    free(plan->op_scaled);
    free(plan->end_first);
    free(plan->end_bufs);
    free(plan);
}

/* Per-op and per-tensor tables: phases, readers, dropout counters, defaults of the fusion
 * records. */
static xpb_status tables(cux_plan *plan)
{
    const xpb_program *p = plan->prog;
    plan->store = calloc(p->n_tensors + 1u, sizeof *plan->store);
    plan->n_readers = calloc(p->n_tensors + 1u, sizeof *plan->n_readers);
    plan->fuse = calloc(p->n_ops + 1u, sizeof *plan->fuse);
    plan->op_phase = calloc(p->n_ops + 1u, sizeof *plan->op_phase);
    plan->dropout_of = calloc(p->n_ops + 1u, sizeof *plan->dropout_of);
    plan->phase_begin = calloc(p->n_phases + 1u, sizeof *plan->phase_begin);
    plan->phase_end = calloc(p->n_phases + 1u, sizeof *plan->phase_end);
    if (!plan->store || !plan->n_readers || !plan->fuse || !plan->op_phase || !plan->dropout_of ||
        !plan->phase_begin || !plan->phase_end)
        return cux_fail(plan, XPB_OUT_OF_MEMORY, "compile: out of memory");
    for (uint32_t i = 0; i < p->n_ops; i++)
        plan->op_phase[i] = CUX_NONE;
    for (uint32_t k = 0; k < p->n_phases; k++) {
        const xpb_phase *ph = xpb_program_phase(p, k);
        for (uint32_t i = 0; i < ph->n_ops; i++)
            plan->op_phase[ph->first_op + i] = k;
    }
    for (uint32_t i = 0; i < p->n_ops; i++) {
        const xpb_op *op = xpb_program_op(p, i);
        for (uint32_t k = 0; k < op->n_inputs; k++) { /* operands past the inline six too */
            uint32_t t = xpb_op_input(p, op, k);
            if (t != XPB_NO_TENSOR)
                plan->n_readers[t]++;
        }
        cux_fuse *f = &plan->fuse[i];
        f->into = f->act_op = f->add_op = f->add_other = f->bn_op = f->act_bwd_op = CUX_NONE;
        f->out_tensor = op->n_outputs ? op->outputs[0] : CUX_NONE;
        plan->dropout_of[i] = CUX_NONE;
        if (op->kind == XPB_OP_DROPOUT && plan->op_phase[i] != CUX_NONE)
            plan->dropout_of[i] = plan->n_counters++;
    }
    return XPB_OK;
}

xpb_status cux_plan_build(cux_plan **out, const xpb_program *prog, const cux_options *opt,
                          const cux_target *target, char *err, size_t err_size)
{
    *out = NULL;
    cux_plan *plan = calloc(1, sizeof *plan);
    if (!plan) {
        snprintf(err, err_size, "compile: out of memory");
        return XPB_OUT_OF_MEMORY;
    }
    plan->prog = prog;
    plan->opt = *opt;
    plan->target = *target;
    plan->cur_op = CUX_NONE;
    plan->state_buf = CUX_NONE;
    xpb_status st;
    if ((st = cux_check_program(plan)) != XPB_OK || (st = tables(plan)) != XPB_OK ||
        (st = cux_plan_scaling(plan)) != XPB_OK || (st = cux_decide_storage(plan)) != XPB_OK ||
        (st = cux_check_all_reduce_storage(plan)) != XPB_OK ||
        (st = cux_plan_fusion(plan)) != XPB_OK || (st = cux_decide_shadows(plan)) != XPB_OK ||
        (st = cux_lower(plan)) != XPB_OK || (st = cux_place_buffers(plan)) != XPB_OK) {
        snprintf(err, err_size, "%s", plan->err);
        cux_plan_free(plan);
        return st;
    }
    *out = plan;
    return XPB_OK;
}
