/* The cuda backend's planner (plugins/backend_cuda/plan/), which runs without a GPU:
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
 * - data-parallel programs (ALL_REDUCE, op set 2): one NCCL step per gradient over 2 ranks, a
 *   bucket one NCCL group, gradients alive and unshared until their reduce and update, nothing
 *   with one rank; the refusals (no NCCL in the build, non-fp32 tensors); NCCL's loader (a
 *   missing library, a library that is not NCCL, the real one when the build found it), its
 *   version strings, messages and wait limit; a rank's device;
 * - the peak FLOP/s and datasheet bandwidth tables, the no-device sentences and the tuning cache.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plan/coll.h"
#include "plugin/loader.h"
#include "program/model_program.h"
#include "run/session.h"
#include "plan/engines.h"
#include "plan/datasheet.h"
#include "plan/peak.h"
#include "check/conformance_case.h"
#include "plan/plan.h"
#include "plan/plan_scaling.h"
#include "plan/plan_tensor.h"
#include "plan/reason.h"
#include "plan/sticky.h"
#include "plan/target.h"
#include "plan/tune_cache.h"

#include "cuda_plan_harness.h"

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
                    /* a model's training phases keep their gradients from the host: under
                     * fp16-mixed every one of them scales its loss */
                    for (uint32_t ph = 0; ph < plan->prog->n_phases; ph++)
                        assert_int_equal(plan->phase_scaled[ph],
                                         mode == XPB_MODE_TRAIN &&
                                             policies[k] == XPB_PRECISION_FP16_MIXED);
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
    assert_true(plan->scale_initial == CUX_SCALE_INITIAL);
    assert_int_equal(plan->scale_interval, CUX_SCALE_INTERVAL);
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
        assert_int_equal(plan->phase_scaled[k], 1);
        /* CycleGAN's program updates a generator's parameters while the backward of the
         * others still runs: every gradient is unscaled after the last step that writes it
         * (before, all were unscaled before the phase's first update, some before they were
         * computed, and those updates used gradients times the scale), and no update runs
         * before the overflow of every gradient of the phase is known (all or none) */
        uint32_t first_update = plan->phase_end[k];
        for (uint32_t g = plan->phase_begin[k]; g < plan->phase_end[k]; g++) {
            const cux_step *s = &plan->steps[g];
            int upd =
                s->engine == CUX_ENG_KERNEL && (s->kernel == CUX_K_SGD || s->kernel == CUX_K_ADAM);
            if (upd && g < first_update)
                first_update = g;
            if (s->engine == CUX_ENG_KERNEL && s->kernel == CUX_K_UNSCALE)
                for (uint32_t h = g + 1; h < plan->phase_end[k]; h++)
                    if (h != g && writes(&plan->steps[h], s->in[0].buf) &&
                        !(plan->steps[h].kernel == CUX_K_UNSCALE))
                        fail_msg("phase %u: step %u unscales buffer %u, which step %u writes later",
                                 k, g, s->in[0].buf, h);
        }
        for (uint32_t g = first_update; g + 1 < plan->phase_end[k]; g++) {
            const cux_step *s = &plan->steps[g];
            if (!(s->engine == CUX_ENG_KERNEL &&
                  (s->kernel == CUX_K_SGD || s->kernel == CUX_K_ADAM ||
                   s->kernel == CUX_K_CONVERT)))
                fail_msg("phase %u: step %u (op %u) runs after the first update (step %u)", k, g,
                         s->op, first_update);
        }
        assert_true(plan->steps[plan->phase_end[k] - 1].flags & CUX_STEP_SCALED);
    }
    cux_plan_free(plan);
    /* keep_all: every tensor readable, the scale fixed at 1 */
    plan = make_plan(&mp->program, XPB_PRECISION_FP16_MIXED, 1, 1);
    assert_true(plan->scale_initial == 1.0f);
    assert_int_equal(plan->scale_interval, 0);
    cux_plan_free(plan);
    /* bf16 needs no loss scaling */
    plan = make_plan(&mp->program, XPB_PRECISION_BF16_MIXED, 1, 0);
    assert_int_equal(plan->scaled, 0);
    assert_int_equal(count_steps(plan, CUX_ENG_KERNEL, CUX_K_UNSCALE), 0);
    cux_plan_free(plan);
    xpb_model_program_free(mp);
}

