/* compile(): the dispatcher. It reads the options, refuses by name what the backend does not
 * implement, validates the program, plans fusion (fusion.c), hands every op to the file of its
 * family (prim_*.c on oneDNN primitives, kern_*.c own kernels), places the buffers (memplan.c)
 * and makes every step executable (step.c). Nothing is created or allocated after it returns,
 * except the host-transfer reorders of tensors the host never declared it would touch (created
 * on first use; those of streamed inputs are made here). destroy() undoes it all.
 *
 * The dispatcher depends on the op families and the helpers below them, never the other way
 * round (errors.c, md.c, pd.c, step.c, operand.c and memplan.c know nothing of this file). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa.h"
#include "odn.h"

/* ---- op dispatch ---- */

/* Compiles program op exe->cur_op into steps. */
typedef xpb_status (*op_compiler)(xpb_executable *exe);

/* The file that compiles ops of `kind`, or NULL for a kind cpu_onednn does not implement (one
 * of a later op set: the headers' XPB_OP_MAP is what this build knows). */
static op_compiler compiler_of(uint32_t kind)
{
    switch (kind) {
    case XPB_OP_CONV2D:
    case XPB_OP_CONV2D_BWD_DATA:
    case XPB_OP_CONV2D_BWD_WEIGHTS:
    case XPB_OP_CONV_T2D:
    case XPB_OP_CONV_T2D_BWD_DATA:
    case XPB_OP_CONV_T2D_BWD_WEIGHTS:
        return odn_compile_conv;
    case XPB_OP_LINEAR:
    case XPB_OP_LINEAR_BWD_DATA:
    case XPB_OP_LINEAR_BWD_WEIGHTS:
        return odn_compile_linear;
    case XPB_OP_BATCHNORM_TRAIN:
    case XPB_OP_BATCHNORM_INFER:
    case XPB_OP_BATCHNORM_BWD:
        return odn_compile_bnorm;
    case XPB_OP_INSTANCENORM:
    case XPB_OP_INSTANCENORM_BWD:
        return odn_compile_inorm;
    case XPB_OP_RELU:
    case XPB_OP_RELU_BWD:
    case XPB_OP_LEAKY_RELU:
    case XPB_OP_LEAKY_RELU_BWD:
    case XPB_OP_TANH:
    case XPB_OP_TANH_BWD:
    case XPB_OP_GELU:
    case XPB_OP_GELU_BWD:
    case XPB_OP_SCALE:
        return odn_compile_eltwise;
    case XPB_OP_MAXPOOL:
    case XPB_OP_MAXPOOL_BWD:
    case XPB_OP_AVGPOOL:
    case XPB_OP_AVGPOOL_BWD:
    case XPB_OP_GLOBAL_AVGPOOL:
    case XPB_OP_GLOBAL_AVGPOOL_BWD:
        return odn_compile_pool;
    case XPB_OP_ADD:
    case XPB_OP_RESHAPE:
    case XPB_OP_FILL:
    case XPB_OP_COPY:
        return odn_compile_elem;
    case XPB_OP_REFLECTION_PAD:
    case XPB_OP_REFLECTION_PAD_BWD:
        return odn_compile_pad;
    case XPB_OP_SOFTMAX_XENT:
    case XPB_OP_SOFTMAX_XENT_BWD:
    case XPB_OP_MSE_LOSS:
    case XPB_OP_MSE_LOSS_BWD:
    case XPB_OP_L1_LOSS:
    case XPB_OP_L1_LOSS_BWD:
        return odn_compile_loss;
    case XPB_OP_DROPOUT:
    case XPB_OP_DROPOUT_BWD:
        return odn_compile_dropout;
    case XPB_OP_SGD_UPDATE:
    case XPB_OP_ADAM_UPDATE:
    case XPB_OP_ADAMW_UPDATE:
        return odn_compile_optim;
    case XPB_OP_ALL_REDUCE:
        return odn_compile_comm;
    case XPB_OP_MATMUL:
    case XPB_OP_MATMUL_BWD:
    case XPB_OP_BATCHED_MATMUL:
    case XPB_OP_BATCHED_MATMUL_BWD:
        return odn_compile_matmul;
    case XPB_OP_PERMUTE:
        return odn_compile_permute;
    case XPB_OP_ADD_BROADCAST:
    case XPB_OP_MUL:
    case XPB_OP_SUM_TO:
        return odn_compile_bcast;
    case XPB_OP_SOFTMAX:
    case XPB_OP_SOFTMAX_BWD:
        return odn_compile_softmax;
    case XPB_OP_LAYER_NORM:
    case XPB_OP_LAYER_NORM_BWD:
        return odn_compile_lnorm;
    case XPB_OP_EMBEDDING:
    case XPB_OP_EMBEDDING_BWD:
        return odn_compile_embed;
    case XPB_OP_LSTM:
    case XPB_OP_LSTM_BWD:
        return odn_compile_lstm;
    case XPB_OP_CLIP_GRAD_NORM:
        return odn_compile_clip;
    default:
        return NULL;
    }
}

