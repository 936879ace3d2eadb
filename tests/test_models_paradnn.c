/* ParaDnn's families (plugins/model_paradnn), loaded from the build's plugin folder:
 * - parameter counts and FLOPs per sample of each family against hand counts (the formulas in
 *   the comments; fc's is ParaDnn's own fc.py count), at the defaults and elsewhere;
 * - their layers, shapes, op counts, initialisers, optimizer and losses; the refusal of a
 *   parameter of another family;
 * - tiny instances of each family (both blocks, both cells) build valid training and inference
 *   programs, run verified through the runner on cpu_ref, and their loss falls. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "check/verify.h"
#include "plugin/loader.h"
#include "program/builder.h"
#include "program/init.h"
#include "program/model_program.h"
#include "run/runner.h"
#include "run/session.h"
#include "scenario/scenario.h"

#include "models_harness.h"

static int setup(void **state)
{
    (void)state;
    static const char *const models[1] = {"paradnn"};
    return mh_setup(models, 1);
}

/* ---- counts ---- */

/* Training FLOPs are 3 x forward less the backward-data of the first layer, whose input needs no
 * gradient (fc, cnn); the rnn family's first op is the embedding, so every matmul and LSTM has
 * its data gradient: 3 x forward. */
static void test_counts(void **state)
{
    (void)state;
    static const struct {
        const char *variant, *params;
        int64_t parameters, forward, train;
    } expect[] = {
        /* fc: in x n + n + (L - 1)(n^2 + n) + n x out + out; 2(in n + (L - 1) n^2 + n out) */
        {"fc", NULL, 6222824, 12435456, 3 * 12435456ll - 2 * 2000 * 1024},
        {"fc", "layers=2 nodes=64 input=20 output=10", 6154, 12032, 3 * 12032 - 2 * 20 * 64},
        /* cnn residual, 1 block, 16 filters, 200 px: stem 7x7x3x16 + BN, then per group g of
         * f = 16 x 2^(g-1): projection 1x1 + BN, two 3x3 + BN; fc 128 -> 1000. Sizes 100 (stem),
         * 50 (pool, group 1), 25, 13, 7. */
        {"cnn", NULL, 438744, 131397120, 347151360},
        /* bottleneck, 2 blocks, 16 filters, 100 px: widths 64, 128, 256, 512 out */
        {"cnn", "block=bottleneck blocks=2 image=100", 1392184, 80852864, 230798592},
        /* rnn lstm: V E + L (8 E^2 + 8 E) + E V + V; 2 S (L 8 E^2 + E V) */
        {"rnn", NULL, 286624, 18240000, 3 * 18240000ll},
        /* rnn plain: V E + L (2 E^2 + E) + E V + V; 2 E^2 (S + S - 1) L + 2 S E V */
        {"rnn", "cell=rnn", 225924, 12220000, 3 * 12220000ll},
        {"rnn", "cell=rnn layers=2 embedding=16 seq_len=5 vocab=30", 2046, 14016, 3 * 14016},
    };
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
        xpb_run_config c =
            config("paradnn", expect[i].variant, 1, XPB_MODE_TRAIN, expect[i].params);
        xpb_model_program *mp = create(&c);
        if (mp->param_count != expect[i].parameters || mp->flops_forward != expect[i].forward ||
            mp->flops_train != expect[i].train)
            fail_msg("paradnn/%s %s: %lld parameters, %lld forward and %lld training FLOPs; "
                     "expected %lld, %lld, %lld",
                     expect[i].variant, expect[i].params ? expect[i].params : "",
                     (long long)mp->param_count, (long long)mp->flops_forward,
                     (long long)mp->flops_train, (long long)expect[i].parameters,
                     (long long)expect[i].forward, (long long)expect[i].train);
        assert_true(mp->bytes > 0);
        xpb_model_program_free(mp);
    }
}

/* ---- structure ---- */