/* The loss scale's start against the gradients it multiplies: one training step of every model
 * case of the conformance suite (its sizes and seed) on cpu_ref, every gradient fp16 holds under
 * fp16-mixed (activation gradients, and the convolutions' weight gradients, which cuDNN writes
 * in fp16 before they become the fp32 gradient) times CUX_SCALE_INITIAL must stay below half of
 * fp16's largest value. At PyTorch's 2^16 ResNet18's first convolution (|dW| 1.1) and CycleGAN's
 * generators (|dW| 17) overflow at step 1, the step is skipped and the optimizer state stays
 * zero. */
static void test_loss_scale_headroom(void **state)
{
    (void)state;
    static const xpb_kv cyclegan_size = {(char *)"image_size", (char *)"32"};
    static const struct {
        const char *model, *variant;
        uint32_t batch;
    } cases[] = {{"conv6", "cifar", 4},
                 {"vgg16", "cifar", 2},
                 {"resnet18", "cifar", 2},
                 {"cyclegan", "small", 1}};
    const xpb_backend_api *ref = xpb_registry_backend(registry, "cpu_ref");
    assert_non_null(ref);
    for (size_t m = 0; m < sizeof cases / sizeof cases[0]; m++) {
        xpb_program_options c;
        memset(&c, 0, sizeof c);
        c.model = cases[m].model;
        c.variant = cases[m].variant;
        c.batch = cases[m].batch;
        c.mode = XPB_MODE_TRAIN;
        c.seed = 1; /* conformance's default */
        c.lr = c.momentum = c.weight_decay = NAN;
        if (strcmp(c.model, "cyclegan") == 0) {
            c.params = &cyclegan_size;
            c.n_params = 1;
        }
        xpb_model_program *mp = NULL;
        xpb_err err = {{0}};
        if (xpb_model_program_create(&mp, xpb_registry_model(registry, c.model), &c, &err))
            fail_msg("%s: %s", c.model, err.msg);
        xpb_compile_options o = {
            .struct_size = sizeof o, .precision = XPB_PRECISION_FP32, .keep_all = 1};
        xpb_session sess;
        memset(&sess, 0, sizeof sess);
        if (xpb_session_open(&sess, ref, 0, mp, &o, &err) != XPB_OK ||
            xpb_session_step(&sess, NULL, &err) != XPB_OK)
            fail_msg("%s on cpu_ref: %s", c.model, err.msg);
        const xpb_program *p = &mp->program;
        double most = 0.0;
        const char *where = "";
        for (uint32_t t = 0; t < p->n_tensors; t++) {
            const xpb_tensor_desc *d = xpb_program_tensor(p, t);
            int fp16 = d->role == XPB_ROLE_ACTIVATION_GRAD ||
                       (d->role == XPB_ROLE_GRAD && d->ndim == 4); /* conv weight gradients */
            if (!fp16 || d->dtype != XPB_DTYPE_F32)
                continue;
            float *v = malloc(xpb_tensor_bytes(d));
            assert_non_null(v);
            if (xpb_session_read(&sess, t, v, &err) != XPB_OK)
                fail_msg("%s: read %s: %s", c.model, d->name, err.msg);
            for (int64_t i = 0; i < xpb_tensor_numel(d); i++)
                if (fabs((double)v[i]) > most) {
                    most = fabs((double)v[i]);
                    where = d->name;
                }
            free(v);
        }
        printf("  %-9s largest fp16 gradient %9.4f (%s): x%g = %.0f of 65504\n", c.model, most,
               where, (double)CUX_SCALE_INITIAL, most * CUX_SCALE_INITIAL);
        if (most * CUX_SCALE_INITIAL > 65504.0 / 2)
            fail_msg("%s: %s reaches %g at step 1: a loss scale of %g overflows fp16", c.model,
                     where, most, (double)CUX_SCALE_INITIAL);
        xpb_session_close(&sess);
        xpb_model_program_free(mp);
    }
}

/* Scaling is invisible: under fp16-mixed an update of a gradient the host wrote (the SGD_UPDATE
 * and ADAM_UPDATE cases of the conformance suite) is never unscaled or skipped (before, a
 * program scaled as soon as it had an update, and those gradients were divided by 65536), a
 * scaled loss gradient is never host-visible, and a training program whose loss gradient the
 * host reads does not scale at all. */
