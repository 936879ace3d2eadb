/* The cuda backend's planner (plugins/backend_cuda/plan*.c), which runs without a GPU:
 * - every model's training and inference program (the host's model program API, as
 *   tests/test_models.c builds them), under every precision policy, fused, unfused and with
 *   keep_all: every op is done by a step or fused into one; engines get operands in the type
 *   and layout they need; no temporary is read before it is written; no two buffers that are
 *   live at the same step share bytes; the arena is the end of its highest buffer and within a
 *   bound of the live-bytes lower bound;
 * - the fusion decisions on VGG16, ResNet18 and CycleGAN (convolution epilogues, batch-norm
 *   folding, residual sums, norm + activation forward and backward), layouts (NHWC under the
 *   tensor-core policies), fp32 masters and 16-bit shadows, RESHAPE sharing bytes, the fp16
 *   loss-scaling steps, and the refusals (bf16 / tf32 before sm_80, cuDNN's limits, unknown ops
 *   and attributes);
 * - the peak FLOP/s table, the no-device sentences and the tuning cache. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "loader.h"
#include "model_program.h"
#include "peak.h"
#include "plan.h"
#include "reason.h"
#include "tune_cache.h"

static xpb_registry *registry;

static int setup(void **state)
{
    (void)state;
    const char *dirs[1] = {XPB_TEST_PLUGIN_DIR};
    xpb_err err = {{0}};
    if (xpb_registry_load(&registry, dirs, 1, &err) != XPB_OK)
        return -1;
    static const char *const models[4] = {"conv6", "vgg16", "resnet18", "cyclegan"};
    for (int i = 0; i < 4; i++)
        if (!xpb_registry_model(registry, models[i])) {
            fprintf(stderr, "model plugin '%s' not found in %s\n", models[i], XPB_TEST_PLUGIN_DIR);
            return -1;
        }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    xpb_registry_free(registry);
    return 0;
}

/* ---- programs and plans ---- */

static xpb_model_program *create(const char *model, const char *variant, uint32_t batch,
                                 uint32_t mode)
{
    xpb_run_config c;
    memset(&c, 0, sizeof c);
    c.model = (char *)model;
    c.variant = (char *)variant;
    c.batch = batch;
    c.mode = mode;
    c.precision = XPB_PRECISION_FP32;
    c.seed = 42;
    c.lr = c.momentum = c.weight_decay = NAN;
    c.backend = "cuda";
    xpb_model_program *mp = NULL;
    xpb_err err = {{0}};
    if (xpb_model_program_create(&mp, xpb_registry_model(registry, model), &c, &err) != XPB_OK)
        fail_msg("%s/%s: %s", model, variant, err.msg);
    return mp;
}

static const cux_target SM75 = {7, 5}, SM80 = {8, 0};

static const cux_target *target_for(uint32_t precision)
{
    return precision == XPB_PRECISION_BF16_MIXED || precision == XPB_PRECISION_TF32 ? &SM80 : &SM75;
}

static cux_plan *make_plan(const xpb_program *p, uint32_t precision, uint32_t fusion,
                           uint32_t keep_all)
{
    cux_options o = {precision, fusion, 0, keep_all, XPB_TRANSFER_RESIDENT};
    cux_plan *plan = NULL;
    char err[CUX_ERR_SIZE] = "";
    xpb_status st = cux_plan_build(&plan, p, &o, target_for(precision), err, sizeof err);
    if (st != XPB_OK)
        fail_msg("plan (precision %u, fusion %u, keep_all %u): %s", precision, fusion, keep_all,
                 err);
    return plan;
}

static const xpb_op *OP(const cux_plan *plan, uint32_t i)
{
    return xpb_program_op(plan->prog, i);
}

static int count_steps(const cux_plan *plan, int engine, int kernel)
{
    int n = 0;
    for (uint32_t g = 0; g < plan->n_steps; g++)
        n += plan->steps[g].engine == engine &&
             (engine != CUX_ENG_KERNEL || plan->steps[g].kernel == kernel);
    return n;
}

/* Is buffer b written by step s (an output, or the shadow an update refreshes)? */
static int writes(const cux_step *s, uint32_t b)
{
    for (int k = 0; k < CUX_MAX_OUT; k++)
        if (s->out[k].buf == b)
            return 1;
    return s->extra.buf == b;
}

static int has_step_for(const cux_plan *plan, uint32_t op)
{
    for (uint32_t g = 0; g < plan->n_steps; g++)
        if (plan->steps[g].op == op)
            return 1;
    return 0;
}

/* ---- the invariants every plan keeps ---- */