static void test_fc(void **state)
{
    (void)state;
    xpb_run_config c = config("paradnn", NULL, 3, XPB_MODE_TRAIN, NULL); /* default: fc */
    xpb_model_program *mp = create(&c);
    expect_shape(mp, "inputs", 2, 3ll, 2000ll);
    expect_shape(mp, "fc_0.weight", 2, 1024ll, 2000ll);
    expect_shape(mp, "fc_3.weight", 2, 1024ll, 1024ll);
    expect_shape(mp, "fc_4.weight", 2, 1000ll, 1024ll);
    expect_shape(mp, "fc_4", 2, 3ll, 1000ll);
    assert_int_equal(count_ops(mp, XPB_OP_LINEAR), 5);
    assert_int_equal(count_ops(mp, XPB_OP_RELU), 4);
    assert_int_equal(count_ops(mp, XPB_OP_SGD_UPDATE), 10);
    for (uint32_t i = 0; i < mp->n_ops; i++)
        if (mp->ops[i].kind == XPB_OP_SGD_UPDATE)
            assert_true(fabsf(mp->ops[i].attrs.lr - 0.1f) < 1e-7f &&
                        fabsf(mp->ops[i].attrs.momentum - 0.9f) < 1e-7f);
    double mean, std, maxabs;
    init_stats(mp, "fc_0.weight", &mean, &std, &maxabs); /* glorot: U(+-sqrt(6 / 3024)) */
    assert_true(maxabs <= sqrt(6.0 / 3024) && fabs(std / sqrt(2.0 / 3024) - 1) < 0.01);
    init_stats(mp, "fc_2.bias", &mean, &std, &maxabs);
    assert_true(maxabs == 0);
    xpb_model_program_free(mp);
}

static void test_cnn(void **state)
{
    (void)state;
    xpb_run_config c = config("paradnn", "cnn", 2, XPB_MODE_TRAIN, "blocks=2 filters=8 image=64");
    xpb_model_program *mp = create(&c);
    expect_shape(mp, "images", 4, 2ll, 3ll, 64ll, 64ll);
    expect_shape(mp, "initial_conv", 4, 2ll, 8ll, 32ll, 32ll);
    expect_shape(mp, "initial_max_pool", 4, 2ll, 8ll, 16ll, 16ll);
    expect_shape(mp, "group1.block0.proj_conv.weight", 4, 8ll, 8ll, 1ll, 1ll);
    expect_shape(mp, "group1.block1.relu", 4, 2ll, 8ll, 16ll, 16ll);
    expect_shape(mp, "group2.block0.a_conv", 4, 2ll, 16ll, 8ll, 8ll);
    expect_shape(mp, "group4.block1.relu", 4, 2ll, 64ll, 2ll, 2ll);
    expect_shape(mp, "final_dense.weight", 2, 1000ll, 64ll);
    assert_int_equal(find(mp, "group2.block1.proj_conv.weight"), XPB_NO_TENSOR);
    /* stem + 4 groups x (2 blocks x 2 convs + 1 projection) */
    assert_int_equal(count_ops(mp, XPB_OP_CONV2D), 1 + 4 * 5);
    assert_int_equal(count_ops(mp, XPB_OP_BATCHNORM_TRAIN), 1 + 4 * 5);
    double mean, std, maxabs;
    init_stats(mp, "group3.block1.b_conv.weight", &mean, &std, &maxabs); /* N(0, 1/(32 x 9)) */
    assert_true(fabs(std * sqrt(32.0 * 9) - 1) < 0.02);
    xpb_model_program_free(mp);
    c = config("paradnn", "cnn", 2, XPB_MODE_INFERENCE, "blocks=2 filters=8 image=64");
    mp = create(&c);
    assert_int_equal(count_ops(mp, XPB_OP_ADD), 8); /* a residual sum per block */
    xpb_model_program_free(mp);

    c = config("paradnn", "cnn", 2, XPB_MODE_TRAIN, "block=bottleneck filters=4 image=32");
    mp = create(&c);
    expect_shape(mp, "group1.block0.c_conv.weight", 4, 16ll, 4ll, 1ll, 1ll);
    expect_shape(mp, "group4.block0.relu", 4, 2ll, 128ll, 1ll, 1ll);
    expect_shape(mp, "final_dense.weight", 2, 1000ll, 128ll);
    assert_int_equal(count_ops(mp, XPB_OP_CONV2D), 1 + 4 * 4);
    xpb_model_program_free(mp);
}