static void test_loss_scaling_invisible(void **state)
{
    (void)state;
    xpb_ct_list cases = {0};
    xpb_ct_catalogue(&cases, 0);
    assert_false(cases.oom);
    int update_cases = 0, chains = 0;
    for (size_t i = 0; i < cases.n; i++) {
        xpb_ct_case *c = &cases.v[i];
        xpb_ct_bind(c);
        int update_case = strstr(c->name, "_UPDATE") != NULL;
        int chain = strcmp(c->name, "chain mlp-xent-sgd (train)") == 0;
        update_cases += update_case;
        chains += chain;
        cux_plan *plan = make_plan(&c->prog, XPB_PRECISION_FP16_MIXED, 1, 0);
        if (update_case && (plan->scaled || count_steps(plan, CUX_ENG_KERNEL, CUX_K_UNSCALE)))
            fail_msg("conformance case %s (%s): the host's gradient is unscaled", c->name,
                     c->shape);
        for (uint32_t g = 0; g < plan->n_steps; g++) {
            const cux_step *st = &plan->steps[g];
            if (update_case && (st->flags & (CUX_STEP_SCALED | CUX_STEP_SKIPPABLE)))
                fail_msg("conformance case %s: step %u is scaled or skippable", c->name, g);
            if ((st->flags & CUX_STEP_SCALED) && st->op != CUX_NONE &&
                cux_host_visible(xpb_program_tensor(plan->prog, st->out[0].tensor)))
                fail_msg("conformance case %s: step %u scales a tensor the host reads", c->name, g);
        }
        if (chain) { /* a training chain that keeps its gradients scales, like a model */
            assert_int_equal(plan->scaled, 1);
            assert_int_equal(count_steps(plan, CUX_ENG_KERNEL, CUX_K_UNSCALE), 3);
            cux_plan_free(plan);
            /* ... and does not once the host reads its loss gradient dz */
            uint32_t dz = CUX_NONE;
            for (uint32_t t = 0; t < c->prog.n_tensors; t++)
                if (strcmp(c->t[t].name, "dz") == 0)
                    dz = t;
            assert_true(dz != CUX_NONE);
            c->t[dz].flags |= XPB_TENSOR_HOST_READ;
            plan = make_plan(&c->prog, XPB_PRECISION_FP16_MIXED, 1, 0);
            assert_int_equal(plan->scaled, 0);
            assert_int_equal(count_steps(plan, CUX_ENG_KERNEL, CUX_K_UNSCALE), 0);
        }
        cux_plan_free(plan);
    }
    assert_true(update_cases >= 2);
    assert_true(chains >= 1);
    xpb_ct_list_free(&cases);
}

/* ---- refusals ---- */

