/* What the steps point at: every own-kernel step's parameter block (device pointers into the
 * arena, the workspace, the phase record, the dropout counters) and every convolution's variant
 * pack, bound at compile to the arena and the one workspace; and what compile does when a step
 * must change after they were bound: a fused convolution whose plan fails at the warm-up or in a
 * stream capture becomes the convolution alone plus the epilogue kernel (cux_unfuse), growing
 * the workspace (and binding every step again) when the new plan needs more. */
#include <string.h>

#include "glue/arena.h"
#include "glue/bind.h"
#include "glue/conv.h"
#include "glue/log.h"
#include "glue/status.h"
#include "plan/plan_error.h"

/* The record of `phase` in the arena (device memory owned by the executable). */
static cux_phase_rec *dev_rec(const xpb_executable *exe, uint32_t phase)
{
    return (cux_phase_rec *)(exe->arena + exe->plan->bufs[exe->plan->state_buf].offset +
                             cux_rec_offset(phase));
}

/* The kernel parameter block of an own-kernel step. */
static void fill_kparams(xpb_executable *exe, const cux_step *s, cux_kparams *kp)
{
    const cux_plan *plan = exe->plan;
    memset(kp, 0, sizeof *kp);
    kp->kernel = s->kernel;
    kp->op = s->op == CUX_NONE ? -1 : (int32_t)s->op;
    kp->act = s->act;
    kp->alpha = s->act_alpha;
    kp->flags = s->flags;
    if (s->op != CUX_NONE) {
        const xpb_op *op = xpb_program_op(exe->prog, s->op);
        kp->attrs = op->attrs;
        if (XPB_OP_HAS(exe->prog, max_norm)) { /* a host of ABI 1.3 or later */
            kp->a3.transpose = op->transpose;
            for (int d = 0; d < 4; d++)
                kp->a3.perm[d] = op->perm[d];
            kp->a3.causal = op->causal;
            kp->a3.approximate = op->approximate;
            kp->a3.index_flags = op->index_flags;
            kp->a3.padding_idx = op->padding_idx;
            kp->a3.ignore_index = op->ignore_index;
            kp->a3.label_smoothing = op->label_smoothing;
            kp->a3.max_norm = op->max_norm;
        }
    }
    kp->index = s->index;
    for (int k = 0; k < CUX_MAX_IN; k++)
        kp->t[CUX_T_IN + k] = cux_tview_of(exe, &s->in[k]);
    for (int k = 0; k < CUX_MAX_OUT; k++)
        kp->t[CUX_T_OUT + k] = cux_tview_of(exe, &s->out[k]);
    kp->t[CUX_T_BIAS] = cux_tview_of(exe, &s->bias);
    kp->t[CUX_T_RESID] = cux_tview_of(exe, &s->resid);
    kp->t[CUX_T_MASK] = cux_tview_of(exe, &s->mask);
    kp->t[CUX_T_EXTRA] = cux_tview_of(exe, &s->extra);
    kp->scratch = exe->workspace;
    kp->scratch_bytes = exe->workspace_bytes;
    uint32_t phase = s->phase != CUX_NONE ? s->phase : 0;
    kp->rec = exe->prog->n_phases ? dev_rec(exe, phase) : NULL;
    if (s->counter != CUX_NONE)
        kp->counters = (uint64_t *)(exe->arena + plan->bufs[plan->state_buf].offset +
                                    cux_counter_offset(plan, s->counter));
    kp->n_counters = s->n_counters;
    kp->sm_count = exe->be->sm_count;
}

/* The epilogue after a conv / matmul that the engine could not fuse: y = act(y [+ bias]
 * [+ residual]) in place. */
static void fill_epilogue(xpb_executable *exe, cux_run_step *rs)
{
    const cux_step *s = rs->step;
    cux_step e = *s;
    e.kernel = CUX_K_EPILOGUE;
    if (!rs->epilogue_bias)
        e.bias.buf = CUX_NONE;
    if (s->engine == CUX_ENG_MATMUL)
        e.resid.buf = CUX_NONE;
    fill_kparams(exe, &e, &rs->kp);
}

/* The parameter block of step rs: its own kernel, or the epilogue after its engine. */
static void bind_kernel(xpb_executable *exe, cux_run_step *rs)
{
    if (rs->step->engine == CUX_ENG_KERNEL)
        fill_kparams(exe, rs->step, &rs->kp);
    else if (rs->epilogue)
        fill_epilogue(exe, rs);
}

xpb_status cux_bind_steps(xpb_executable *exe)
{
    const cux_plan *plan = exe->plan;
    xpb_status st;
    for (uint32_t g = 0; g < plan->n_steps; g++) {
        cux_run_step *rs = &exe->steps[g];
        bind_kernel(exe, rs);
        if (rs->step->engine == CUX_ENG_CONV && (st = cux_conv_bind(exe, rs)) != XPB_OK)
            return st;
    }
    for (uint32_t g = 0; g < plan->n_prep; g++) {
        exe->prep[g].step = &plan->prep[g];
        fill_kparams(exe, &plan->prep[g], &exe->prep[g].kp);
    }
    return XPB_OK;
}

/* Makes the workspace at least `bytes` (everything queued on it finished first) and binds every
 * step to the new one; *grew says whether it moved. */
static xpb_status grow_workspace(xpb_executable *exe, size_t bytes, int *grew)
{
    *grew = 0;
    if (bytes <= exe->workspace_bytes)
        return XPB_OK;
    CUX_CUDA(exe, CUX_NONE, cudaStreamSynchronize(exe->be->stream), "compile: workspace");
    if (exe->workspace)
        cux_released(cudaFree(exe->workspace), "compile: cudaFree (workspace)");
    exe->workspace = NULL;
    exe->workspace_bytes = 0;
    CUX_CUDA(exe, CUX_NONE, cudaMalloc(&exe->workspace, bytes), "compile: workspace");
    exe->workspace_bytes = bytes;
    *grew = 1;
    return cux_bind_steps(exe);
}

int cux_fused_conv(const xpb_executable *exe, uint32_t g)
{
    const cux_run_step *rs = &exe->steps[g];
    return rs->step->engine == CUX_ENG_CONV && rs->conv.fused;
}

xpb_status cux_unfuse(xpb_executable *exe, uint32_t g, const char *why, int *grew)
{
    cux_run_step *rs = &exe->steps[g];
    char label[256];
    cux_op_label(exe->prog, rs->step->op, label, sizeof label);
    cux_log(XPB_LOG_WARN,
            "%s: the fused cuDNN plan (%s) failed %s; the convolution runs alone and the epilogue "
            "kernel after it",
            label, rs->conv.engine, why);
    (void)cudaGetLastError(); /* the failure was not sticky (the caller checked) */
    *grew = 0;
    xpb_status st = cux_conv_prepare(exe, g, 0);
    if (st != XPB_OK)
        return st;
    exe->n_unfused++;
    if ((size_t)rs->conv.workspace > exe->workspace_bytes)
        return grow_workspace(exe, (size_t)rs->conv.workspace, grew);
    bind_kernel(exe, rs);
    return cux_conv_bind(exe, rs);
}