static void check_plan(const cux_plan *plan, const char *what)
{
    const xpb_program *p = plan->prog;
    /* every op of a phase is done: a step, a fused chain's head, or a shared RESHAPE */
    for (uint32_t i = 0; i < p->n_ops; i++) {
        if (plan->op_phase[i] == CUX_NONE)
            continue;
        const xpb_op *op = OP(plan, i);
        uint32_t into = plan->fuse[i].into;
        if (into != CUX_NONE) {
            if (!plan->opt.fusion || plan->opt.keep_all)
                fail_msg("%s: op %u fused without fusion", what, i);
            if (plan->fuse[into].into != CUX_NONE || !has_step_for(plan, into))
                fail_msg("%s: op %u fused into op %u, which has no step", what, i, into);
            continue;
        }
        if (op->kind == XPB_OP_RESHAPE && plan->store[op->outputs[0]].alias == op->inputs[0])
            continue;
        if (!has_step_for(plan, i))
            fail_msg("%s: op %u (%s) has no step", what, i, xpb_op_name(op->kind));
    }
    /* phases: PHASE_BEGIN .. PHASE_END, every step tagged with its phase */
    for (uint32_t k = 0; k < p->n_phases; k++) {
        uint32_t b = plan->phase_begin[k], e = plan->phase_end[k];
        assert_true(b < e);
        assert_int_equal(plan->steps[b].kernel, CUX_K_PHASE_BEGIN);
        assert_int_equal(plan->steps[e - 1].kernel, CUX_K_PHASE_END);
        for (uint32_t g = b; g < e; g++)
            if (plan->steps[g].phase != k)
                fail_msg("%s: step %u of phase %u says phase %u", what, g, k, plan->steps[g].phase);
    }
    /* engines get what they read in their type and layout */
    for (uint32_t g = 0; g < plan->n_steps; g++) {
        const cux_step *s = &plan->steps[g];
        if (s->engine == CUX_ENG_CONV) {
            const cux_view *v[3] = {&s->in[0], &s->in[1], &s->out[0]};
            for (int k = 0; k < 3; k++) {
                if (v[k]->type != plan->act_type)
                    fail_msg("%s: conv step %u operand %d is type %d, not %d", what, g, k,
                             v[k]->type, plan->act_type);
                if (v[k]->ndim != 4 ||
                    (v[k]->layout != plan->layout4d &&
                     !cux_layouts_agree(v[k]->dims[1], v[k]->dims[2], v[k]->dims[3])))
                    fail_msg("%s: conv step %u operand %d is layout %d", what, g, k, v[k]->layout);
            }
            if (s->bias.buf != CUX_NONE)
                assert_int_equal(s->bias.type, plan->act_type);
        } else if (s->engine == CUX_ENG_MATMUL) {
            assert_int_equal(s->in[0].type, plan->act_type);
            assert_int_equal(s->in[1].type, plan->act_type);
            assert_true(s->out[0].type == CUX_F32 || s->out[0].type == plan->act_type);
            if (s->bias.buf != CUX_NONE)
                assert_int_equal(s->bias.type, s->out[0].type);
        }
    }
    /* memory: a buffer that does not live throughout is written by the first step using it;
     * live buffers never share bytes; the arena ends at the highest buffer */
    uint64_t end = 0;
    for (uint32_t b = 0; b < plan->n_bufs; b++) {
        const cux_buf *x = &plan->bufs[b];
        if (x->first > x->last)
            continue;
        uint64_t xe = x->offset + (x->bytes + CUX_ALIGN - 1) / CUX_ALIGN * CUX_ALIGN;
        assert_int_equal(x->offset % CUX_ALIGN, 0);
        if (xe > end)
            end = xe;
        if (plan->opt.keep_all && x->kind == CUX_BUF_TENSOR && !x->pinned)
            fail_msg("%s: tensor %u's buffer is not pinned under keep_all", what, x->tensor);
        if (!x->pinned && !writes(&plan->steps[x->first], b))
            fail_msg("%s: buffer %u (tensor %u) is read by step %u before anything writes it", what,
                     b, x->tensor, x->first);
        for (uint32_t c = b + 1; c < plan->n_bufs; c++) {
            const cux_buf *y = &plan->bufs[c];
            if (y->first > y->last || y->first > x->last || x->first > y->last)
                continue;
            uint64_t ye = y->offset + (y->bytes + CUX_ALIGN - 1) / CUX_ALIGN * CUX_ALIGN;
            if (x->offset < ye && y->offset < xe)
                fail_msg("%s: buffers %u [%llu, %llu) and %u [%llu, %llu) are live together at "
                         "steps %u..%u and overlap",
                         what, b, (unsigned long long)x->offset, (unsigned long long)xe, c,
                         (unsigned long long)y->offset, (unsigned long long)ye,
                         x->first > y->first ? x->first : y->first,
                         x->last < y->last ? x->last : y->last);
        }
    }
    assert_int_equal(plan->arena_bytes, end);
    assert_true(plan->arena_bytes >= plan->peak_bytes);
    /* every host-visible tensor (every tensor under keep_all) has storage */
    for (uint32_t t = 0; t < p->n_tensors; t++)
        if ((plan->opt.keep_all || cux_host_visible(xpb_program_tensor(p, t))) &&
            plan->store[t].buf == CUX_NONE)
            fail_msg("%s: host-visible tensor %u '%s' has no storage", what, t,
                     xpb_program_tensor(p, t)->name);
    /* mixed policies: fp32 masters, shadows read by the engines and refreshed by the updates */
    for (uint32_t t = 0; t < p->n_tensors; t++) {
        const xpb_tensor_desc *d = xpb_program_tensor(p, t);
        if (d->role == XPB_ROLE_PARAM || d->role == XPB_ROLE_GRAD || d->role == XPB_ROLE_STATE)
            assert_true(plan->store[t].type == CUX_F32 || plan->store[t].type == CUX_I32);
        if (plan->store[t].shadow != CUX_NONE)
            assert_int_equal(plan->store[t].shadow_type, plan->act_type);
    }
    for (uint32_t g = 0; g < plan->n_steps; g++) {
        const cux_step *s = &plan->steps[g];
        if (s->engine == CUX_ENG_KERNEL && (s->kernel == CUX_K_SGD || s->kernel == CUX_K_ADAM)) {
            uint32_t param = s->in[0].tensor;
            assert_int_equal(s->extra.buf, plan->store[param].shadow);
        }
    }
}