static xpb_status try_plan(const xpb_program *p, uint32_t precision, const cux_target *t, char *err,
                           size_t size)
{
    cux_options o = {precision, 1, 0, 0, XPB_TRANSFER_RESIDENT, 1, 0};
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

/* ---- engine policies and cuDNN releases (plan/engines.c) ---- */

static void test_engine_policies(void **state)
{
    (void)state;
    const int tc[1] = {CUX_NOTE_TENSOR_CORE}, down[1] = {CUX_NOTE_DOWN_CONVERT_INPUTS};
    const int rpr[1] = {CUX_NOTE_REDUCED_PRECISION_REDUCTION};
    const int tc_rpr[2] = {CUX_NOTE_TENSOR_CORE, CUX_NOTE_REDUCED_PRECISION_REDUCTION};
    const int other[2] = {3, 5}; /* FFT, Winograd: accepted (their error is within tolerance) */
    for (uint32_t p = XPB_PRECISION_FP32; p <= XPB_PRECISION_FP16_MIXED; p++) {
        assert_null(cux_engine_refusal(p, NULL, 0));
        assert_null(cux_engine_refusal(p, other, 2));
        /* every policy promises fp32 accumulation and inputs in their storage type */
        assert_non_null(strstr(cux_engine_refusal(p, rpr, 1), "precision below fp32"));
        assert_non_null(cux_engine_refusal(p, tc_rpr, 2));
        assert_non_null(strstr(cux_engine_refusal(p, down, 1), "down-converts"));
        /* tensor cores only where the policy allows them: not under fp32 */
        assert_true((cux_engine_refusal(p, tc, 1) != NULL) == (p == XPB_PRECISION_FP32));
    }
    /* cuBLASLt: split-K reductions in fp32 only when the output is 16-bit */
    assert_int_equal(cux_lt_reduction_mask(CUX_F32), CUX_LT_REDUCTION_ALL);
    assert_int_equal(cux_lt_reduction_mask(CUX_F16), CUX_LT_REDUCTION_COMPUTE_TYPE);
    assert_int_equal(cux_lt_reduction_mask(CUX_BF16), CUX_LT_REDUCTION_COMPUTE_TYPE);
    /* cuDNN 9.0 .. 9.x built for the plugin's CUDA major */
    char why[512];
    assert_int_equal(cux_cudnn_refusal(why, sizeof why, 91900, 13000, 13000, 91900), 0);
    assert_int_equal(cux_cudnn_refusal(why, sizeof why, 90000, 13020, 13000, 91900), 0);
    assert_int_equal(cux_cudnn_refusal(why, sizeof why, 8907, 12020, 13000, 91900), -1);
    assert_non_null(strstr(why, "cuDNN 8.9.7 found at run time"));
    assert_non_null(strstr(why, "built with cuDNN 9.19.0"));
    assert_non_null(strstr(why, "cudnn9-cuda-13"));
    assert_int_equal(cux_cudnn_refusal(why, sizeof why, 100100, 13000, 13000, 91900), -1);
    assert_non_null(strstr(why, "cuDNN 10.1.0"));
    assert_int_equal(cux_cudnn_refusal(why, sizeof why, 91000, 12080, 13000, 91900), -1);
    assert_non_null(strstr(why, "built for CUDA 12.8"));
    assert_non_null(strstr(why, "runs CUDA 13.0"));
}

/* ---- sticky CUDA errors (plan/sticky.c) ---- */

/* One failure that loses a device's context is reported once, by the call that met it, and
 * every later call on that device names it instead of failing with an unrelated-looking error
 * of its own (before, every later conformance case failed, each with whatever call met the
 * sticky error first). */
static void test_sticky_errors(void **state)
{
    (void)state;
    cux_sticky_reset();
    assert_true(cux_cuda_sticky(700));  /* cudaErrorIllegalAddress */
    assert_true(cux_cuda_sticky(719));  /* cudaErrorLaunchFailure */
    assert_true(cux_cuda_sticky(710));  /* cudaErrorAssert */
    assert_false(cux_cuda_sticky(0));   /* success */
    assert_false(cux_cuda_sticky(2));   /* cudaErrorMemoryAllocation: the context lives on */
    assert_false(cux_cuda_sticky(1));   /* cudaErrorInvalidValue */
    assert_false(cux_cuda_sticky(600)); /* cudaErrorNotReady */
    char why[1024];
    assert_int_equal(cux_sticky_refusal(why, sizeof why, 1, "compile"), 0);
    cux_sticky_note(1, "op 5 CONV2D (layer conv2): synchronize: cudaErrorIllegalAddress: an "
                       "illegal memory access was encountered");
    cux_sticky_note(1, "compile: cudaMalloc: cudaErrorIllegalAddress: (a consequence)");
    assert_int_equal(cux_sticky_refusal(why, sizeof why, 0, "compile"), 0); /* another device */
    assert_int_equal(cux_sticky_refusal(why, sizeof why, 1, "compile"), -1);
    assert_non_null(strstr(why, "compile: device 1 is unusable"));
    assert_non_null(
        strstr(why, "(op 5 CONV2D (layer conv2): synchronize: cudaErrorIllegalAddress"));
    assert_null(strstr(why, "a consequence")); /* the first failure only */
    assert_null(strstr(why, "cuda: "));        /* the host names the plugin, the plugin does not */
    cux_sticky_reset();
    assert_int_equal(cux_sticky_refusal(why, sizeof why, 1, "compile"), 0);
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
    double f[XPB_PEAK_SLOTS];
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
    for (int p = 0; p < XPB_PEAK_SLOTS; p++)
        assert_true(f[p] == 0.0);
    assert_null(cux_sm_rates_of(6, 1));
    assert_string_equal(cux_sm_rates_of(7, 5)->arch, "Turing");
}

/* The datasheet bandwidth by the driver's device names; a model number inside a longer one
 * ("A10" in "A100", "L4" in "L40S") is not that model. */
static void test_datasheet_bandwidth(void **state)
{
    (void)state;
    assert_true(cux_datasheet_bandwidth("Tesla T4") == 320e9);
    assert_true(cux_datasheet_bandwidth("NVIDIA A100-SXM4-40GB") == 1555e9);
    assert_true(cux_datasheet_bandwidth("NVIDIA A100-SXM4-80GB") == 2039e9);
    assert_true(cux_datasheet_bandwidth("NVIDIA A100 80GB PCIe") == 1935e9);
    assert_true(cux_datasheet_bandwidth("NVIDIA A10") == 600e9);
    assert_true(cux_datasheet_bandwidth("NVIDIA A10G") == 600e9);
    assert_true(cux_datasheet_bandwidth("NVIDIA L4") == 300e9);
    assert_true(cux_datasheet_bandwidth("NVIDIA L40S") == 864e9);
    assert_true(cux_datasheet_bandwidth("NVIDIA H100 80GB HBM3") == 3350e9);
    assert_true(cux_datasheet_bandwidth("NVIDIA H100 PCIe") == 2000e9);
    assert_true(cux_datasheet_bandwidth("Tesla V100-SXM2-16GB") == 900e9);
    assert_true(cux_datasheet_bandwidth("NVIDIA GeForce RTX 4090") == 0.0); /* not in the table */
    assert_true(cux_datasheet_bandwidth("NVIDIA A1000") == 0.0);
    assert_true(cux_datasheet_bandwidth(NULL) == 0.0);
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

/* ---- data-parallel programs: ALL_REDUCE over NCCL ---- */

/* conv6's training program for 2 ranks with buckets of `bucket_mb` MiB (lower_sync.c). */
static xpb_model_program *create_dp(const char *model, double bucket_mb)
{
    xpb_program_options c;
    memset(&c, 0, sizeof c);
    c.model = model;
    c.variant = "cifar";
    c.batch = 4;
    c.mode = XPB_MODE_TRAIN;
    c.seed = 42;
    c.lr = c.momentum = c.weight_decay = NAN;
    c.average_gradients = 1;
    c.bucket_mb = bucket_mb;
    c.world_size = 2;
    xpb_model_program *mp = NULL;
    xpb_err err = {{0}};
    if (xpb_model_program_create(&mp, xpb_registry_model(registry, model), &c, &err) != XPB_OK)
        fail_msg("%s data-parallel: %s", model, err.msg);
    assert_int_equal(mp->program.opset, 2);
    return mp;
}

static xpb_status plan_dp(cux_plan **plan, const xpb_program *p, uint32_t precision, uint32_t ranks,
                          uint32_t collectives, char *err)
{
    cux_options o = {precision, 1, 0, 0, XPB_TRANSFER_RESIDENT, ranks, collectives};
    return cux_plan_build(plan, p, &o, target_for(precision), err, CUX_ERR_SIZE);
}

static uint32_t count_kind(const xpb_program *p, uint32_t kind)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->n_ops; i++)
        n += xpb_program_op(p, i)->kind == kind;
    return n;
}

