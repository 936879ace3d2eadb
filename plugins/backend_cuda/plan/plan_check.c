/* Validation of a program and the compile options before anything is planned: the precision
 * policy against the device; the program's structure, tensors and ops by the SDK's shape rules
 * (shapes.h: xpb_program_validate, the rules of docs/ops.md that every backend shares, which
 * refuse by name an op or attribute of a later op set); and what this backend adds: phases in
 * program order, what cuDNN cannot express, and what its ALL_REDUCE (op set 2, NCCL) takes:
 * fp32 tensors stored in fp32, and, over more than one rank, a build that has NCCL. */
#include <stdio.h>
#include <string.h>

#include <xpubench/shapes.h>

#include "plan/plan_check.h"
#include "plan/plan_error.h"
#include "plan/target.h"

static const char *policy_name(uint32_t p)
{
    static const char *const names[] = {"?", "fp32", "tf32", "bf16-mixed", "fp16-mixed"};
    return p < 5 ? names[p] : "?";
}

static xpb_status check_options(cux_plan *plan)
{
    const char *why = cux_target_refusal(&plan->target, plan->opt.precision);
    if (why)
        return cux_fail(plan, XPB_UNSUPPORTED,
                        "precision %s (%u) refused on this device (sm_%d%d): %s",
                        policy_name(plan->opt.precision), plan->opt.precision,
                        plan->target.cc_major, plan->target.cc_minor, why);
    if (plan->opt.transfer > XPB_TRANSFER_STREAMED)
        return cux_fail(plan, XPB_UNSUPPORTED, "unknown transfer mode %u", plan->opt.transfer);
    return XPB_OK;
}

/* ---- the program's structure ---- */

static xpb_status check_structure(cux_plan *plan)
{
    const xpb_program *p = plan->prog;
    char msg[CUX_ERR_SIZE] = "";
    xpb_status st = xpb_program_validate(p, msg, sizeof msg);
    if (st != XPB_OK)
        return cux_fail(plan, st, "%s", msg); /* names the tensor, phase or op and its layer */
    if (p->opset > XPB_OPSET_VERSION)
        return cux_fail(plan, XPB_UNSUPPORTED,
                        "program uses op set %u; the cuda backend implements op set %d", p->opset,
                        XPB_OPSET_VERSION);
    /* one graph per phase, captured from consecutive steps: phases are runs of ops in order */
    uint32_t next = 0;
    for (uint32_t i = 0; i < p->n_phases; i++) {
        const xpb_phase *ph = xpb_program_phase(p, i);
        if (ph->first_op < next)
            return cux_fail(plan, XPB_UNSUPPORTED,
                            "phase %u '%s' overlaps or precedes the previous phase (phases must "
                            "be consecutive runs of ops in program order)",
                            i, ph->name ? ph->name : "");
        next = ph->first_op + ph->n_ops;
    }
    return XPB_OK;
}

/* ---- ops ---- */

/* What cuDNN's convolutions cannot express although ops.md allows it. */
static xpb_status check_conv_limits(cux_plan *plan, uint32_t i, const xpb_op *op)
{
    char label[256];
    cux_op_label(plan->prog, i, label, sizeof label);
    const xpb_op_attrs *a = &op->attrs;
    int transposed = op->kind == XPB_OP_CONV_T2D || op->kind == XPB_OP_CONV_T2D_BWD_DATA ||
                     op->kind == XPB_OP_CONV_T2D_BWD_WEIGHTS;
    /* A transposed convolution runs as cuDNN's backward-data, whose output size must follow
     * from the input by the convolution formula: output_padding < stride, which PyTorch
     * relaxes to "< stride or < dilation". */
    if (transposed &&
        (a->output_padding[0] >= a->stride[0] || a->output_padding[1] >= a->stride[1]))
        return cux_fail(plan, XPB_UNSUPPORTED,
                        "%s: output_padding (%d, %d) not smaller than the stride (%d, %d): cuDNN's "
                        "backward-data cannot produce that output size",
                        label, a->output_padding[0], a->output_padding[1], a->stride[0],
                        a->stride[1]);
    return XPB_OK;
}

/* ALL_REDUCE: NCCL averages the bytes as they are stored (ncclFloat32, ncclAvg), so the tensor
 * must be fp32 and stored in fp32 (a gradient always is; an activation's gradient under a
 * 16-bit policy is not); every rank stores it in the same layout, since the layout follows from
 * the precision policy alone, which all ranks share. Over several ranks the build must have
 * NCCL. One rank (or none) needs nothing: the mean over one rank is the tensor itself. */
static xpb_status check_all_reduce(cux_plan *plan, const char *label, const xpb_op *op)
{
    const xpb_tensor_desc *t = xpb_program_tensor(plan->prog, op->inputs[0]);
    if (t->dtype != XPB_DTYPE_F32)
        return cux_fail(plan, XPB_UNSUPPORTED,
                        "%s: tensor '%s' is not fp32: the cuda backend averages fp32 tensors only "
                        "(NCCL's ncclFloat32 with ncclAvg)",
                        label, t->name ? t->name : "");
    if (plan->opt.ranks > 1 && !plan->opt.collectives)
        return cux_fail(plan, XPB_UNSUPPORTED,
                        "%s: this build of the cuda backend has no NCCL (nccl.h was not found when "
                        "it was built), so it cannot average gradients over %u ranks; install NCCL "
                        "(NVIDIA's libnccl2 and libnccl-dev, or a CUDA toolkit that ships nccl.h) "
                        "and build xpubench again (docs/backend-cuda.md)",
                        label, plan->opt.ranks);
    return XPB_OK;
}

