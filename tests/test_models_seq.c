/* The sequence models, loaded from the build's plugin folder (the other models: test_models.c):
 * lstm (Zaremba et al.'s ptb-medium and ptb-large) and transformer (Vaswani et al.'s base as
 * torch.nn.Transformer, GPT-2 small as Hugging Face's GPT2LMHeadModel):
 * - parameter counts and FLOPs per sample of the four variants, against the values PyTorch
 *   gives (tests/torch/check_seq_models.py: named_parameters() and hooks);
 * - their layers, parameter shapes, initialisers, optimizers, losses and refused parameters;
 * - a tiny instance of each (small vocabulary, width, layers and sequence) builds a valid
 *   training and inference program (the SDK's xpb_program_validate, op set 3);
 * - the standard runs of docs/workloads.md have their scenario in configs/;
 * - a tiny instance of each model of issue 24 (AlexNet too) runs through the runner on cpu_ref
 *   with verify: true, and its loss falls over a few steps on the fixed synthetic batch. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugin/loader.h"
#include "program/builder.h"
#include "program/init.h"
#include "program/model_program.h"
#include "run/runner.h"
#include "run/session.h"
#include "scenario/scenario.h"
#include "check/verify.h"

#include "models_harness.h"

static int setup(void **state)
{
    (void)state;
    static const char *const models[3] = {"lstm", "transformer", "alexnet"};
    return mh_setup(models, 3);
}

/* ---- helpers (the others: models_harness.h) ---- */

/* The only op of `kind` (asserted to be one). */
static const xpb_op *only_op(const xpb_model_program *mp, uint32_t kind)
{
    assert_int_equal(count_ops(mp, kind), 1);
    for (uint32_t i = 0; i < mp->n_ops; i++)
        if (mp->ops[i].kind == kind)
            return &mp->ops[i];
    return NULL;
}

static void expect_valid(const xpb_model_program *mp, const char *what)
{
    char msg[1024];
    if (xpb_program_validate(&mp->program, msg, sizeof msg) != XPB_OK)
        fail_msg("%s: %s", what, msg);
    assert_int_equal(mp->program.opset, 3);
}

/* ---- counts ---- */

/* Parameters and FLOPs per sample (multiply-add = 2) from tests/torch/check_seq_models.py; a
 * training step is 3 x the forward pass (every matmul's input needs its gradient, and every
 * LSTM's: the first takes the embedding). GPT-2's sample is its default 1024 tokens. */
static void test_counts(void **state)
{
    (void)state;
    static const struct {
        const char *model, *variant;
        int64_t params, forward, tokens;
    } expect[] = {
        {"lstm", "ptb-medium", 19780400, 928200000, 35},
        {"lstm", "ptb-large", 66034000, 3570000000, 35},
        {"transformer", "base", 63084544, 16727932928, 128},
        {"transformer", "gpt2-small", 124439808, 291648307200, 1024},
    };
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
        xpb_run_config c = config(expect[i].model, expect[i].variant, 1, XPB_MODE_TRAIN, NULL);
        xpb_model_program *mp = create(&c);
        if (mp->param_count != expect[i].params || mp->flops_forward != expect[i].forward ||
            mp->flops_train != 3 * expect[i].forward)
            fail_msg("%s/%s: %lld parameters, %lld forward and %lld training FLOPs; expected "
                     "%lld, %lld, %lld",
                     expect[i].model, expect[i].variant, (long long)mp->param_count,
                     (long long)mp->flops_forward, (long long)mp->flops_train,
                     (long long)expect[i].params, (long long)expect[i].forward,
                     3 * (long long)expect[i].forward);
        /* tokens per sample: the sequence the model predicts (results' tokens_per_s) */
        assert_int_equal(mp->tokens, expect[i].tokens);
        assert_true(mp->bytes > 0);
        xpb_model_program_free(mp);
    }
    /* per sample whatever the batch; a sequence length changes FLOPs, not parameters */
    xpb_run_config c = config("lstm", "ptb-medium", 3, XPB_MODE_TRAIN, NULL);
    xpb_model_program *mp = create(&c);
    assert_int_equal(mp->flops_forward, 928200000);
    xpb_model_program_free(mp);
    c = config("transformer", "gpt2-small", 1, XPB_MODE_INFERENCE, "seq_len=512");
    mp = create(&c);
    assert_int_equal(mp->param_count, 124439808);
    assert_int_equal(mp->flops_forward, 512ll * 265938432);
    assert_int_equal(mp->tokens, 512); /* a prompt: its tokens */
    xpb_model_program_free(mp);
}