/* Every ALL_REDUCE has one NCCL step over its gradient in place, in fp32; the steps of a bucket
 * are consecutive and one group (BEGIN on the first, END on the last); the gradient's buffer
 * lives from before the reduce to the update that reads it. Returns the number of groups. */
static uint32_t check_collectives(const cux_plan *plan, const char *what)
{
    const xpb_program *p = plan->prog;
    uint32_t groups = 0, steps = 0;
    for (uint32_t g = 0; g < plan->n_steps; g++) {
        const cux_step *s = &plan->steps[g];
        if (s->engine != CUX_ENG_COLL)
            continue;
        steps++;
        const xpb_op *op = OP(plan, s->op);
        assert_int_equal(op->kind, XPB_OP_ALL_REDUCE);
        assert_int_equal(s->in[0].tensor, op->inputs[0]);
        assert_int_equal(s->in[0].buf, s->out[0].buf);
        assert_int_equal(s->in[0].type, CUX_F32);
        const cux_buf *b = &plan->bufs[s->in[0].buf];
        if (!b->pinned && !(b->first < g && g <= b->last))
            fail_msg("%s: gradient of op %u is not alive at its reduce (step %u, buffer %u..%u)",
                     what, s->op, g, b->first, b->last);
        for (uint32_t h = g + 1; h < plan->n_steps; h++) /* and until its update */
            if (plan->steps[h].engine == CUX_ENG_KERNEL &&
                (plan->steps[h].kernel == CUX_K_SGD || plan->steps[h].kernel == CUX_K_ADAM) &&
                plan->steps[h].in[1].buf == s->in[0].buf && h > b->last)
                fail_msg("%s: gradient of op %u dies before its update", what, s->op);
        uint32_t bucket = op->bucket;
        int prev = g > 0 && plan->steps[g - 1].engine == CUX_ENG_COLL && bucket != 0 &&
                   OP(plan, plan->steps[g - 1].op)->bucket == bucket;
        int next = g + 1 < plan->n_steps && plan->steps[g + 1].engine == CUX_ENG_COLL &&
                   bucket != 0 && OP(plan, plan->steps[g + 1].op)->bucket == bucket;
        assert_int_equal(!!(s->flags & CUX_STEP_GROUP_BEGIN), !prev && next);
        assert_int_equal(!!(s->flags & CUX_STEP_GROUP_END), prev && !next);
        groups += !prev && next;
    }
    assert_int_equal(steps, count_kind(p, XPB_OP_ALL_REDUCE));
    assert_int_equal(steps, plan->n_coll);
    assert_int_equal(groups, plan->n_groups);
    /* a bucket's ops are never split: every op of a bucket of several is inside one group */
    uint32_t open_bucket = 0;
    for (uint32_t g = 0; g < plan->n_steps; g++) {
        const cux_step *s = &plan->steps[g];
        if (s->engine != CUX_ENG_COLL) {
            assert_int_equal(open_bucket, 0); /* nothing else runs inside a group */
            continue;
        }
        const xpb_op *op = OP(plan, s->op);
        if (s->flags & CUX_STEP_GROUP_BEGIN)
            open_bucket = op->bucket;
        uint32_t same = 0;
        for (uint32_t j = 0; j < p->n_ops; j++)
            same += xpb_program_op(p, j)->kind == XPB_OP_ALL_REDUCE && op->bucket != 0 &&
                    xpb_program_op(p, j)->bucket == op->bucket;
        if (same > 1 && open_bucket != op->bucket)
            fail_msg("%s: op %u of bucket %u (%u ops) is not in its group", what, s->op, op->bucket,
                     same);
        if (s->flags & CUX_STEP_GROUP_END)
            open_bucket = 0;
    }
    return groups;
}