/* The 16-bit policies store activation gradients in 16 bits (plan_tensor.c): an ALL_REDUCE of
 * one is refused here, once storage is decided. */
xpb_status cux_check_all_reduce_storage(cux_plan *plan)
{
    const xpb_program *p = plan->prog;
    for (uint32_t i = 0; i < p->n_ops; i++) {
        const xpb_op *op = xpb_program_op(p, i);
        if (op->kind != XPB_OP_ALL_REDUCE || plan->store[op->inputs[0]].type == CUX_F32)
            continue;
        char label[256];
        cux_op_label(p, i, label, sizeof label);
        const xpb_tensor_desc *t = xpb_program_tensor(p, op->inputs[0]);
        return cux_fail(plan, XPB_UNSUPPORTED,
                        "%s: tensor '%s' is stored in %s under this precision policy: the cuda "
                        "backend averages tensors stored in fp32 only (parameter gradients always "
                        "are)",
                        label, t->name ? t->name : "",
                        plan->store[op->inputs[0]].type == CUX_BF16 ? "bf16" : "fp16");
    }
    return XPB_OK;
}

/* The ops of op set 3 this backend implements (docs/backend-cuda.md, "Op set 3"): all of them.
 * An op set 3 op added later is refused by name until it is listed here. */
static int opset3_op(uint32_t kind)
{
    switch (kind) {
    case XPB_OP_MATMUL:
    case XPB_OP_MATMUL_BWD:
    case XPB_OP_BATCHED_MATMUL:
    case XPB_OP_BATCHED_MATMUL_BWD:
    case XPB_OP_PERMUTE:
    case XPB_OP_ADD_BROADCAST:
    case XPB_OP_MUL:
    case XPB_OP_SUM_TO:
    case XPB_OP_SCALE:
    case XPB_OP_SOFTMAX:
    case XPB_OP_SOFTMAX_BWD:
    case XPB_OP_LAYER_NORM:
    case XPB_OP_LAYER_NORM_BWD:
    case XPB_OP_GELU:
    case XPB_OP_GELU_BWD:
    case XPB_OP_EMBEDDING:
    case XPB_OP_EMBEDDING_BWD:
    case XPB_OP_LSTM:
    case XPB_OP_LSTM_BWD:
    case XPB_OP_ADAMW_UPDATE:
    case XPB_OP_CLIP_GRAD_NORM:
        return 1;
    default:
        return 0;
    }
}

/* The attribute bits of op set 3 whose meaning the kernels here compute: all of them. */
static int opset3_attr(int bit)
{
    switch (bit) {
    case XPB_ATTR_BIT_TRANSPOSE:
    case XPB_ATTR_BIT_PERM:
    case XPB_ATTR_BIT_CAUSAL:
    case XPB_ATTR_BIT_APPROXIMATE:
    case XPB_ATTR_BIT_INDEX_FLAGS:
    case XPB_ATTR_BIT_PADDING_IDX:
    case XPB_ATTR_BIT_IGNORE_INDEX:
    case XPB_ATTR_BIT_LABEL_SMOOTHING:
    case XPB_ATTR_BIT_MAX_NORM:
        return 1;
    default:
        return 0;
    }
}

/* What this backend adds to the SDK's rules for op `i` (already validated). */
static xpb_status check_op(cux_plan *plan, uint32_t i)
{
    const xpb_program *p = plan->prog;
    const xpb_op *op = xpb_program_op(p, i);
    char label[256];
    cux_op_label(p, i, label, sizeof label);
    if (xpb_op_opset(op->kind) > 2 && !opset3_op(op->kind))
        return cux_fail(plan, XPB_UNSUPPORTED,
                        "%s: an op of op set 3 that the cuda backend does not implement", label);
    /* The attributes op set 3 gave older ops (SOFTMAX_XENT's ignore_index and label smoothing)
     * change what they compute: each is refused unless the kernels here compute it */
    for (int b = 0; b < 64 && XPB_OP_HAS(p, attrs_set); b++)
        if (((op->attrs_set >> b) & 1u) && xpb_attr_opset(1ull << b) > 2 && !opset3_attr(b))
            return cux_fail(plan, XPB_UNSUPPORTED,
                            "%s: sets attribute bit %d of op set 3, which the cuda backend does "
                            "not implement",
                            label, b);
    switch (op->kind) {
    case XPB_OP_ALL_REDUCE:
        return check_all_reduce(plan, label, op);
    case XPB_OP_CONV_T2D:
    case XPB_OP_CONV_T2D_BWD_DATA:
    case XPB_OP_CONV_T2D_BWD_WEIGHTS:
        return check_conv_limits(plan, i, op);
    case XPB_OP_BATCHNORM_TRAIN: {
        /* ops.md: one value per channel is an error, as in PyTorch; found here, not at run time */
        const xpb_tensor_desc *x = xpb_program_tensor(p, op->inputs[0]);
        int64_t count = xpb_tensor_numel(x) / x->dims[1];
        if (count < 2)
            return cux_fail(plan, XPB_INVALID_ARGUMENT,
                            "%s: needs more than 1 value per channel (N*H*W is %lld), as PyTorch "
                            "does",
                            label, (long long)count);
        return XPB_OK;
    }
    default:
        return XPB_OK;
    }
}

xpb_status cux_check_program(cux_plan *plan)
{
    xpb_status st;
    if ((st = check_options(plan)) != XPB_OK || (st = check_structure(plan)) != XPB_OK)
        return st;
    for (uint32_t i = 0; i < plan->prog->n_ops; i++)
        if ((st = check_op(plan, i)) != XPB_OK)
            return st;
    return XPB_OK;
}