/* ---- structure ---- */

static void test_lstm(void **state)
{
    (void)state;
    xpb_run_config c = config("lstm", NULL, 2, XPB_MODE_TRAIN, NULL); /* default: ptb-medium */
    xpb_model_program *mp = create(&c);
    expect_shape(mp, "tokens", 2, 2ll, 35ll);
    expect_shape(mp, "targets", 2, 2ll, 35ll);
    expect_shape(mp, "tokens.seq_first", 2, 35ll, 2ll);
    expect_shape(mp, "encoder.weight", 2, 10000ll, 650ll);
    expect_shape(mp, "encoder", 3, 35ll, 2ll, 650ll);
    expect_shape(mp, "rnn.weight_ih_l0", 2, 2600ll, 650ll);
    expect_shape(mp, "rnn.weight_hh_l1", 2, 2600ll, 650ll);
    expect_shape(mp, "rnn.bias_ih_l1", 1, 2600ll);
    expect_shape(mp, "rnn.l1", 3, 35ll, 2ll, 650ll);
    expect_shape(mp, "batch_first", 3, 2ll, 35ll, 650ll);
    expect_shape(mp, "decoder.weight", 2, 10000ll, 650ll);
    expect_shape(mp, "decoder.seq", 3, 2ll, 35ll, 10000ll);
    assert_int_equal(count_ops(mp, XPB_OP_LSTM), 2);
    assert_int_equal(count_ops(mp, XPB_OP_LSTM_BWD), 2);
    assert_int_equal(count_ops(mp, XPB_OP_DROPOUT), 3);
    assert_int_equal(count_ops(mp, XPB_OP_SGD_UPDATE), 11);
    for (uint32_t i = 0; i < mp->n_ops; i++) {
        const xpb_op *op = &mp->ops[i];
        if (op->kind == XPB_OP_DROPOUT)
            assert_true(fabsf(op->attrs.dropout_p - 0.5f) < 1e-7f);
        if (op->kind == XPB_OP_SGD_UPDATE)
            assert_true(op->attrs.lr == 1.0f && op->attrs.momentum == 0.0f);
    }
    assert_true(fabsf(only_op(mp, XPB_OP_CLIP_GRAD_NORM)->max_norm - 5.0f) < 1e-6f);
    assert_int_equal(mp->n_losses, 1);
    assert_true(mp->losses[0].weight == 35.0); /* the sum over the 35 steps, as the paper */
    double mean, std, maxabs;
    init_stats(mp, "rnn.weight_hh_l0", &mean, &std, &maxabs);
    assert_true(maxabs <= 0.05 && fabs(std / (0.05 / sqrt(3.0)) - 1) < 0.01);
    xpb_model_program_free(mp);

    c = config("lstm", "ptb-large", 2, XPB_MODE_TRAIN, NULL);
    mp = create(&c);
    expect_shape(mp, "rnn.weight_ih_l1", 2, 6000ll, 1500ll);
    for (uint32_t i = 0; i < mp->n_ops; i++)
        if (mp->ops[i].kind == XPB_OP_DROPOUT)
            assert_true(fabsf(mp->ops[i].attrs.dropout_p - 0.65f) < 1e-7f);
    init_stats(mp, "decoder.bias", &mean, &std, &maxabs);
    assert_true(maxabs <= 0.04 && maxabs > 0.039);
    xpb_model_program_free(mp);

    c = config("lstm", "ptb-large", 2, XPB_MODE_INFERENCE, NULL);
    mp = create(&c);
    assert_int_equal(count_ops(mp, XPB_OP_DROPOUT), 0);
    assert_int_equal(count_ops(mp, XPB_OP_LSTM_BWD), 0);
    xpb_model_program_free(mp);
    c = config("lstm", "ptb-medium", 2, XPB_MODE_TRAIN, "dropout=0 layers=3 hidden=8 vocab=20");
    mp = create(&c);
    assert_int_equal(count_ops(mp, XPB_OP_DROPOUT), 0);
    assert_int_equal(count_ops(mp, XPB_OP_LSTM), 3);
    expect_shape(mp, "rnn.weight_ih_l2", 2, 32ll, 8ll);
    assert_int_equal(mp->param_count, 20 * 8 + 3 * (32 * 16 + 64) + 8 * 20 + 20);
    xpb_model_program_free(mp);

    char msg[1024];
    assert_int_equal(build_status("lstm", "ptb-small", NULL, msg, sizeof msg),
                     XPB_INVALID_ARGUMENT);
    assert_int_equal(build_status("lstm", NULL, "seq_len=0", msg, sizeof msg),
                     XPB_INVALID_ARGUMENT);
    assert_int_equal(build_status("lstm", NULL, "dropout=1", msg, sizeof msg),
                     XPB_INVALID_ARGUMENT);
}

