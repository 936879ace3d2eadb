/* Storage decisions: the element type and layout of every tensor, and which parameters keep a
 * 16-bit shadow next to their fp32 master.
 *
 * Types. fp32 and tf32 store everything in fp32 (tf32 is a property of the convolutions and
 * matmuls, not of storage). bf16-mixed and fp16-mixed store activations, their gradients and
 * the network's float inputs in the policy's 16-bit type, which is what the tensor cores read;
 * parameters (the fp32 masters), optimizer state, running statistics, parameter gradients,
 * losses, outputs and workspaces stay fp32. Int32 tensors stay int32.
 *
 * Layouts. Under the tensor-core policies (tf32, bf16-mixed, fp16-mixed) every 4-D tensor is
 * NHWC ("channels last", dimension 1 innermost), the layout cuDNN's tensor-core kernels read
 * natively: activations, convolution weights and everything that shares their shape
 * (gradients, momentum buffers), so that an optimizer update is element by element across
 * master, gradient, state and shadow. Under fp32 (no tensor cores) 4-D tensors stay NCHW, the
 * layout of cuDNN's classic fp32 kernels, and the host boundary needs no transpose. Tensors of
 * other ranks are always row-major.
 *
 * Shadows. Under a mixed policy, cuDNN and cuBLASLt read parameters in the 16-bit type: a
 * parameter read by a convolution or a matmul keeps a shadow copy in that type, written when
 * the host writes the parameter and refreshed by the optimizer step in the same pass that
 * updates the master, so no step converts weights. */
#include <stdlib.h>

#include "plan/plan_error.h"
#include "plan/plan_tensor.h"

int cux_host_visible(const xpb_tensor_desc *t)
{
    return (t->flags & (XPB_TENSOR_PERSISTENT | XPB_TENSOR_HOST_WRITE | XPB_TENSOR_HOST_READ)) != 0;
}

xpb_status cux_buf_new(uint32_t *out, cux_plan *plan, uint64_t bytes, int kind, uint32_t tensor,
                       int pinned)
{
    if (plan->n_bufs == plan->cap_bufs) {
        uint32_t cap = plan->cap_bufs ? plan->cap_bufs * 2 : 64;
        cux_buf *b = realloc(plan->bufs, cap * sizeof *b);
        if (!b)
            return cux_fail(plan, XPB_OUT_OF_MEMORY, "compile: out of memory (buffers)");
        plan->bufs = b;
        plan->cap_bufs = cap;
    }
    cux_buf *b = &plan->bufs[plan->n_bufs];
    b->bytes = bytes ? bytes : 4;
    b->first = UINT32_MAX;
    b->last = 0;
    b->pinned = (uint8_t)(pinned != 0);
    b->kind = (uint8_t)kind;
    b->tensor = tensor;
    b->offset = 0;
    *out = plan->n_bufs++;
    return XPB_OK;
}

static int uses_16bit(const xpb_tensor_desc *t)
{
    switch (t->role) {
    case XPB_ROLE_ACTIVATION:
    case XPB_ROLE_ACTIVATION_GRAD:
    case XPB_ROLE_INPUT:
        return 1;
    default:
        return 0;
    }
}