/* ---- every model, every policy ---- */

typedef struct model_case {
    const char *model, *variant;
    uint32_t batch;
} model_case;

static const model_case models[] = {
    {"conv6", "cifar", 8},    {"vgg16", "cifar", 8},       {"vgg16", "imagenet", 2},
    {"resnet18", "cifar", 8}, {"resnet18", "imagenet", 2}, {"cyclegan", "small", 1},
    {"cyclegan", "full", 1},
};

static void test_every_model(void **state)
{
    (void)state;
    static const uint32_t policies[4] = {XPB_PRECISION_FP32, XPB_PRECISION_TF32,
                                         XPB_PRECISION_BF16_MIXED, XPB_PRECISION_FP16_MIXED};
    double worst = 0.0;
    char worst_what[160] = "";
    printf("  %-26s %-10s %10s %10s %7s %6s\n", "program", "policy", "arena MiB", "peak MiB",
           "ratio", "steps");
    for (size_t m = 0; m < sizeof models / sizeof models[0]; m++)
        for (uint32_t mode = XPB_MODE_TRAIN; mode <= XPB_MODE_INFERENCE; mode++) {
            xpb_model_program *mp =
                create(models[m].model, models[m].variant, models[m].batch, mode);
            for (int k = 0; k < 4; k++)
                for (int variant = 0; variant < 3; variant++) {
                    uint32_t fusion = variant != 1, keep_all = variant == 2;
                    char what[160];
                    snprintf(what, sizeof what, "%s/%s %s, policy %u, fusion %u%s", models[m].model,
                             models[m].variant, mode == XPB_MODE_TRAIN ? "train" : "infer",
                             policies[k], fusion, keep_all ? ", keep_all" : "");
                    cux_plan *plan = make_plan(&mp->program, policies[k], fusion, keep_all);
                    check_plan(plan, what);
                    double ratio = (double)plan->arena_bytes / (double)plan->peak_bytes;
                    if (!keep_all && ratio > worst) {
                        worst = ratio;
                        snprintf(worst_what, sizeof worst_what, "%s", what);
                    }
                    if (variant == 0) {
                        char prog[64];
                        snprintf(prog, sizeof prog, "%s/%s %s", models[m].model, models[m].variant,
                                 mode == XPB_MODE_TRAIN ? "train" : "infer");
                        static const char *const pn[5] = {"", "fp32", "tf32", "bf16", "fp16"};
                        printf("  %-26s %-10s %10.1f %10.1f %7.3f %6u\n", prog, pn[policies[k]],
                               (double)plan->arena_bytes / 1048576.0,
                               (double)plan->peak_bytes / 1048576.0, ratio, plan->n_steps);
                    }
                    cux_plan_free(plan);
                }
            xpb_model_program_free(mp);
        }
    printf("  worst arena / live-bytes ratio %.3f (%s)\n", worst, worst_what);
    /* greedy placement stays close to the lower bound no placement can beat */
    assert_true(worst < 1.20);
}

/* ---- fusion ---- */

static int conv_steps_with(const cux_plan *plan, int act, int bias, int resid)
{
    int n = 0;
    for (uint32_t g = 0; g < plan->n_steps; g++) {
        const cux_step *s = &plan->steps[g];
        if (s->engine == CUX_ENG_CONV && s->act == act && (s->bias.buf != CUX_NONE) == bias &&
            (s->resid.buf != CUX_NONE) == resid)
            n++;
    }
    return n;
}

static int kernel_steps_with_act(const cux_plan *plan, int kernel, int act, int mask)
{
    int n = 0;
    for (uint32_t g = 0; g < plan->n_steps; g++) {
        const cux_step *s = &plan->steps[g];
        if (s->engine == CUX_ENG_KERNEL && s->kernel == kernel && s->act == act &&
            (s->mask.buf != CUX_NONE) == mask)
            n++;
    }
    return n;
}

static void test_fusion_vgg16(void **state)
{
    (void)state;
    xpb_model_program *mp = create("vgg16", "cifar", 8, XPB_MODE_INFERENCE);
    cux_plan *fused = make_plan(&mp->program, XPB_PRECISION_FP32, 1, 0);
    cux_plan *plain = make_plan(&mp->program, XPB_PRECISION_FP32, 0, 0);
    /* 13 convolutions with bias and ReLU in their epilogue; no activation kernel left */
    assert_int_equal(conv_steps_with(fused, CUX_ACT_RELU, 1, 0), 13);
    assert_int_equal(count_steps(fused, CUX_ENG_KERNEL, CUX_K_ACT), 0);
    assert_int_equal(count_steps(plain, CUX_ENG_KERNEL, CUX_K_ACT), 13);
    assert_int_equal(conv_steps_with(plain, CUX_ACT_NONE, 1, 0), 13);
    assert_int_equal(plain->n_steps - fused->n_steps, 13); /* the ReLUs (one linear layer) */
    cux_plan_free(fused);
    cux_plan_free(plain);
    xpb_model_program_free(mp);

    /* training: conv + ReLU still fuses (the backward reads the ReLU's output) */
    mp = create("vgg16", "cifar", 8, XPB_MODE_TRAIN);
    fused = make_plan(&mp->program, XPB_PRECISION_TF32, 1, 0);
    assert_int_equal(conv_steps_with(fused, CUX_ACT_RELU, 1, 0), 13);
    assert_int_equal(count_steps(fused, CUX_ENG_KERNEL, CUX_K_ACT), 0);
    assert_int_equal(count_steps(fused, CUX_ENG_KERNEL, CUX_K_ACT_BWD), 13);
    cux_plan_free(fused);
    xpb_model_program_free(mp);
}