/* Counts ops of `kind` whose layer contains `part`. */
static int count_layer_ops(const xpb_model_program *mp, uint32_t kind, const char *part)
{
    int c = 0;
    for (uint32_t i = 0; i < mp->n_ops; i++)
        c += mp->ops[i].kind == kind && strstr(mp->ops[i].layer, part) != NULL;
    return c;
}

static void test_transformer_base(void **state)
{
    (void)state;
    xpb_run_config c = config("transformer", NULL, 2, XPB_MODE_TRAIN, NULL); /* default: base */
    xpb_model_program *mp = create(&c);
    expect_shape(mp, "src", 2, 2ll, 128ll);
    expect_shape(mp, "embedding.weight", 2, 37000ll, 512ll);
    expect_shape(mp, "positions.table", 2, 128ll, 512ll);
    expect_shape(mp, "src.rows", 2, 256ll, 512ll);
    expect_shape(mp, "transformer.encoder.layers.0.self_attn.in_proj_weight", 2, 1536ll, 512ll);
    expect_shape(mp, "transformer.encoder.layers.0.self_attn.in_proj", 2, 256ll, 1536ll);
    expect_shape(mp, "transformer.encoder.layers.5.self_attn.q", 4, 2ll, 8ll, 128ll, 64ll);
    expect_shape(mp, "transformer.encoder.layers.5.self_attn.scores", 4, 2ll, 8ll, 128ll, 128ll);
    expect_shape(mp, "transformer.decoder.layers.3.multihead_attn.w_kv", 2, 1024ll, 512ll);
    expect_shape(mp, "transformer.decoder.layers.3.multihead_attn.v", 4, 2ll, 8ll, 128ll, 64ll);
    expect_shape(mp, "transformer.decoder.layers.5.norm3.weight", 1, 512ll);
    expect_shape(mp, "transformer.decoder.norm.bias", 1, 512ll);
    expect_shape(mp, "logits", 3, 2ll, 128ll, 37000ll);
    assert_int_equal(find(mp, "generator.weight"), XPB_NO_TENSOR); /* tied */
    assert_int_equal(count_ops(mp, XPB_OP_LAYER_NORM), 6 * 2 + 6 * 3 + 2);
    assert_int_equal(count_ops(mp, XPB_OP_BATCHED_MATMUL), 2 * 18);
    assert_int_equal(count_ops(mp, XPB_OP_SOFTMAX), 18);
    assert_int_equal(count_ops(mp, XPB_OP_ADAM_UPDATE), 185);
    for (uint32_t i = 0; i < mp->n_ops; i++) {
        const xpb_op *op = &mp->ops[i];
        if (op->kind == XPB_OP_SOFTMAX) {
            /* causal exactly in the decoder's self-attention */
            int dec_self = strstr(op->layer, "decoder") && strstr(op->layer, "self_attn");
            assert_int_equal(op->causal, dec_self ? 1 : 0);
            assert_true(fabsf(op->attrs.scale - 0.125f) < 1e-7f);
        }
        if (op->kind == XPB_OP_ADAM_UPDATE)
            assert_true(op->attrs.beta1 == 0.9f && op->attrs.beta2 == 0.98f &&
                        op->attrs.eps == 1e-9f && fabsf(op->attrs.lr - 6.988e-4f) < 1e-6f);
        if (op->kind == XPB_OP_DROPOUT)
            assert_true(fabsf(op->attrs.dropout_p - 0.1f) < 1e-7f);
    }
    assert_int_equal(count_layer_ops(mp, XPB_OP_SOFTMAX, "decoder.layers.0.self_attn"), 1);
    assert_true(fabsf(only_op(mp, XPB_OP_SOFTMAX_XENT)->label_smoothing - 0.1f) < 1e-7f);
    assert_int_equal(count_ops(mp, XPB_OP_CLIP_GRAD_NORM), 0);
    /* the paper's positions: PE(1, 0) = sin 1, PE(1, 1) = cos 1, PE(2, 2) = sin(2 / 10000^(2/512))
     */
    uint32_t pe = find(mp, "positions.table");
    float *table = malloc(128 * 512 * sizeof *table);
    assert_non_null(table);
    assert_int_equal(xpb_model_program_initial_value(mp, pe, table), XPB_OK);
    assert_true(fabsf(table[512] - (float)sin(1.0)) < 1e-7f);
    assert_true(fabsf(table[513] - (float)cos(1.0)) < 1e-7f);
    assert_true(fabsf(table[1024 + 2] - (float)sin(2.0 / pow(10000.0, 2.0 / 512))) < 1e-7f);
    free(table);
    double mean, std, maxabs;
    init_stats(mp, "embedding.weight", &mean, &std, &maxabs); /* N(0, 512^-1/2) */
    assert_true(fabs(std * sqrt(512.0) - 1) < 0.01);
    init_stats(mp, "transformer.encoder.layers.2.self_attn.in_proj_weight", &mean, &std, &maxabs);
    assert_true(maxabs <= sqrt(6.0 / 2048) && fabs(std / sqrt(2.0 / 2048) - 1) < 0.01);
    init_stats(mp, "transformer.decoder.layers.1.multihead_attn.out_proj.bias", &mean, &std,
               &maxabs);
    assert_true(maxabs == 0);
    init_stats(mp, "transformer.decoder.layers.1.linear2.bias", &mean, &std, &maxabs);
    assert_true(maxabs <= 1 / sqrt(2048.0) && maxabs > 0.9 / sqrt(2048.0));
    xpb_model_program_free(mp);

    c = config("transformer", "base", 2, XPB_MODE_INFERENCE, "seq_len=16");
    mp = create(&c);
    assert_int_equal(count_ops(mp, XPB_OP_DROPOUT), 0);
    assert_int_equal(mp->param_count, 63084544);
    xpb_model_program_free(mp);
}