static xpb_status compile_op(xpb_executable *exe, uint32_t i)
{
    exe->cur_op = i;
    if (exe->fuse[i].into != ODN_NONE)
        return XPB_OK; /* another op's step does this one's work */
    op_compiler fn = compiler_of(xpb_program_op(exe->prog, i)->kind);
    if (!fn) { /* refused by check_ops already; kept so that no path calls NULL */
        char label[256];
        odn_op_label(exe, i, label, sizeof label);
        return odn_fail(exe, XPB_UNSUPPORTED, "%s: not implemented by cpu_onednn", label);
    }
    return fn(exe);
}

/* ---- validation ---- */

/* Refuses, naming the op and its layer, every op whose kind cpu_onednn does not implement and
 * every op that sets an attribute these headers do not know (it changes what the op computes).
 * Runs before any other check of the ops: a newer op may use its operands in ways the checks
 * below do not expect. */
static xpb_status check_ops(xpb_executable *exe)
{
    const xpb_program *p = exe->prog;
    for (uint32_t i = 0; i < p->n_ops; i++) {
        const xpb_op *op = xpb_program_op(p, i);
        char label[256];
        odn_op_label(exe, i, label, sizeof label);
        if (!compiler_of(op->kind))
            return odn_fail(exe, XPB_UNSUPPORTED,
                            "%s: op kind %u is not implemented by cpu_onednn (it implements the "
                            "ops of op set %d)",
                            label, op->kind, XPB_OPSET_VERSION);
        uint64_t unknown = xpb_op_unknown_attrs(p, op);
        if (unknown) {
            char bits[256];
            size_t n = 0;
            bits[0] = '\0';
            for (int b = 0; b < 64 && n < sizeof bits; b++)
                if (unknown & (1ull << b))
                    n += (size_t)snprintf(bits + n, sizeof bits - n, "%s%d", n ? ", " : "", b);
            return odn_fail(exe, XPB_UNSUPPORTED,
                            "%s: sets attribute bit%s %s, unknown to cpu_onednn (it knows the "
                            "attributes of op set %d); such an attribute changes what the op "
                            "computes",
                            label, (unknown & (unknown - 1)) ? "s" : "", bits, XPB_OPSET_VERSION);
        }
    }
    return XPB_OK;
}

/* Whether op `kind` may leave its first output "not wanted" (XPB_NO_TENSOR): the backward ops
 * whose first gradient is optional. */
static int first_output_optional(uint32_t kind)
{
    switch (kind) {
    case XPB_OP_BATCHNORM_BWD:
    case XPB_OP_MATMUL_BWD:
    case XPB_OP_BATCHED_MATMUL_BWD:
    case XPB_OP_LAYER_NORM_BWD:
    case XPB_OP_LSTM_BWD:
        return 1;
    default:
        return 0;
    }
}