static void test_fusion_resnet18(void **state)
{
    (void)state;
    /* inference: every batch norm folded into its convolution (prep steps), the residual sums
     * and the ReLUs in the convolutions' epilogues */
    xpb_model_program *mp = create("resnet18", "cifar", 8, XPB_MODE_INFERENCE);
    cux_plan *plan = make_plan(&mp->program, XPB_PRECISION_FP16_MIXED, 1, 0);
    assert_int_equal(plan->n_prep, 20);
    assert_int_equal(count_steps(plan, CUX_ENG_KERNEL, CUX_K_BN_INFER), 0);
    assert_int_equal(count_steps(plan, CUX_ENG_KERNEL, CUX_K_ADD), 0);
    assert_int_equal(conv_steps_with(plan, CUX_ACT_RELU, 1, 1), 8);
    assert_int_equal(conv_steps_with(plan, CUX_ACT_RELU, 1, 0), 9);
    assert_int_equal(conv_steps_with(plan, CUX_ACT_NONE, 1, 0), 3); /* downsample 1x1 */
    for (uint32_t g = 0; g < plan->n_prep; g++)
        assert_int_equal(plan->prep[g].kernel, CUX_K_BN_FOLD);
    /* the folded weights replace the parameters: no shadow for them */
    for (uint32_t t = 0; t < plan->prog->n_tensors; t++) {
        const xpb_tensor_desc *d = xpb_program_tensor(plan->prog, t);
        if (d->ndim == 4 && d->role == XPB_ROLE_PARAM)
            assert_int_equal(plan->store[t].shadow, CUX_NONE);
    }
    cux_plan_free(plan);
    xpb_model_program_free(mp);

    /* training: batch norm + ReLU forward, and their backward in one kernel (9 of 20 norms are
     * followed by a ReLU alone; the others feed a residual sum) */
    mp = create("resnet18", "cifar", 8, XPB_MODE_TRAIN);
    plan = make_plan(&mp->program, XPB_PRECISION_BF16_MIXED, 1, 0);
    assert_int_equal(plan->n_prep, 0);
    assert_int_equal(kernel_steps_with_act(plan, CUX_K_BN_TRAIN, CUX_ACT_RELU, 0), 9);
    assert_int_equal(kernel_steps_with_act(plan, CUX_K_BN_BWD, CUX_ACT_RELU, 1), 9);
    assert_int_equal(count_steps(plan, CUX_ENG_KERNEL, CUX_K_BN_TRAIN), 20);
    cux_plan_free(plan);
    plan = make_plan(&mp->program, XPB_PRECISION_BF16_MIXED, 0, 0);
    assert_int_equal(kernel_steps_with_act(plan, CUX_K_BN_TRAIN, CUX_ACT_NONE, 0), 20);
    assert_int_equal(kernel_steps_with_act(plan, CUX_K_BN_BWD, CUX_ACT_NONE, 0), 20);
    cux_plan_free(plan);
    xpb_model_program_free(mp);
}

static void test_fusion_cyclegan(void **state)
{
    (void)state;
    xpb_model_program *mp = create("cyclegan", "small", 1, XPB_MODE_TRAIN);
    cux_plan *plan = make_plan(&mp->program, XPB_PRECISION_FP32, 1, 0);
    int relu = kernel_steps_with_act(plan, CUX_K_IN_FWD, CUX_ACT_RELU, 0);
    int leaky = kernel_steps_with_act(plan, CUX_K_IN_FWD, CUX_ACT_LEAKY, 0);
    assert_true(relu > 0);  /* generators: conv -> instance norm -> ReLU */
    assert_true(leaky > 0); /* discriminators: conv -> instance norm -> LeakyReLU */
    assert_true(kernel_steps_with_act(plan, CUX_K_IN_BWD, CUX_ACT_RELU, 1) > 0);
    assert_true(conv_steps_with(plan, CUX_ACT_TANH, 1, 0) > 0); /* the generators' output */
    assert_int_equal(plan->scaled, 0);
    cux_plan_free(plan);
    xpb_model_program_free(mp);
}

/* ---- layouts, types, shadows, reshapes ---- */

static void test_layouts_and_types(void **state)
{
    (void)state;
    xpb_model_program *mp = create("resnet18", "cifar", 8, XPB_MODE_TRAIN);
    cux_plan *fp32 = make_plan(&mp->program, XPB_PRECISION_FP32, 1, 0);
    cux_plan *tf32 = make_plan(&mp->program, XPB_PRECISION_TF32, 1, 0);
    cux_plan *bf16 = make_plan(&mp->program, XPB_PRECISION_BF16_MIXED, 1, 0);
    assert_int_equal(fp32->layout4d, CUX_PLAIN);
    assert_int_equal(tf32->layout4d, CUX_NHWC);
    assert_int_equal(bf16->layout4d, CUX_NHWC);
    assert_int_equal(fp32->act_type, CUX_F32);
    assert_int_equal(tf32->act_type, CUX_F32);
    assert_int_equal(bf16->act_type, CUX_BF16);
    int conv = 0;
    for (uint32_t g = 0; g < bf16->n_steps; g++) {
        const cux_step *s = &bf16->steps[g];
        if (s->engine != CUX_ENG_CONV)
            continue;
        conv++;
        const xpb_op *op = OP(bf16, s->op);
        uint32_t w = op->inputs[1];
        if (op->kind == XPB_OP_CONV2D || op->kind == XPB_OP_CONV2D_BWD_DATA) {
            /* the weight is read through its bf16 shadow, never converted per step */
            assert_int_equal(s->in[1].buf, bf16->store[w].shadow);
            assert_int_equal(bf16->bufs[s->in[1].buf].kind, CUX_BUF_SHADOW);
        }
        if (op->kind == XPB_OP_CONV2D_BWD_WEIGHTS) /* written in bf16, converted to the fp32 grad */
            assert_int_equal(bf16->bufs[s->out[0].buf].kind, CUX_BUF_TEMP);
    }
    assert_true(conv > 0);
    /* no conversion at all in fp32 and tf32: storage is what cuDNN and cuBLASLt read */
    assert_int_equal(count_steps(fp32, CUX_ENG_KERNEL, CUX_K_CONVERT), 0);
    assert_int_equal(count_steps(tf32, CUX_ENG_KERNEL, CUX_K_CONVERT), 0);
    cux_plan_free(fp32);
    cux_plan_free(tf32);
    cux_plan_free(bf16);
    xpb_model_program_free(mp);
}