static void test_gpt2(void **state)
{
    (void)state;
    xpb_run_config c = config("transformer", "gpt2-small", 2, XPB_MODE_TRAIN, "seq_len=64");
    xpb_model_program *mp = create(&c);
    expect_shape(mp, "tokens", 2, 2ll, 64ll);
    expect_shape(mp, "transformer.wte.weight", 2, 50257ll, 768ll);
    expect_shape(mp, "transformer.wpe.weight", 2, 1024ll, 768ll);
    expect_shape(mp, "transformer.wpe", 2, 64ll, 768ll);
    expect_shape(mp, "transformer.h.0.attn.c_attn.weight", 2, 768ll, 2304ll);
    expect_shape(mp, "transformer.h.0.attn.c_attn", 2, 128ll, 2304ll);
    expect_shape(mp, "transformer.h.11.attn.k", 4, 2ll, 12ll, 64ll, 64ll);
    expect_shape(mp, "transformer.h.11.mlp.c_proj.weight", 2, 3072ll, 768ll);
    expect_shape(mp, "transformer.ln_f.weight", 1, 768ll);
    expect_shape(mp, "logits", 3, 2ll, 64ll, 50257ll);
    assert_int_equal(find(mp, "lm_head.weight"), XPB_NO_TENSOR); /* tied to wte */
    assert_int_equal(count_ops(mp, XPB_OP_MATMUL), 4 * 12 + 1);
    assert_int_equal(count_ops(mp, XPB_OP_SOFTMAX), 12);
    assert_int_equal(count_ops(mp, XPB_OP_ADAMW_UPDATE), 148);
    for (uint32_t i = 0; i < mp->n_ops; i++) {
        const xpb_op *op = &mp->ops[i];
        if (op->kind == XPB_OP_SOFTMAX)
            assert_int_equal(op->causal, 1);
        if (op->kind == XPB_OP_GELU || op->kind == XPB_OP_GELU_BWD)
            assert_int_equal(op->approximate, XPB_GELU_TANH);
        if (op->kind == XPB_OP_ADAMW_UPDATE)
            assert_true(op->attrs.beta2 == 0.95f && op->attrs.weight_decay == 0.1f &&
                        op->attrs.lr == 6e-4f && op->attrs.eps == 1e-8f);
    }
    assert_int_equal(count_ops(mp, XPB_OP_GELU), 12);
    assert_true(fabsf(only_op(mp, XPB_OP_CLIP_GRAD_NORM)->max_norm - 1.0f) < 1e-6f);
    assert_true(only_op(mp, XPB_OP_SOFTMAX_XENT)->label_smoothing == 0.0f);
    double mean, std, maxabs;
    init_stats(mp, "transformer.h.3.attn.c_attn.weight", &mean, &std, &maxabs);
    assert_true(fabs(std / 0.02 - 1) < 0.01);
    init_stats(mp, "transformer.h.3.mlp.c_proj.weight", &mean, &std, &maxabs);
    assert_true(fabs(std / (0.02 / sqrt(24.0)) - 1) < 0.01);
    init_stats(mp, "transformer.h.3.attn.c_attn.bias", &mean, &std, &maxabs);
    assert_true(maxabs == 0);
    xpb_model_program_free(mp);

    char msg[1024];
    assert_int_equal(build_status("transformer", "gpt2-small", "seq_len=1025", msg, sizeof msg),
                     XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(msg, "1024"));
    assert_int_equal(build_status("transformer", "base", "context=8", msg, sizeof msg),
                     XPB_INVALID_ARGUMENT);
    assert_int_equal(build_status("transformer", "base", "d_model=20 heads=3", msg, sizeof msg),
                     XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(msg, "heads"));
    assert_int_equal(build_status("transformer", "gpt3", NULL, msg, sizeof msg),
                     XPB_INVALID_ARGUMENT);
}