/* Structure checks, after check_ops, then the op set's shape rules. Sizes are compared with
 * ABI 1.0's (a host of ABI 1.0 writes shorter ops; members appended since are read through
 * XPB_OP_HAS and friends). The checks here that the shape rules repeat come first because the
 * backend indexes its tables with tensor ids and needs phases in program order. */
static xpb_status check_program(xpb_executable *exe)
{
    const xpb_program *p = exe->prog;
    const size_t op_1_0 = offsetof(xpb_op, layer) + sizeof(const char *);
    if (!XPB_HAS_MEMBER(p, xpb_program, phases))
        return odn_fail(exe, XPB_INVALID_ARGUMENT,
                        "program struct_size %zu is smaller than ABI 1.0's %zu", p->struct_size,
                        offsetof(xpb_program, phases) + sizeof p->phases);
    if (p->tensor_stride < sizeof(xpb_tensor_desc) || p->op_stride < op_1_0)
        return odn_fail(exe, XPB_INVALID_ARGUMENT,
                        "program tensor_stride %zu / op_stride %zu smaller than ABI 1.0's %zu / "
                        "%zu",
                        p->tensor_stride, p->op_stride, sizeof(xpb_tensor_desc), op_1_0);
    if ((p->n_tensors && !p->tensors) || (p->n_ops && !p->ops) || (p->n_phases && !p->phases))
        return odn_fail(exe, XPB_INVALID_ARGUMENT, "program has a NULL tensor, op or phase array");
    xpb_status st = check_ops(exe);
    if (st != XPB_OK)
        return st;
    for (uint32_t i = 0; i < p->n_tensors; i++) {
        const xpb_tensor_desc *t = xpb_program_tensor(p, i);
        const char *name = t->name ? t->name : "(unnamed)";
        if (t->dtype != XPB_DTYPE_F32 && t->dtype != XPB_DTYPE_I32)
            return odn_fail(exe, XPB_UNSUPPORTED, "tensor %u '%s': unknown dtype %u", i, name,
                            t->dtype);
        if (t->ndim < 1 || t->ndim > XPB_MAX_DIMS)
            return odn_fail(exe, XPB_INVALID_ARGUMENT, "tensor %u '%s': ndim %u outside 1..%d", i,
                            name, t->ndim, XPB_MAX_DIMS);
        int64_t numel = 1;
        for (uint32_t d = 0; d < t->ndim; d++) {
            if (t->dims[d] < 1 || t->dims[d] > ((int64_t)1 << 40) / numel)
                return odn_fail(exe, XPB_INVALID_ARGUMENT,
                                "tensor %u '%s': dim %u is %lld (must be >= 1, below 2^40 "
                                "elements in all)",
                                i, name, d, (long long)t->dims[d]);
            numel *= t->dims[d];
        }
    }
    uint32_t next = 0;
    for (uint32_t i = 0; i < p->n_phases; i++) {
        const xpb_phase *ph = xpb_program_phase(p, i);
        if (ph->first_op > p->n_ops || ph->n_ops > p->n_ops - ph->first_op)
            return odn_fail(exe, XPB_INVALID_ARGUMENT,
                            "phase %u '%s' covers ops beyond the program's %u ops", i,
                            ph->name ? ph->name : "", p->n_ops);
        if (ph->first_op < next)
            return odn_fail(exe, XPB_UNSUPPORTED,
                            "phase %u '%s' overlaps or precedes the previous phase (phases must "
                            "be consecutive runs of ops in program order)",
                            i, ph->name ? ph->name : "");
        next = ph->first_op + ph->n_ops;
    }
    for (uint32_t i = 0; i < p->n_ops; i++) {
        const xpb_op *op = xpb_program_op(p, i);
        char label[256];
        odn_op_label(exe, i, label, sizeof label);
        /* beyond the inline arrays, the operands are in inputs_all / outputs_all (ABI 1.3) */
        int all_in = XPB_OP_HAS(p, inputs_all) && op->inputs_all;
        int all_out = XPB_OP_HAS(p, outputs_all) && op->outputs_all;
        if ((op->n_inputs > XPB_MAX_OP_INPUTS && !all_in) ||
            (op->n_outputs > XPB_MAX_OP_OUTPUTS && !all_out))
            return odn_fail(exe, XPB_INVALID_ARGUMENT,
                            "%s: %u inputs / %u outputs, more than xpb_op's inline arrays hold, "
                            "and no inputs_all / outputs_all",
                            label, op->n_inputs, op->n_outputs);
        if (op->n_outputs > 0 && xpb_op_output(p, op, 0) == XPB_NO_TENSOR &&
            !first_output_optional(op->kind))
            return odn_fail(exe, XPB_INVALID_ARGUMENT, "%s: its first output is XPB_NO_TENSOR",
                            label);
        /* XPB_NO_TENSOR: an optional operand that is absent, or an output not wanted */
        for (uint32_t k = 0; k < op->n_inputs; k++) {
            uint32_t t = xpb_op_input(p, op, k);
            if (t >= p->n_tensors && t != XPB_NO_TENSOR)
                return odn_fail(exe, XPB_INVALID_ARGUMENT, "%s: input %u is tensor %u of %u", label,
                                k, t, p->n_tensors);
        }
        for (uint32_t k = 0; k < op->n_outputs; k++) {
            uint32_t t = xpb_op_output(p, op, k);
            if (t >= p->n_tensors && t != XPB_NO_TENSOR)
                return odn_fail(exe, XPB_INVALID_ARGUMENT, "%s: output %u is tensor %u of %u",
                                label, k, t, p->n_tensors);
        }
    }
    /* The op set's shape rules (the SDK's shapes.h, docs/ops.md): operand counts, dtypes,
     * attribute ranges and every tensor's shape, so that the op files can trust them. */
    char msg[ODN_ERR_SIZE - 16];
    if ((st = xpb_program_validate(p, msg, sizeof msg)) != XPB_OK)
        return odn_fail(exe, st, "%s", msg);
    return XPB_OK;
}