/* RESHAPE of [N, 512, 1, 1] shares bytes in NHWC; [N, 512, 7, 7] needs a transpose. */
static void test_reshape(void **state)
{
    (void)state;
    xpb_model_program *mp = create("vgg16", "cifar", 8, XPB_MODE_INFERENCE);
    cux_plan *plan = make_plan(&mp->program, XPB_PRECISION_TF32, 1, 0);
    int shared = 0;
    for (uint32_t i = 0; i < plan->prog->n_ops; i++)
        if (OP(plan, i)->kind == XPB_OP_RESHAPE) {
            assert_int_equal(plan->store[OP(plan, i)->outputs[0]].alias, OP(plan, i)->inputs[0]);
            assert_false(has_step_for(plan, i));
            shared++;
        }
    assert_int_equal(shared, 1);
    cux_plan_free(plan);
    xpb_model_program_free(mp);

    mp = create("vgg16", "imagenet", 2, XPB_MODE_INFERENCE);
    plan = make_plan(&mp->program, XPB_PRECISION_TF32, 1, 0);
    int converted = 0;
    for (uint32_t g = 0; g < plan->n_steps; g++) {
        const cux_step *s = &plan->steps[g];
        if (s->kernel == CUX_K_CONVERT && s->op != CUX_NONE &&
            OP(plan, s->op)->kind == XPB_OP_RESHAPE) {
            assert_int_equal(s->in[0].layout, CUX_NHWC);
            assert_int_equal(s->out[0].layout, CUX_PLAIN);
            converted++;
        }
    }
    assert_int_equal(converted, 1);
    cux_plan_free(plan);
    /* fp32 stores NCHW: a flatten is free */
    plan = make_plan(&mp->program, XPB_PRECISION_FP32, 1, 0);
    assert_int_equal(count_steps(plan, CUX_ENG_KERNEL, CUX_K_CONVERT), 0);
    cux_plan_free(plan);
    xpb_model_program_free(mp);
}

/* ---- fp16 loss scaling ---- */

static void test_loss_scaling(void **state)
{
    (void)state;
    xpb_model_program *mp = create("cyclegan", "small", 1, XPB_MODE_TRAIN);
    cux_plan *plan = make_plan(&mp->program, XPB_PRECISION_FP16_MIXED, 1, 0);
    assert_int_equal(plan->scaled, 1);
    for (uint32_t k = 0; k < plan->prog->n_phases; k++) {
        int seen_unscale = 0, seen_update = 0, updates = 0, unscales = 0;
        for (uint32_t g = plan->phase_begin[k]; g < plan->phase_end[k]; g++) {
            const cux_step *s = &plan->steps[g];
            if (s->engine != CUX_ENG_KERNEL)
                continue;
            if (s->kernel == CUX_K_UNSCALE) {
                assert_false(seen_update); /* every unscale before the first update */
                seen_unscale = 1;
                unscales++;
            }
            if (s->kernel == CUX_K_SGD || s->kernel == CUX_K_ADAM) {
                assert_true(seen_unscale);
                assert_true(s->flags & CUX_STEP_SKIPPABLE);
                seen_update = 1;
                updates++;
            }
            if (s->kernel == CUX_K_XENT_BWD || s->kernel == CUX_K_MSE_BWD ||
                s->kernel == CUX_K_L1_BWD)
                assert_true(s->flags & CUX_STEP_SCALED);
        }
        assert_true(updates > 0);
        assert_int_equal(unscales, updates);
        assert_true(plan->steps[plan->phase_end[k] - 1].flags & CUX_STEP_SCALED);
    }
    cux_plan_free(plan);
    /* bf16 needs no loss scaling */
    plan = make_plan(&mp->program, XPB_PRECISION_BF16_MIXED, 1, 0);
    assert_int_equal(plan->scaled, 0);
    assert_int_equal(count_steps(plan, CUX_ENG_KERNEL, CUX_K_UNSCALE), 0);
    cux_plan_free(plan);
    xpb_model_program_free(mp);
}

/* ---- refusals ---- */

static xpb_status try_plan(const xpb_program *p, uint32_t precision, const cux_target *t, char *err,
                           size_t size)
{
    cux_options o = {precision, 1, 0, 0, XPB_TRANSFER_RESIDENT};
    cux_plan *plan = NULL;
    xpb_status st = cux_plan_build(&plan, p, &o, t, err, size);
    assert_true((st == XPB_OK) == (plan != NULL));
    cux_plan_free(plan);
    return st;
}