xpb_status cux_decide_storage(cux_plan *plan)
{
    const xpb_program *p = plan->prog;
    switch (plan->opt.precision) {
    case XPB_PRECISION_BF16_MIXED:
        plan->act_type = CUX_BF16;
        break;
    case XPB_PRECISION_FP16_MIXED:
        plan->act_type = CUX_F16;
        break;
    default:
        plan->act_type = CUX_F32;
        break;
    }
    plan->layout4d = plan->opt.precision == XPB_PRECISION_FP32 ? CUX_PLAIN : CUX_NHWC;
    for (uint32_t i = 0; i < p->n_tensors; i++) {
        const xpb_tensor_desc *t = xpb_program_tensor(p, i);
        cux_store *s = &plan->store[i];
        s->buf = CUX_NONE;
        s->shadow = CUX_NONE;
        s->alias = CUX_NONE;
        if (t->dtype == XPB_DTYPE_I32)
            s->type = CUX_I32;
        else if (plan->act_type != CUX_F32 && uses_16bit(t))
            s->type = plan->act_type;
        else
            s->type = CUX_F32;
        s->layout = t->ndim == 4 ? plan->layout4d : CUX_PLAIN;
    }
    /* The ops of op set 3 read their operands' last axes (matrices, rows of a softmax or a layer
     * norm, permuted heads): their 4-D operands stay row-major under every policy, and a
     * convolution that meets one reads or writes it through a converted copy (plan_step.c). */
    for (uint32_t i = 0; i < p->n_ops; i++) {
        const xpb_op *op = xpb_program_op(p, i);
        if (xpb_op_opset(op->kind) < 3)
            continue;
        for (uint32_t k = 0; k < op->n_inputs; k++) {
            uint32_t tid = xpb_op_input(p, op, k);
            if (tid != XPB_NO_TENSOR)
                plan->store[tid].layout = CUX_PLAIN;
        }
        for (uint32_t k = 0; k < op->n_outputs; k++) {
            uint32_t tid = xpb_op_output(p, op, k);
            if (tid != XPB_NO_TENSOR)
                plan->store[tid].layout = CUX_PLAIN;
        }
    }
    return XPB_OK;
}

/* True when op `i`'s step reads input `k` through cuDNN or cuBLASLt (the weight or the bias of
 * a convolution or a linear layer, not folded into a batch norm). */
static int engine_reads(const cux_plan *plan, uint32_t i, uint32_t k)
{
    const xpb_op *op = xpb_program_op(plan->prog, i);
    if (plan->fuse[i].into != CUX_NONE || k >= op->n_inputs)
        return 0;
    switch (op->kind) {
    case XPB_OP_CONV2D:
        return plan->fuse[i].bn_op == CUX_NONE && (k == 1 || k == 2);
    case XPB_OP_CONV_T2D:
        return k == 1 || k == 2;
    case XPB_OP_LINEAR: {
        if (k == 1)
            return 1;
        /* cuBLASLt adds the bias in the output's type: fp32 outputs read the fp32 master */
        uint32_t y = plan->fuse[i].out_tensor;
        return k == 2 && plan->store[y].type != CUX_F32;
    }
    case XPB_OP_CONV2D_BWD_DATA:
    case XPB_OP_CONV_T2D_BWD_DATA:
    case XPB_OP_LINEAR_BWD_DATA:
        return k == 1;
    case XPB_OP_MATMUL: { /* a, b, and the bias when the output is 16-bit (as LINEAR) */
        if (k < 2)
            return 1;
        return k == 2 && plan->store[op->outputs[0]].type != CUX_F32;
    }
    case XPB_OP_BATCHED_MATMUL:
        return k < 2;
    case XPB_OP_MATMUL_BWD:
    case XPB_OP_BATCHED_MATMUL_BWD:
        return k == 1 || k == 2;
    case XPB_OP_LSTM: /* w_ih, w_hh: the forward's products run in the policy's type */
        return k == 1 || k == 2;
    default:
        return 0;
    }
}

xpb_status cux_decide_shadows(cux_plan *plan)
{
    const xpb_program *p = plan->prog;
    if (plan->act_type == CUX_F32)
        return XPB_OK;
    for (uint32_t i = 0; i < p->n_ops; i++) {
        const xpb_op *op = xpb_program_op(p, i);
        for (uint32_t k = 0; k < op->n_inputs && k < XPB_MAX_OP_INPUTS; k++) {
            uint32_t tid = op->inputs[k];
            if (tid == XPB_NO_TENSOR)
                continue;
            const xpb_tensor_desc *t = xpb_program_tensor(p, tid);
            cux_store *s = &plan->store[tid];
            if (s->shadow != CUX_NONE || t->role != XPB_ROLE_PARAM || s->type != CUX_F32 ||
                !engine_reads(plan, i, k))
                continue;
            uint64_t bytes = (uint64_t)xpb_tensor_numel(t) * cux_type_size(plan->act_type);
            xpb_status st = cux_buf_new(&s->shadow, plan, bytes, CUX_BUF_SHADOW, tid, 1);
            if (st != XPB_OK)
                return st;
            s->shadow_type = plan->act_type;
        }
    }
    return XPB_OK;
}