/* ---- destroy ---- */

void odn_destroy(xpb_executable *exe)
{
    if (!exe)
        return;
    for (uint32_t i = 0; i < exe->n_steps; i++)
        odn_step_free(&exe->steps[i]);
    for (uint32_t i = 0; i < exe->n_post; i++)
        odn_step_free(&exe->post[i]);
    for (uint32_t i = 0; i < exe->n_prep; i++)
        odn_step_free(&exe->prep[i]);
    if (exe->t)
        odn_transfer_free(exe);
    free(exe->steps);
    free(exe->post);
    free(exe->prep);
    free(exe->t);
    free(exe->n_consumers);
    free(exe->fuse);
    free(exe->op_phase);
    free(exe->copies);
    free(exe->bufs);
    free(exe->phase_begin);
    free(exe->phase_end);
    odn_arena_free(exe);
    free(exe->scratch);
    free(exe->op_seconds);
    free(exe->op_calls);
    odn_comm_free(exe);
    free(exe);
}

/* ---- compile ---- */

static xpb_status read_options(xpb_executable *exe, const xpb_compile_options *o)
{
    exe->precision = XPB_MEMBER_OR(o, xpb_compile_options, precision, XPB_PRECISION_FP32);
    exe->fusion = XPB_MEMBER_OR(o, xpb_compile_options, fusion, 0u);
    exe->threads = XPB_MEMBER_OR(o, xpb_compile_options, threads, 0u);
    exe->profiling = XPB_MEMBER_OR(o, xpb_compile_options, profiling, 0u);
    exe->keep_all = XPB_MEMBER_OR(o, xpb_compile_options, keep_all, 0u);
    /* ABI 1.1: absent from a 1.0 host's options, which only ever wrote inputs once */
    exe->transfer =
        XPB_MEMBER_OR(o, xpb_compile_options, transfer, (uint32_t)XPB_TRANSFER_RESIDENT);
    if (exe->threads == 0)
        exe->threads = exe->be->default_threads;
    if (exe->transfer != XPB_TRANSFER_RESIDENT && exe->transfer != XPB_TRANSFER_STREAMED)
        return odn_fail(exe, XPB_UNSUPPORTED,
                        "unknown transfer mode %u; supported: resident (0), streamed (1)",
                        exe->transfer);
    switch (exe->precision) {
    case XPB_PRECISION_FP32:
        return XPB_OK;
    case XPB_PRECISION_BF16_MIXED:
        /* offered natively or emulated (device.c); the host decides whether to run emulated */
        if (!(odn_isa_precisions(odn_cpu_features()) & XPB_PRECISION_BIT(exe->precision)))
            return odn_fail(exe, XPB_UNSUPPORTED,
                            "precision bf16-mixed needs AVX-512 (oneDNN dispatches to %s here)",
                            dnnl_cpu_isa2str(dnnl_get_effective_cpu_isa()));
        exe->bf16 = 1;
        return XPB_OK;
    case XPB_PRECISION_TF32:
        return odn_fail(exe, XPB_UNSUPPORTED,
                        "precision tf32 is not supported by cpu_onednn (CPUs have no TF32 "
                        "units); supported: fp32, bf16-mixed");
    case XPB_PRECISION_FP16_MIXED:
        return odn_fail(exe, XPB_UNSUPPORTED,
                        "precision fp16-mixed is not supported by cpu_onednn (oneDNN 2.6 has no "
                        "fp16 training on CPUs); supported: fp32, bf16-mixed");
    default:
        return odn_fail(exe, XPB_UNSUPPORTED,
                        "unknown precision policy %u; supported: fp32 (1), bf16-mixed (3)",
                        exe->precision);
    }
}