/* A one-op program: CONV_T2D x[1,2,5,5], w[2,3,3,3] -> y. */
typedef struct tiny {
    xpb_tensor_desc t[3];
    xpb_op op;
    xpb_phase ph;
    xpb_program p;
} tiny;

static void tiny_conv_t(tiny *m, int stride, int output_padding)
{
    memset(m, 0, sizeof *m);
    /* pad 0, kernel 3, dilation 3: OH = (H - 1) * stride + 3 * (3 - 1) + output_padding + 1 */
    int64_t oh = (5 - 1) * stride + 6 + output_padding + 1;
    const int64_t dims[3][4] = {{1, 2, 5, 5}, {2, 3, 3, 3}, {1, 3, oh, oh}};
    const char *names[3] = {"x", "w", "y"};
    for (int i = 0; i < 3; i++) {
        m->t[i].name = names[i];
        m->t[i].layer = "up";
        m->t[i].dtype = XPB_DTYPE_F32;
        m->t[i].role = i == 1 ? XPB_ROLE_PARAM : i == 0 ? XPB_ROLE_INPUT : XPB_ROLE_OUTPUT;
        m->t[i].flags = i == 1   ? XPB_TENSOR_PERSISTENT | XPB_TENSOR_HOST_WRITE
                        : i == 0 ? XPB_TENSOR_HOST_WRITE
                                 : XPB_TENSOR_HOST_READ;
        m->t[i].ndim = 4;
        memcpy(m->t[i].dims, dims[i], sizeof dims[i]);
    }
    m->op.kind = XPB_OP_CONV_T2D;
    m->op.n_inputs = 2;
    m->op.n_outputs = 1;
    for (int k = 0; k < XPB_MAX_OP_INPUTS; k++)
        m->op.inputs[k] = XPB_NO_TENSOR;
    for (int k = 0; k < XPB_MAX_OP_OUTPUTS; k++)
        m->op.outputs[k] = XPB_NO_TENSOR;
    m->op.inputs[0] = 0;
    m->op.inputs[1] = 1;
    m->op.outputs[0] = 2;
    m->op.attrs.stride[0] = m->op.attrs.stride[1] = stride;
    m->op.attrs.dilation[0] = m->op.attrs.dilation[1] = 3;
    m->op.attrs.output_padding[0] = m->op.attrs.output_padding[1] = output_padding;
    m->op.layer = "up";
    m->op.opset = 1;
    m->ph.name = "forward";
    m->ph.n_ops = 1;
    m->p.struct_size = sizeof m->p;
    m->p.opset = 1;
    m->p.n_tensors = 3;
    m->p.n_ops = 1;
    m->p.n_phases = 1;
    m->p.tensor_stride = sizeof(xpb_tensor_desc);
    m->p.op_stride = sizeof(xpb_op);
    m->p.phase_stride = sizeof(xpb_phase);
    m->p.tensors = m->t;
    m->p.ops = &m->op;
    m->p.phases = &m->ph;
}

static void test_refusals(void **state)
{
    (void)state;
    char err[CUX_ERR_SIZE];
    xpb_model_program *mp = create("conv6", "cifar", 2, XPB_MODE_TRAIN);
    const xpb_program *p = &mp->program;
    assert_int_equal(try_plan(p, XPB_PRECISION_BF16_MIXED, &SM75, err, sizeof err),
                     XPB_UNSUPPORTED);
    assert_non_null(strstr(err, "bf16-mixed"));
    assert_non_null(strstr(err, "sm_75"));
    assert_int_equal(try_plan(p, XPB_PRECISION_TF32, &SM75, err, sizeof err), XPB_UNSUPPORTED);
    assert_non_null(strstr(err, "tf32 needs TF32 tensor cores"));
    assert_int_equal(try_plan(p, XPB_PRECISION_FP16_MIXED, &SM75, err, sizeof err), XPB_OK);
    assert_int_equal(try_plan(p, XPB_PRECISION_BF16_MIXED, &SM80, err, sizeof err), XPB_OK);
    const cux_target volta = {7, 0};
    assert_int_equal(try_plan(p, XPB_PRECISION_FP32, &volta, err, sizeof err), XPB_UNSUPPORTED);
    assert_non_null(strstr(err, "7.5"));
    assert_int_equal(try_plan(p, 9, &SM80, err, sizeof err), XPB_UNSUPPORTED);
    assert_non_null(strstr(err, "unknown precision"));
    assert_int_equal(cux_target_precisions(&SM75), XPB_PRECISION_BIT(XPB_PRECISION_FP32) |
                                                       XPB_PRECISION_BIT(XPB_PRECISION_FP16_MIXED));
    assert_int_equal(cux_target_precisions(&SM80), XPB_PRECISION_BIT(XPB_PRECISION_FP32) |
                                                       XPB_PRECISION_BIT(XPB_PRECISION_TF32) |
                                                       XPB_PRECISION_BIT(XPB_PRECISION_BF16_MIXED) |
                                                       XPB_PRECISION_BIT(XPB_PRECISION_FP16_MIXED));
    assert_int_equal(cux_target_precisions(&volta), 0);
    xpb_model_program_free(mp);

    /* cuDNN's backward-data cannot make an output padding >= the stride (PyTorch allows it
     * below the dilation) */
    tiny m;
    tiny_conv_t(&m, 2, 1);
    assert_int_equal(try_plan(&m.p, XPB_PRECISION_FP32, &SM75, err, sizeof err), XPB_OK);
    tiny_conv_t(&m, 2, 2);
    assert_int_equal(try_plan(&m.p, XPB_PRECISION_FP32, &SM75, err, sizeof err), XPB_UNSUPPORTED);
    assert_non_null(strstr(err, "CONV_T2D (layer up)"));
    assert_non_null(strstr(err, "output_padding"));
    /* an op of a later op set, named by the host */
    tiny_conv_t(&m, 2, 1);
    m.op.kind = 77;
    m.op.kind_name = "ALL_REDUCE";
    assert_int_equal(try_plan(&m.p, XPB_PRECISION_FP32, &SM75, err, sizeof err), XPB_UNSUPPORTED);
    assert_non_null(strstr(err, "ALL_REDUCE"));
    /* an attribute this backend does not know */
    tiny_conv_t(&m, 2, 1);
    m.op.attrs_set = 1ull << 40;
    assert_int_equal(try_plan(&m.p, XPB_PRECISION_FP32, &SM75, err, sizeof err), XPB_UNSUPPORTED);
    assert_non_null(strstr(err, "attribute bit 40"));
}