/* ---- tiny instances ---- */

/* Small enough for the reference backend in well under a second a step. */
static const struct tiny {
    const char *model, *variant, *params;
    uint32_t batch;
} tiny[] = {
    {"lstm", "ptb-medium", "seq_len=5 vocab=50 hidden=12", 2},
    {"lstm", "ptb-large", "seq_len=4 vocab=30 hidden=8 layers=3", 3},
    {"transformer", "base", "seq_len=6 vocab=40 d_model=16 heads=2 layers=2 d_ff=24", 2},
    {"transformer", "gpt2-small", "seq_len=6 vocab=40 d_model=16 heads=4 layers=2 context=8", 2},
    {"alexnet", "imagenet", "image_size=64 fc_width=32 num_classes=10", 2},
};
#define N_TINY (sizeof tiny / sizeof tiny[0])

static void test_tiny_programs(void **state)
{
    (void)state;
    static const uint32_t modes[2] = {XPB_MODE_TRAIN, XPB_MODE_INFERENCE};
    for (size_t k = 0; k < N_TINY; k++)
        for (int m = 0; m < 2; m++) {
            xpb_run_config c =
                config(tiny[k].model, tiny[k].variant, tiny[k].batch, modes[m], tiny[k].params);
            xpb_model_program *mp = create(&c);
            char what[256];
            snprintf(what, sizeof what, "%s/%s %s (%s)", tiny[k].model, tiny[k].variant,
                     tiny[k].params, m == 0 ? "training" : "inference");
            expect_valid(mp, what);
            assert_true(mp->flops_forward > 0);
            if (m == 0)
                assert_true(mp->flops_train > 2 * mp->flops_forward);
            xpb_model_program_free(mp);
        }
}