static void test_rnn(void **state)
{
    (void)state;
    xpb_run_config c = config("paradnn", "rnn", 2, XPB_MODE_TRAIN, "layers=2");
    xpb_model_program *mp = create(&c);
    expect_shape(mp, "tokens", 2, 2ll, 50ll);
    expect_shape(mp, "embeddings", 2, 1024ll, 100ll);
    expect_shape(mp, "rnn.weight_hh_l1", 2, 400ll, 100ll);
    expect_shape(mp, "rnn.l1", 3, 50ll, 2ll, 100ll);
    expect_shape(mp, "decoder.seq", 3, 2ll, 50ll, 1024ll);
    assert_int_equal(count_ops(mp, XPB_OP_LSTM), 2);
    assert_int_equal(count_ops(mp, XPB_OP_LSTM_BWD), 2);
    assert_int_equal(mp->tokens, 50);
    xpb_model_program_free(mp);

    c = config("paradnn", "rnn", 2, XPB_MODE_TRAIN, "cell=rnn layers=3 seq_len=4 embedding=8");
    mp = create(&c);
    expect_shape(mp, "tokens.3", 1, 2ll);
    expect_shape(mp, "rnn.w_h_l2", 2, 8ll, 8ll);
    expect_shape(mp, "rnn.l2.t3.tanh", 2, 2ll, 8ll);
    expect_shape(mp, "decoder.t0", 2, 2ll, 1024ll);
    /* 4 steps x 3 layers: an x product each, an h product from step 1 on */
    assert_int_equal(count_ops(mp, XPB_OP_MATMUL), 4 * 3 + 3 * 3);
    assert_int_equal(count_ops(mp, XPB_OP_TANH), 12);
    assert_int_equal(count_ops(mp, XPB_OP_SOFTMAX_XENT), 4);
    assert_int_equal(mp->n_losses, 4);
    assert_true(fabs(mp->losses[0].weight - 0.25) < 1e-12);
    assert_int_equal(mp->tokens, 0); /* no [N, S] token input */
    double mean, std, maxabs;
    init_stats(mp, "rnn.w_x_l0", &mean, &std, &maxabs); /* glorot of the [16, 8] kernel */
    assert_true(maxabs <= sqrt(6.0 / 24));
    xpb_model_program_free(mp);
}

static void test_refusals(void **state)
{
    (void)state;
    char msg[1024];
    assert_int_equal(build_status("paradnn", "cnn", "nodes=64", msg, sizeof msg),
                     XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(msg, "'nodes' does not apply to variant cnn"));
    assert_int_equal(build_status("paradnn", "cnn", "layers=3", msg, sizeof msg),
                     XPB_INVALID_ARGUMENT);
    assert_int_equal(build_status("paradnn", "fc", "cell=rnn", msg, sizeof msg),
                     XPB_INVALID_ARGUMENT);
    assert_int_equal(build_status("paradnn", "rnn", "output=10", msg, sizeof msg),
                     XPB_INVALID_ARGUMENT);
    assert_int_equal(build_status("paradnn", "mlp", NULL, msg, sizeof msg), XPB_INVALID_ARGUMENT);
    assert_int_equal(build_status("paradnn", "cnn", "image=16", msg, sizeof msg),
                     XPB_INVALID_ARGUMENT);
    /* a parameter at its default is no refusal: a sweep over the variant stays possible */
    assert_int_equal(
        build_status("paradnn", "cnn", "nodes=1024 cell=lstm image=32", msg, sizeof msg), XPB_OK);
}

/* ---- tiny instances ---- */

static const struct tiny {
    const char *variant, *params;
    uint32_t batch;
} tiny[] = {
    {"fc", "layers=2 nodes=16 input=12 output=5", 4},
    {"cnn", "filters=2 image=32 output=5", 2},
    {"cnn", "block=bottleneck blocks=2 filters=2 image=32 output=5", 2},
    {"rnn", "embedding=6 seq_len=4 vocab=12 layers=2", 2},
    {"rnn", "cell=rnn embedding=6 seq_len=4 vocab=12 layers=2", 2},
};
#define N_TINY (sizeof tiny / sizeof tiny[0])