static xpb_status allocate_tables(xpb_executable *exe)
{
    const xpb_program *p = exe->prog;
    exe->t = calloc(p->n_tensors + 1u, sizeof *exe->t);
    exe->n_consumers = calloc(p->n_tensors + 1u, sizeof *exe->n_consumers);
    exe->fuse = calloc(p->n_ops + 1u, sizeof *exe->fuse);
    exe->phase_begin = calloc(p->n_phases + 1u, sizeof *exe->phase_begin);
    exe->phase_end = calloc(p->n_phases + 1u, sizeof *exe->phase_end);
    exe->op_seconds = calloc(p->n_ops + 1u, sizeof *exe->op_seconds);
    exe->op_calls = calloc(p->n_ops + 1u, sizeof *exe->op_calls);
    exe->op_phase = calloc(p->n_ops + 1u, sizeof *exe->op_phase);
    if (!exe->t || !exe->n_consumers || !exe->fuse || !exe->phase_begin || !exe->phase_end ||
        !exe->op_seconds || !exe->op_calls || !exe->op_phase)
        return odn_fail(exe, XPB_OUT_OF_MEMORY, "compile: out of memory");
    for (uint32_t i = 0; i < p->n_ops; i++)
        exe->op_phase[i] = ODN_NONE;
    for (uint32_t k = 0; k < p->n_phases; k++) {
        const xpb_phase *ph = xpb_program_phase(p, k);
        for (uint32_t i = 0; i < ph->n_ops; i++)
            exe->op_phase[ph->first_op + i] = k;
    }
    for (uint32_t i = 0; i < p->n_tensors; i++) {
        exe->t[i].shadow_buf = ODN_NONE;
        exe->t[i].producer_step = ODN_NONE;
        exe->t[i].buf = ODN_NONE;
    }
    for (uint32_t i = 0; i < p->n_ops; i++) {
        const xpb_op *op = xpb_program_op(p, i);
        for (uint32_t k = 0; k < op->n_inputs; k++) {
            uint32_t t = xpb_op_input(p, op, k);
            if (t != XPB_NO_TENSOR)
                exe->n_consumers[t]++;
        }
        odn_fuse *f = &exe->fuse[i];
        f->into = f->eltwise_op = f->sum_op = f->sum_tensor = f->bn_op = ODN_NONE;
        f->relu_bwd_op = f->bn_fwd_op = f->ws_buf = ODN_NONE;
        f->out_tensor = op->n_outputs ? op->outputs[0] : ODN_NONE;
    }
    return XPB_OK;
}