/* ---- shipped scenarios ---- */

/* The standard runs of docs/workloads.md for the sequence models: one scenario each, the
 * published architecture (GPT-2's runs set only seq_len, which changes no parameter). */
static void test_standard_scenarios(void **state)
{
    (void)state;
    static const struct {
        const char *file, *model, *variant;
        uint32_t mode, batch;
        const char *seq_len; /* the only parameter set, or NULL */
    } standard[] = {
        {"lstm-ptb-medium-train", "lstm", "ptb-medium", XPB_MODE_TRAIN, 20, NULL},
        {"lstm-ptb-large-train", "lstm", "ptb-large", XPB_MODE_TRAIN, 20, NULL},
        {"transformer-base-train", "transformer", "base", XPB_MODE_TRAIN, 16, NULL},
        {"gpt2-small-train", "transformer", "gpt2-small", XPB_MODE_TRAIN, 4, "512"},
        {"gpt2-small-infer-b1", "transformer", "gpt2-small", XPB_MODE_INFERENCE, 1, "512"},
    };
    for (size_t i = 0; i < sizeof standard / sizeof standard[0]; i++) {
        const xpb_run_config *c;
        xpb_scenario *s = standard_run(&c, standard[i].file, standard[i].model, standard[i].variant,
                                       standard[i].mode, standard[i].batch);
        assert_true(isnan(c->lr)); /* the model's own optimizer */
        if (!standard[i].seq_len) {
            assert_int_equal(c->n_params, 0);
        } else {
            assert_int_equal(c->n_params, 1);
            assert_string_equal(c->params[0].key, "seq_len");
            assert_string_equal(c->params[0].value, standard[i].seq_len);
        }
        xpb_err err = {{0}};
        const xpb_model_api *m = xpb_registry_model(registry, c->model);
        if (xpb_model_params_check(m, c->model, c->variant, c->params, c->n_params, &err))
            fail_msg("%s: %s", standard[i].file, err.msg);
        xpb_scenario_free(s);
    }
}

/* ---- running on the reference backend ---- */

/* Each tiny instance through the runner, as `xpubench run` with verify: true runs it: the first
 * step on cpu_ref checked against cpu_ref (the same program twice: deterministic kernels and
 * dropout masks), then three timed steps; the run must end "ok" and verified. */