static void test_all_reduce(void **state)
{
    (void)state;
    /* buckets of 1 MiB: conv6's 9 MB of gradients in several multi-op buckets */
    xpb_model_program *mp = create_dp("conv6", 1.0);
    const xpb_program *p = &mp->program;
    uint32_t n_ar = count_kind(p, XPB_OP_ALL_REDUCE);
    assert_true(n_ar >= 8);
    static const uint32_t policies[] = {XPB_PRECISION_FP32, XPB_PRECISION_TF32,
                                        XPB_PRECISION_BF16_MIXED, XPB_PRECISION_FP16_MIXED};
    for (int k = 0; k < 4; k++) {
        cux_plan *plan = NULL;
        char err[CUX_ERR_SIZE] = "", what[64];
        snprintf(what, sizeof what, "conv6 2 ranks, policy %u", policies[k]);
        if (plan_dp(&plan, p, policies[k], 2, 1, err) != XPB_OK)
            fail_msg("%s: %s", what, err);
        check_plan(plan, what);
        uint32_t groups = check_collectives(plan, what);
        assert_true(groups >= 1);
        assert_true(groups < n_ar); /* buckets hold several gradients */
        cux_plan_free(plan);
    }
    /* one rank (comm NULL or size 1): the identity, no step, no group, whatever the build */
    for (uint32_t nccl = 0; nccl < 2; nccl++) {
        cux_plan *plan = NULL;
        char err[CUX_ERR_SIZE] = "";
        if (plan_dp(&plan, p, XPB_PRECISION_FP32, 1, nccl, err) != XPB_OK)
            fail_msg("one rank: %s", err);
        check_plan(plan, "conv6 one rank");
        assert_int_equal(plan->n_coll, 0);
        assert_int_equal(plan->n_groups, 0);
        assert_int_equal(count_steps(plan, CUX_ENG_COLL, 0), 0);
        cux_plan_free(plan);
    }
    /* a build without NCCL refuses ALL_REDUCE over 2 ranks, by name and saying why */
    {
        cux_plan *plan = NULL;
        char err[CUX_ERR_SIZE] = "";
        assert_int_equal(plan_dp(&plan, p, XPB_PRECISION_FP32, 2, 0, err), XPB_UNSUPPORTED);
        assert_null(plan);
        assert_non_null(strstr(err, "ALL_REDUCE (layer "));
        assert_non_null(strstr(err, "has no NCCL"));
        assert_non_null(strstr(err, "2 ranks"));
    }
    xpb_model_program_free(mp);

    /* bucket_mb 0: every gradient a bucket of its own, no group */
    mp = create_dp("conv6", 0.0);
    cux_plan *plan = NULL;
    char err[CUX_ERR_SIZE] = "";
    if (plan_dp(&plan, &mp->program, XPB_PRECISION_FP32, 2, 1, err) != XPB_OK)
        fail_msg("bucket_mb 0: %s", err);
    check_plan(plan, "conv6 bucket_mb 0");
    assert_int_equal(check_collectives(plan, "conv6 bucket_mb 0"), 0);
    assert_int_equal(plan->n_coll, count_kind(&mp->program, XPB_OP_ALL_REDUCE));
    cux_plan_free(plan);
    xpb_model_program_free(mp);

    /* resnet18 (batch norm, residuals), the default 25 MiB buckets, fused and fp16-mixed */
    mp = create_dp("resnet18", 25.0);
    if (plan_dp(&plan, &mp->program, XPB_PRECISION_FP16_MIXED, 2, 1, err) != XPB_OK)
        fail_msg("resnet18: %s", err);
    check_plan(plan, "resnet18 2 ranks fp16-mixed");
    assert_true(check_collectives(plan, "resnet18 2 ranks fp16-mixed") >= 1);
    cux_plan_free(plan);
    xpb_model_program_free(mp);
}