static xpb_status compile_all(xpb_executable *exe)
{
    const xpb_program *p = exe->prog;
    xpb_status st;
    uint32_t *op_step = calloc(p->n_ops + 1u, sizeof *op_step);
    if (!op_step)
        return odn_fail(exe, XPB_OUT_OF_MEMORY, "compile: out of memory");
    for (uint32_t i = 0; i < p->n_ops; i++) {
        op_step[i] = exe->n_steps;
        if ((st = compile_op(exe, i)) != XPB_OK)
            goto free_op_step;
    }
    op_step[p->n_ops] = exe->n_steps;
    for (uint32_t i = 0; i < p->n_phases; i++) {
        const xpb_phase *ph = xpb_program_phase(p, i);
        exe->phase_begin[i] = op_step[ph->first_op];
        exe->phase_end[i] = op_step[ph->first_op + ph->n_ops];
    }
    /* Tensors no op touches still get storage, so that the host can write and read them. */
    exe->cur_op = ODN_NONE;
    for (uint32_t i = 0; i < p->n_tensors; i++) {
        if (exe->t[i].decided)
            continue;
        const xpb_tensor_desc *d = xpb_program_tensor(p, i);
        dnnl_memory_desc_t md;
        odn_md_plain(&md, d, d->dtype == XPB_DTYPE_I32 ? dnnl_s32 : dnnl_f32);
        if ((st = odn_decide(exe, i, &md)) != XPB_OK)
            goto free_op_step;
        exe->bufs[exe->t[i].buf].pinned = 1;
    }
    st = XPB_OK;
free_op_step:
    free(op_step);
    return st;
}

xpb_status odn_compile_program(xpb_executable **out, xpb_backend *be, const xpb_program *prog,
                               const xpb_compile_options *opts)
{
    *out = NULL;
    xpb_executable *exe = calloc(1, sizeof *exe);
    if (!exe)
        return odn_set_error(be->err, XPB_OUT_OF_MEMORY, "compile: out of memory");
    exe->be = be;
    exe->prog = prog;
    exe->cur_op = ODN_NONE;
    xpb_status st;
    if ((st = read_options(exe, opts)) != XPB_OK || (st = odn_comm_setup(exe, opts)) != XPB_OK ||
        (st = check_program(exe)) != XPB_OK || (st = allocate_tables(exe)) != XPB_OK)
        goto destroy_exe;
    odn_set_threads(exe->threads); /* primitives pick their blocking for this thread count */
    if ((st = odn_plan_fusion(exe)) != XPB_OK || (st = compile_all(exe)) != XPB_OK ||
        (st = odn_plan_memory(exe)) != XPB_OK ||
        (st = odn_finalize_steps(exe, exe->steps, exe->n_steps)) != XPB_OK ||
        (st = odn_finalize_steps(exe, exe->prep, exe->n_prep)) != XPB_OK)
        goto destroy_exe;
    /* Streamed inputs are written inside timed steps: their reorders are made now. */
    if (exe->transfer == XPB_TRANSFER_STREAMED && (st = odn_transfer_prepare_inputs(exe)) != XPB_OK)
        goto destroy_exe;
    exe->prep_stale = exe->n_prep > 0;
    if (getenv("XPB_ONEDNN_DUMP"))
        odn_dump_steps(exe, stderr);
    *out = exe;
    return XPB_OK;

destroy_exe:
    snprintf(be->err, ODN_ERR_SIZE, "%s", exe->err);
    odn_destroy(exe);
    return st;
}