static void test_tiny_runs_verified(void **state)
{
    (void)state;
    for (size_t k = 0; k < N_TINY; k++) {
        xpb_run_config c =
            config(tiny[k].model, tiny[k].variant, tiny[k].batch, XPB_MODE_TRAIN, tiny[k].params);
        c.id = (char *)tiny[k].model;
        c.data = "synthetic";
        c.min_steps = 3;
        c.repeats = 1;
        c.verify = 1;
        xpb_runner_opts ro = {.label = c.id, .verify_step = xpb_verify_step};
        json_t *res = xpb_run_one(registry, &c, &ro);
        assert_non_null(res);
        const char *status = json_string_value(json_object_get(res, "status"));
        if (!status || strcmp(status, "ok") != 0)
            fail_msg("%s/%s %s: %s: %s", tiny[k].model, tiny[k].variant, tiny[k].params,
                     status ? status : "?", json_string_value(json_object_get(res, "message")));
        json_t *v = json_object_get(res, "verification");
        assert_true(json_is_true(json_object_get(v, "verified")));
        /* the LSTMs clip at 5 (Zaremba et al.), GPT-2 at 1, the others do not clip: the results
         * say so */
        json_t *clip = json_object_get(json_object_get(json_object_get(res, "config"), "optimizer"),
                                       "clip_grad_norm");
        if (strcmp(tiny[k].model, "lstm") == 0)
            assert_true(json_real_value(clip) == 5.0);
        else if (strcmp(tiny[k].variant, "gpt2-small") == 0)
            assert_true(json_real_value(clip) == 1.0);
        else
            assert_null(clip);
        printf("  %s/%s %s: %s\n", tiny[k].model, tiny[k].variant, tiny[k].params,
               json_string_value(json_object_get(v, "message")));
        json_decref(res);
    }
}

/* Five steps on the one synthetic batch: every loss finite, and the last below the first. */
static void test_tiny_losses_fall(void **state)
{
    (void)state;
    const xpb_backend_api *ref = xpb_registry_backend(registry, "cpu_ref");
    for (size_t k = 0; k < N_TINY; k++) {
        xpb_run_config c =
            config(tiny[k].model, tiny[k].variant, tiny[k].batch, XPB_MODE_TRAIN, tiny[k].params);
        xpb_model_program *mp = create(&c);
        xpb_session s;
        xpb_err err = {{0}};
        xpb_compile_options o = {.struct_size = sizeof o, .precision = XPB_PRECISION_FP32};
        if (xpb_session_open(&s, ref, 0, mp, &o, &err) != XPB_OK)
            fail_msg("%s: %s", tiny[k].model, err.msg);
        enum { STEPS = 5 };
        double loss[STEPS];
        printf("  %s/%s %s: loss", tiny[k].model, tiny[k].variant, tiny[k].params);
        for (int i = 0; i < STEPS; i++) {
            if (xpb_session_step(&s, NULL, &err) != XPB_OK)
                fail_msg("%s step %d: %s", tiny[k].model, i, err.msg);
            assert_int_equal(xpb_session_loss(&loss[i], &s, 0, &err), XPB_OK);
            printf(" %.5f", loss[i]);
            if (!isfinite(loss[i]))
                fail_msg("%s/%s step %d: loss %g", tiny[k].model, tiny[k].variant, i, loss[i]);
        }
        printf("\n");
        if (!(loss[STEPS - 1] < loss[0]))
            fail_msg("%s/%s: the loss does not fall (%g -> %g)", tiny[k].model, tiny[k].variant,
                     loss[0], loss[STEPS - 1]);
        xpb_session_close(&s);
        xpb_model_program_free(mp);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts),
        cmocka_unit_test(test_lstm),
        cmocka_unit_test(test_transformer_base),
        cmocka_unit_test(test_gpt2),
        cmocka_unit_test(test_tiny_programs),
        cmocka_unit_test(test_standard_scenarios),
        cmocka_unit_test(test_tiny_runs_verified),
        cmocka_unit_test(test_tiny_losses_fall),
    };
    return cmocka_run_group_tests(tests, setup, mh_teardown);
}