/* ---- memory reuse on a chain ---- */

static void test_memory_reuse(void **state)
{
    (void)state;
    /* x -> relu -> a -> relu -> b -> relu -> c -> relu -> y: a and c never live together */
    xpb_tensor_desc t[5];
    xpb_op ops[4];
    memset(t, 0, sizeof t);
    memset(ops, 0, sizeof ops);
    const char *names[5] = {"x", "a", "b", "c", "y"};
    for (int i = 0; i < 5; i++) {
        t[i].name = names[i];
        t[i].layer = names[i];
        t[i].dtype = XPB_DTYPE_F32;
        t[i].role = i == 0 ? XPB_ROLE_INPUT : i == 4 ? XPB_ROLE_OUTPUT : XPB_ROLE_ACTIVATION;
        t[i].flags = i == 0 ? XPB_TENSOR_HOST_WRITE : i == 4 ? XPB_TENSOR_HOST_READ : 0;
        t[i].ndim = 4;
        t[i].dims[0] = 2;
        t[i].dims[1] = 8;
        t[i].dims[2] = t[i].dims[3] = 16;
    }
    for (int i = 0; i < 4; i++) {
        ops[i].kind = XPB_OP_RELU;
        ops[i].n_inputs = ops[i].n_outputs = 1;
        for (int k = 0; k < XPB_MAX_OP_INPUTS; k++)
            ops[i].inputs[k] = XPB_NO_TENSOR;
        for (int k = 0; k < XPB_MAX_OP_OUTPUTS; k++)
            ops[i].outputs[k] = XPB_NO_TENSOR;
        ops[i].inputs[0] = (uint32_t)i;
        ops[i].outputs[0] = (uint32_t)i + 1;
        ops[i].layer = names[i + 1];
        ops[i].opset = 1;
    }
    xpb_phase ph = {"forward", 0, 4};
    xpb_program p = {
        sizeof p,         1, 0, 5, 4, 1, sizeof(xpb_tensor_desc), sizeof(xpb_op), t, ops, &ph,
        sizeof(xpb_phase)};
    uint64_t one = 2 * 8 * 16 * 16 * 4;
    cux_plan *plan = make_plan(&p, XPB_PRECISION_FP32, 0, 0);
    check_plan(plan, "relu chain");
    assert_int_equal(count_steps(plan, CUX_ENG_KERNEL, CUX_K_ACT), 4);
    /* x and y pinned, a/b/c: at most two live at once -> four tensors' worth, not five */
    assert_true(plan->arena_bytes <= 4 * one + 1024);
    assert_true(plan->peak_bytes >= 4 * one);
    cux_plan_free(plan);
    plan = make_plan(&p, XPB_PRECISION_FP32, 0, 1); /* keep_all: nothing shared */
    check_plan(plan, "relu chain, keep_all");
    assert_true(plan->arena_bytes >= 5 * one);
    cux_plan_free(plan);
}

/* ---- device tables and messages ---- */

static void test_peak(void **state)
{
    (void)state;
    double f[XPB_PRECISION_COUNT];
    cux_peak_flops(7, 5, 40, 1590000, f); /* Tesla T4: 8.1 TFLOPS fp32, 65 fp16 */
    assert_true(fabs(f[XPB_PRECISION_FP32] / 8.1e12 - 1.0) < 0.01);
    assert_true(fabs(f[XPB_PRECISION_FP16_MIXED] / 65.0e12 - 1.0) < 0.01);
    assert_true(f[XPB_PRECISION_TF32] == 0.0 && f[XPB_PRECISION_BF16_MIXED] == 0.0);
    cux_peak_flops(8, 0, 108, 1410000, f); /* A100: 19.5 fp32, 156 tf32, 312 fp16 / bf16 */
    assert_true(fabs(f[XPB_PRECISION_FP32] / 19.5e12 - 1.0) < 0.01);
    assert_true(fabs(f[XPB_PRECISION_TF32] / 156e12 - 1.0) < 0.01);
    assert_true(fabs(f[XPB_PRECISION_BF16_MIXED] / 312e12 - 1.0) < 0.01);
    cux_peak_flops(8, 6, 72, 1695000, f); /* A10: 31.2 fp32, 125 fp16 */
    assert_true(fabs(f[XPB_PRECISION_FP32] / 31.2e12 - 1.0) < 0.01);
    assert_true(fabs(f[XPB_PRECISION_FP16_MIXED] / 125e12 - 1.0) < 0.01);
    cux_peak_flops(8, 9, 58, 2040000, f); /* L4: 30.3 fp32, 121 fp16 */
    assert_true(fabs(f[XPB_PRECISION_FP32] / 30.3e12 - 1.0) < 0.01);
    cux_peak_flops(9, 0, 132, 1830000, f); /* H100 SXM5: 989 fp16 dense */
    assert_true(fabs(f[XPB_PRECISION_FP16_MIXED] / 989.4e12 - 1.0) < 0.01);
    cux_peak_flops(12, 0, 100, 2000000, f); /* a part the table does not know: unknown */
    for (int p = 0; p < XPB_PRECISION_COUNT; p++)
        assert_true(f[p] == 0.0);
    assert_null(cux_sm_rates_of(6, 1));
    assert_string_equal(cux_sm_rates_of(7, 5)->arch, "Turing");
}