/* ALL_REDUCE of a tensor not stored in fp32 is refused by name. */
static void test_all_reduce_refusals(void **state)
{
    (void)state;
    xpb_model_program *mp = create_dp("conv6", 1.0);
    xpb_program *p = &mp->program;
    uint32_t ar = CUX_NONE, act_grad = CUX_NONE;
    for (uint32_t i = 0; i < p->n_ops && ar == CUX_NONE; i++)
        if (xpb_program_op(p, i)->kind == XPB_OP_ALL_REDUCE)
            ar = i;
    for (uint32_t t = 0; t < p->n_tensors && act_grad == CUX_NONE; t++)
        if (xpb_program_tensor(p, t)->role == XPB_ROLE_ACTIVATION_GRAD &&
            xpb_program_tensor(p, t)->dtype == XPB_DTYPE_F32)
            act_grad = t;
    assert_true(ar != CUX_NONE && act_grad != CUX_NONE);
    xpb_op *op = &mp->ops[ar];
    uint32_t grad = op->inputs[0];
    cux_plan *plan = NULL;
    char err[CUX_ERR_SIZE] = "";

    /* an activation's gradient, stored in fp16 under fp16-mixed */
    op->inputs[0] = act_grad;
    assert_int_equal(plan_dp(&plan, p, XPB_PRECISION_FP16_MIXED, 2, 1, err), XPB_UNSUPPORTED);
    assert_null(plan);
    assert_non_null(strstr(err, "ALL_REDUCE (layer "));
    assert_non_null(strstr(err, "stored in fp16"));
    /* the same tensor in fp32 storage is fine */
    if (plan_dp(&plan, p, XPB_PRECISION_FP32, 2, 1, err) != XPB_OK)
        fail_msg("activation gradient in fp32: %s", err);
    cux_plan_free(plan);
    plan = NULL;
    op->inputs[0] = grad;

    /* (an int32 ALL_REDUCE never reaches the planner's own check: shapes.h's rule, which
     * xpb_program_validate applies first, takes one F32 input) */
    xpb_model_program_free(mp);
}