static void test_tiny_programs(void **state)
{
    (void)state;
    static const uint32_t modes[2] = {XPB_MODE_TRAIN, XPB_MODE_INFERENCE};
    for (size_t k = 0; k < N_TINY; k++)
        for (int m = 0; m < 2; m++) {
            xpb_run_config c =
                config("paradnn", tiny[k].variant, tiny[k].batch, modes[m], tiny[k].params);
            xpb_model_program *mp = create(&c);
            char msg[1024];
            if (xpb_program_validate(&mp->program, msg, sizeof msg) != XPB_OK)
                fail_msg("paradnn/%s %s: %s", tiny[k].variant, tiny[k].params, msg);
            assert_true(mp->flops_forward > 0);
            xpb_model_program_free(mp);
        }
}

/* Each tiny instance through the runner with verify: true (cpu_ref against cpu_ref), then five
 * steps on the one synthetic batch at lr 0.01 (ParaDnn's 0.1 with momentum 0.9 overshoots on
 * these tiny models within five steps): every loss finite and the last below the first. */
static void test_tiny_runs(void **state)
{
    (void)state;
    const xpb_backend_api *ref = xpb_registry_backend(registry, "cpu_ref");
    for (size_t k = 0; k < N_TINY; k++) {
        xpb_run_config c =
            config("paradnn", tiny[k].variant, tiny[k].batch, XPB_MODE_TRAIN, tiny[k].params);
        c.id = "paradnn";
        c.data = "synthetic";
        c.min_steps = 2;
        c.repeats = 1;
        c.verify = 1;
        xpb_runner_opts ro = {.label = c.id, .verify_step = xpb_verify_step};
        json_t *res = xpb_run_one(registry, &c, &ro);
        assert_non_null(res);
        const char *status = json_string_value(json_object_get(res, "status"));
        if (!status || strcmp(status, "ok") != 0)
            fail_msg("paradnn/%s %s: %s: %s", tiny[k].variant, tiny[k].params,
                     status ? status : "?", json_string_value(json_object_get(res, "message")));
        assert_true(
            json_is_true(json_object_get(json_object_get(res, "verification"), "verified")));
        json_decref(res);

        c.lr = 0.01;
        xpb_model_program *mp = create(&c);
        xpb_session s;
        xpb_err err = {{0}};
        xpb_compile_options o = {.struct_size = sizeof o, .precision = XPB_PRECISION_FP32};
        if (xpb_session_open(&s, ref, 0, mp, &o, &err) != XPB_OK)
            fail_msg("paradnn/%s: %s", tiny[k].variant, err.msg);
        double first = NAN, last = NAN;
        for (int i = 0; i < 5; i++) {
            if (xpb_session_step(&s, NULL, &err) != XPB_OK)
                fail_msg("paradnn/%s step %d: %s", tiny[k].variant, i, err.msg);
            assert_int_equal(xpb_session_loss(&last, &s, 0, &err), XPB_OK);
            assert_true(isfinite(last));
            if (i == 0)
                first = last;
        }
        printf("  paradnn/%s %s: loss %.5f -> %.5f\n", tiny[k].variant, tiny[k].params, first,
               last);
        if (!(last < first))
            fail_msg("paradnn/%s %s: the loss does not fall (%g -> %g)", tiny[k].variant,
                     tiny[k].params, first, last);
        xpb_session_close(&s);
        xpb_model_program_free(mp);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts),    cmocka_unit_test(test_fc),
        cmocka_unit_test(test_cnn),       cmocka_unit_test(test_rnn),
        cmocka_unit_test(test_refusals),  cmocka_unit_test(test_tiny_programs),
        cmocka_unit_test(test_tiny_runs),
    };
    return cmocka_run_group_tests(tests, setup, mh_teardown);
}