static void test_reasons(void **state)
{
    (void)state;
    char out[512];
    cux_probe p;
    memset(&p, 0, sizeof p);
    p.runtime_version = 13000;
    p.status = CUX_CUDA_INSUFFICIENT_DRIVER;
    p.libcuda_error = "libcuda.so.1: cannot open shared object file: No such file or directory";
    cux_no_device_reason(out, sizeof out, &p);
    assert_non_null(strstr(out, "no NVIDIA driver"));
    assert_non_null(strstr(out, "libcuda.so.1: cannot open"));
    assert_non_null(strstr(out, "580"));
    p.libcuda_found = 1;
    p.driver_version = 12020;
    cux_no_device_reason(out, sizeof out, &p);
    assert_non_null(strstr(out, "supports CUDA 12.2, older than the CUDA 13.0 runtime"));
    p.driver_version = 0;
    cux_no_device_reason(out, sizeof out, &p);
    assert_non_null(strstr(out, "no usable NVIDIA driver"));
    p.status = CUX_CUDA_NO_DEVICE;
    p.driver_version = 13000;
    cux_no_device_reason(out, sizeof out, &p);
    assert_non_null(strstr(out, "no CUDA-capable GPU"));
    p.status = CUX_CUDA_STUB_LIBRARY;
    cux_no_device_reason(out, sizeof out, &p);
    assert_non_null(strstr(out, "stub library"));
    p.status = CUX_CUDA_SYSTEM_DRIVER_MISMATCH;
    cux_no_device_reason(out, sizeof out, &p);
    assert_non_null(strstr(out, "kernel module"));
    p.status = CUX_CUDA_SUCCESS;
    p.count = 0;
    cux_no_device_reason(out, sizeof out, &p);
    assert_non_null(strstr(out, "0 devices"));
    p.status = 999;
    p.status_name = "cudaErrorUnknown";
    p.status_text = "unknown error";
    cux_no_device_reason(out, sizeof out, &p);
    assert_non_null(strstr(out, "cudaErrorUnknown (999): unknown error"));
    cux_bad_index_reason(out, sizeof out, 3, 2);
    assert_string_equal(out, "no device 3: this machine has 2 CUDA devices (0..1)");
    cux_bad_index_reason(out, sizeof out, 1, 1);
    assert_string_equal(out, "no device 1: this machine has 1 CUDA device (0)");
}

static void test_tune_cache(void **state)
{
    (void)state;
    size_t before = cux_tune_count();
    struct {
        int a, b;
    } key = {1, 2}, key2 = {1, 3};
    int64_t v = 7, got = 0;
    assert_int_equal(cux_tune_find(CUX_TUNE_CONV, 0, &key, sizeof key, &got, sizeof got), 0);
    assert_int_equal(cux_tune_add(CUX_TUNE_CONV, 0, &key, sizeof key, &v, sizeof v), 0);
    assert_int_equal(cux_tune_find(CUX_TUNE_CONV, 0, &key, sizeof key, &got, sizeof got), 1);
    assert_int_equal(got, 7);
    assert_int_equal(cux_tune_find(CUX_TUNE_CONV, 1, &key, sizeof key, &got, sizeof got), 0);
    assert_int_equal(cux_tune_find(CUX_TUNE_MATMUL, 0, &key, sizeof key, &got, sizeof got), 0);
    assert_int_equal(cux_tune_find(CUX_TUNE_CONV, 0, &key2, sizeof key2, &got, sizeof got), 0);
    int32_t small;
    assert_int_equal(cux_tune_find(CUX_TUNE_CONV, 0, &key, sizeof key, &small, sizeof small), 0);
    v = 9;
    assert_int_equal(cux_tune_add(CUX_TUNE_CONV, 0, &key, sizeof key, &v, sizeof v), 0);
    assert_int_equal(cux_tune_find(CUX_TUNE_CONV, 0, &key, sizeof key, &got, sizeof got), 1);
    assert_int_equal(got, 9);
    assert_int_equal(cux_tune_count(), before + 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_model),       cmocka_unit_test(test_fusion_vgg16),
        cmocka_unit_test(test_fusion_resnet18),   cmocka_unit_test(test_fusion_cyclegan),
        cmocka_unit_test(test_layouts_and_types), cmocka_unit_test(test_reshape),
        cmocka_unit_test(test_loss_scaling),      cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_memory_reuse),      cmocka_unit_test(test_peak),
        cmocka_unit_test(test_reasons),           cmocka_unit_test(test_tune_cache),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