/* NCCL's loader, versions, messages and wait limit; a rank's device. */
static void test_nccl_host_side(void **state)
{
    (void)state;
    cux_nccl_lib lib;
    char err[768] = "";
    /* no library: a sentence saying what is missing and how to get it */
    assert_int_equal(cux_nccl_load_from(&lib, "/nonexistent/libnccl.so.2", err, sizeof err),
                     XPB_UNSUPPORTED);
    assert_null(lib.handle);
    assert_non_null(strstr(err, "NCCL cannot be loaded"));
    assert_non_null(strstr(err, "/nonexistent/libnccl.so.2"));
    assert_non_null(strstr(err, "XPB_NCCL_LIBRARY"));
    /* a library that is not NCCL */
    assert_int_equal(cux_nccl_load_from(&lib, "libm.so.6", err, sizeof err), XPB_UNSUPPORTED);
    assert_non_null(strstr(err, "has no ncclGetVersion"));
    /* the process-wide NCCL, from $XPB_NCCL_LIBRARY: the failure is said again on every call */
    const cux_nccl_lib *got = (const cux_nccl_lib *)&lib;
    setenv("XPB_NCCL_LIBRARY", "/nonexistent/libnccl-for-test.so.2", 1);
    for (int k = 0; k < 2; k++) {
        err[0] = '\0';
        assert_int_equal(cux_nccl_get(&got, err, sizeof err), XPB_UNSUPPORTED);
        assert_null(got);
        assert_non_null(strstr(err, "libnccl-for-test.so.2"));
    }
    unsetenv("XPB_NCCL_LIBRARY");
#ifdef XPB_TEST_NCCL_LIBRARY
    /* the NCCL the build found: every entry point, its version (no GPU needed for these) */
    if (cux_nccl_load_from(&lib, XPB_TEST_NCCL_LIBRARY, err, sizeof err) != XPB_OK)
        fail_msg("%s: %s", XPB_TEST_NCCL_LIBRARY, err);
    assert_true(lib.version >= CUX_NCCL_MIN_VERSION);
    assert_true(lib.get_unique_id && lib.comm_init_rank && lib.comm_destroy && lib.comm_abort &&
                lib.comm_get_async_error && lib.all_reduce && lib.group_start && lib.group_end);
    assert_string_equal(lib.get_error_string(CUX_NCCL_SUCCESS), "no error");
    assert_int_equal(strncmp(lib.version_text, "2.", 2), 0);
    printf("NCCL found by the build: %s (%s)\n", lib.version_text, XPB_TEST_NCCL_LIBRARY);
#else
    printf("the build found no NCCL library: its loading was not checked\n");
#endif
    /* versions: the encoding changed at 2.9 */
    char v[32];
    cux_nccl_version_string(v, sizeof v, 2804);
    assert_string_equal(v, "2.8.4");
    cux_nccl_version_string(v, sizeof v, 20906);
    assert_string_equal(v, "2.9.6");
    cux_nccl_version_string(v, sizeof v, 22809);
    assert_string_equal(v, "2.28.9");
    /* messages: the op and its layer, the rank, the call, NCCL's words, where to look */
    char msg[CUX_ERR_SIZE];
    assert_int_equal(cux_nccl_message(msg, sizeof msg, "op 40 ALL_REDUCE (layer conv1)", 1, 2, 1,
                                      "ncclAllReduce",
                                      "remote process exited or there was a "
                                      "network error",
                                      "NET/Socket : peer closed connection"),
                     XPB_DEVICE_ERROR);
    assert_string_equal(msg, "op 40 ALL_REDUCE (layer conv1): rank 1 of 2 (device 1): "
                             "ncclAllReduce: remote process exited or there was a network "
                             "error: NET/Socket : peer closed connection (run with "
                             "NCCL_DEBUG=INFO for NCCL's own account)");
    cux_nccl_message(msg, sizeof msg, "compile", 0, 4, 0, "ncclCommInitRank",
                     "unhandled cuda error (run with NCCL_DEBUG=INFO for details)", NULL);
    assert_string_equal(msg, "compile: rank 0 of 4 (device 0): ncclCommInitRank: "
                             "unhandled cuda error (run with NCCL_DEBUG=INFO for details)");
    /* the wait limit: the host's XPB_DP_TIMEOUT */
    unsetenv("XPB_DP_TIMEOUT");
    assert_true(cux_nccl_timeout() == 900.0);
    setenv("XPB_DP_TIMEOUT", "30", 1);
    assert_true(cux_nccl_timeout() == 30.0);
    setenv("XPB_DP_TIMEOUT", "0", 1);
    assert_true(cux_nccl_timeout() < 0);
    setenv("XPB_DP_TIMEOUT", "soon", 1);
    assert_true(cux_nccl_timeout() == 900.0);
    unsetenv("XPB_DP_TIMEOUT");
    /* a rank's device: an explicit index stands; the default 0 spreads the local ranks */
    assert_int_equal(cux_rank_device(0, 0, 1, 4), 0); /* one rank per host */
    assert_int_equal(cux_rank_device(0, 1, 2, 2), 1); /* dp_check on 2 GPUs */
    assert_int_equal(cux_rank_device(0, 3, 4, 8), 3);
    assert_int_equal(cux_rank_device(3, 3, 4, 8), 3);  /* xpubench run: device 0 + local rank */
    assert_int_equal(cux_rank_device(5, 3, 4, 8), 5);  /* device: 2 + local rank 3 */
    assert_int_equal(cux_rank_device(0, 2, 4, 1), 0);  /* CUDA_VISIBLE_DEVICES per rank */
    assert_int_equal(cux_rank_device(0, 2, 4, 2), -1); /* 4 ranks, 2 GPUs: two would share */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_model),         cmocka_unit_test(test_fusion_vgg16),
        cmocka_unit_test(test_fusion_resnet18),     cmocka_unit_test(test_fusion_cyclegan),
        cmocka_unit_test(test_layouts_and_types),   cmocka_unit_test(test_reshape),
        cmocka_unit_test(test_loss_scaling),        cmocka_unit_test(test_loss_scaling_invisible),
        cmocka_unit_test(test_loss_scale_headroom), cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_engine_policies),     cmocka_unit_test(test_sticky_errors),
        cmocka_unit_test(test_memory_reuse),        cmocka_unit_test(test_peak),
        cmocka_unit_test(test_datasheet_bandwidth), cmocka_unit_test(test_reasons),
        cmocka_unit_test(test_tune_cache),          cmocka_unit_test(test_all_reduce),
        cmocka_unit_test(test_all_reduce_refusals), cmocka_unit_test(test_nccl_host_side),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
