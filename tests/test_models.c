/* The model plugins (conv6, vgg16, resnet18, cyclegan, alexnet), loaded from the build's plugin
 * folder (the sequence models lstm and transformer: test_models_seq.c):
 * - parameter counts and FLOPs per sample of all eight variants against values computed
 *   independently in PyTorch (tests/torch/model_numbers.py: module parameter sizes and
 *   forward hooks on every conv / transposed conv / linear layer; AlexNet's:
 *   tests/torch/check_seq_models.py);
 * - shapes of key layers and parameters, initialisers, refused configurations;
 * - one training step of each model at reduced size on cpu_ref, and a loss that falls over a
 *   few steps on the fixed synthetic batch;
 * - CycleGAN's phases: the generators phase leaves the discriminators' weights alone and the
 *   discriminators phase the generators';
 * - the same step on every other loaded backend agrees with cpu_ref (skipped when none is);
 * - every shipped scenario (configs/, configs/quick/) names loaded models with valid
 *   parameters, the standard runs of docs/workloads.md all have one, and the quick ones run. */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "program/builder.h"
#include "plugin/loader.h"
#include "program/init.h"
#include "program/model_program.h"
#include "run/runner.h"
#include "scenario/scenario.h"
#include "run/session.h"
#include "check/verify.h"

#include "models_harness.h"

static int setup(void **state)
{
    (void)state;
    static const char *const models[7] = {"conv6",   "vgg16", "resnet18",   "cyclegan",
                                          "alexnet", "lstm",  "transformer"};
    return mh_setup(models, 7);
}

/* ---- helpers (the others: models_harness.h) ---- */

/* Trainable elements whose names start with `prefix`. */
static int64_t params_with_prefix(const xpb_model_program *mp, const char *prefix)
{
    int64_t n = 0;
    for (uint32_t t = 0; t < mp->n_tensors; t++)
        if (mp->tensors[t].role == XPB_ROLE_PARAM &&
            strncmp(mp->tensors[t].name, prefix, strlen(prefix)) == 0)
            n += xpb_tensor_numel(&mp->tensors[t]);
    return n;
}

/* ---- counts ---- */

/* Parameters and FLOPs per sample (multiply-add = 2) from tests/torch/model_numbers.py. A
 * classifier's training step is forward + backward-data of every layer but the first conv +
 * backward-weights of every layer = 3 forward - first conv. */
static void test_counts(void **state)
{
    (void)state;
    static const struct {
        const char *model, *variant;
        int64_t params, forward, train;
    } expect[] = {
        {"conv6", "cifar", 2262602, 307762176, 919747584},
        {"vgg16", "cifar", 14719818, 626403328, 1875671040},
        {"vgg16", "imagenet", 138357544, 30940528640, 92648177664},
        {"resnet18", "cifar", 11173962, 1110845440, 3328997376},
        {"resnet18", "imagenet", 11689512, 3628146688, 10648412160},
        {"cyclegan", "small", 21204872, 35055992832, 338313609216},
        {"cyclegan", "full", 28285832, 198206029824, 1879217012736},
        {"alexnet", "imagenet", 61100840, 1428376960, 4144577280},
    };
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
        xpb_run_config c = config(expect[i].model, expect[i].variant, 1, XPB_MODE_TRAIN, NULL);
        xpb_model_program *mp = create(&c);
        if (mp->param_count != expect[i].params || mp->flops_forward != expect[i].forward ||
            mp->flops_train != expect[i].train)
            fail_msg("%s/%s: %lld parameters, %lld forward and %lld training FLOPs; expected "
                     "%lld, %lld, %lld",
                     expect[i].model, expect[i].variant, (long long)mp->param_count,
                     (long long)mp->flops_forward, (long long)mp->flops_train,
                     (long long)expect[i].params, (long long)expect[i].forward,
                     (long long)expect[i].train);
        if (strcmp(expect[i].model, "cyclegan") == 0) {
            /* the reference implementation's networks: ResnetGenerator 6 / 9 blocks,
             * NLayerDiscriminator n_layers 3, ngf = ndf = 64 */
            int64_t g = strcmp(expect[i].variant, "full") == 0 ? 11378179 : 7837699;
            assert_int_equal(params_with_prefix(mp, "G_A."), g);
            assert_int_equal(params_with_prefix(mp, "G_B."), g);
            assert_int_equal(params_with_prefix(mp, "D_A."), 2764737);
            assert_int_equal(params_with_prefix(mp, "D_B."), 2764737);
        }
        xpb_model_program_free(mp);
    }
    /* Fashion-MNIST's 1x28x28 (hand counts: conv6's conv1 has 64 x 1 x 9 + 64 weights and fc1
     * takes 256 x 3 x 3 features; resnet18's stem 64 x 1 x 9 instead of 64 x 3 x 9). */
    static const struct {
        const char *model;
        int64_t params;
    } gray[] = {{"conv6", 1802698}, {"resnet18", 11172810}};
    for (size_t i = 0; i < sizeof gray / sizeof gray[0]; i++) {
        xpb_run_config g =
            config(gray[i].model, "cifar", 2, XPB_MODE_TRAIN, "in_channels=1 image_size=28");
        xpb_model_program *mp = create(&g);
        assert_int_equal(mp->param_count, gray[i].params);
        assert_int_equal(mp->tensors[0].dims[1], 1);
        assert_int_equal(mp->tensors[0].dims[2], 28);
        xpb_model_program_free(mp);
    }
    /* Per sample, whatever the batch. */
    xpb_run_config c = config("resnet18", "cifar", 3, XPB_MODE_TRAIN, NULL);
    xpb_model_program *mp = create(&c);
    assert_int_equal(mp->flops_forward, 1110845440);
    assert_int_equal(mp->flops_train, 3328997376);
    xpb_model_program_free(mp);
}

/* ---- shapes, initialisers, refusals ---- */

static void test_vgg16(void **state)
{
    (void)state;
    xpb_run_config c = config("vgg16", "imagenet", 2, XPB_MODE_TRAIN, NULL);
    xpb_model_program *mp = create(&c);
    expect_shape(mp, "images", 4, 2ll, 3ll, 224ll, 224ll);
    expect_shape(mp, "features.28", 4, 2ll, 512ll, 14ll, 14ll);
    expect_shape(mp, "features.30", 4, 2ll, 512ll, 7ll, 7ll); /* adaptive pool: identity */
    expect_shape(mp, "flatten", 2, 2ll, 25088ll);
    expect_shape(mp, "classifier.0.weight", 2, 4096ll, 25088ll);
    expect_shape(mp, "classifier.6", 2, 2ll, 1000ll);
    assert_int_equal(count_ops(mp, XPB_OP_CONV2D), 13);
    assert_int_equal(count_ops(mp, XPB_OP_LINEAR), 3);
    assert_int_equal(count_ops(mp, XPB_OP_MAXPOOL), 5);
    assert_int_equal(count_ops(mp, XPB_OP_DROPOUT), 0);
    assert_int_equal(count_ops(mp, XPB_OP_SGD_UPDATE), 32);
    xpb_model_program_free(mp);

    c = config("vgg16", "imagenet", 2, XPB_MODE_TRAIN, "dropout=true");
    mp = create(&c);
    assert_int_equal(count_ops(mp, XPB_OP_DROPOUT), 2);
    assert_int_equal(count_ops(mp, XPB_OP_DROPOUT_BWD), 2);
    expect_shape(mp, "classifier.2", 2, 2ll, 4096ll);
    for (uint32_t i = 0; i < mp->n_ops; i++)
        if (mp->ops[i].kind == XPB_OP_DROPOUT)
            assert_true(fabsf(mp->ops[i].attrs.dropout_p - 0.5f) < 1e-7f);
    xpb_model_program_free(mp);
    c = config("vgg16", "imagenet", 2, XPB_MODE_INFERENCE, "dropout=true");
    mp = create(&c);
    assert_int_equal(count_ops(mp, XPB_OP_DROPOUT), 0); /* evaluation mode */
    xpb_model_program_free(mp);

    c = config("vgg16", NULL, 2, XPB_MODE_TRAIN, NULL); /* default: cifar */
    mp = create(&c);
    expect_shape(mp, "images", 4, 2ll, 3ll, 32ll, 32ll);
    expect_shape(mp, "features.30", 4, 2ll, 512ll, 1ll, 1ll);
    expect_shape(mp, "classifier.weight", 2, 10ll, 512ll);
    expect_shape(mp, "classifier", 2, 2ll, 10ll);
    xpb_model_program_free(mp);

    char msg[1024];
    assert_int_equal(build_status("vgg16", "cifar", "dropout=true", msg, sizeof msg),
                     XPB_INVALID_ARGUMENT);
    assert_int_equal(build_status("vgg16", "mnist", NULL, msg, sizeof msg), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(msg, "cifar|imagenet"));
    assert_int_equal(build_status("vgg16", "cifar", "blocks=3", msg, sizeof msg),
                     XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(msg, "unknown parameter 'blocks'"));
    assert_int_equal(build_status("vgg16", "imagenet", "dropout=maybe", msg, sizeof msg),
                     XPB_INVALID_ARGUMENT);
}

static void test_resnet18(void **state)
{
    (void)state;
    xpb_run_config c = config("resnet18", "imagenet", 2, XPB_MODE_TRAIN, NULL);
    xpb_model_program *mp = create(&c);
    expect_shape(mp, "conv1.weight", 4, 64ll, 3ll, 7ll, 7ll);
    expect_shape(mp, "conv1", 4, 2ll, 64ll, 112ll, 112ll);
    expect_shape(mp, "maxpool", 4, 2ll, 64ll, 56ll, 56ll);
    expect_shape(mp, "layer1.1.relu2", 4, 2ll, 64ll, 56ll, 56ll);
    expect_shape(mp, "layer2.0.conv1", 4, 2ll, 128ll, 28ll, 28ll);
    expect_shape(mp, "layer2.0.downsample.0", 4, 2ll, 128ll, 28ll, 28ll);
    expect_shape(mp, "layer2.0.downsample.0.weight", 4, 128ll, 64ll, 1ll, 1ll);
    expect_shape(mp, "layer3.1.bn2.running_var", 1, 256ll);
    expect_shape(mp, "layer4.1.relu2", 4, 2ll, 512ll, 7ll, 7ll);
    expect_shape(mp, "avgpool", 4, 2ll, 512ll, 1ll, 1ll);
    expect_shape(mp, "fc", 2, 2ll, 1000ll);
    assert_int_equal(find(mp, "layer1.0.downsample.0.weight"), XPB_NO_TENSOR);
    assert_int_equal(find(mp, "conv1.bias"), XPB_NO_TENSOR);
    assert_int_equal(mp->tensors[find(mp, "bn1.running_mean")].role, XPB_ROLE_STATE);
    assert_int_equal(count_ops(mp, XPB_OP_CONV2D), 20);
    assert_int_equal(count_ops(mp, XPB_OP_BATCHNORM_TRAIN), 20);
    assert_int_equal(count_ops(mp, XPB_OP_ADD) >= 8, 1);
    assert_int_equal(count_ops(mp, XPB_OP_MAXPOOL), 1);
    /* 20 conv weights, 20 BN weight/bias pairs, fc weight and bias */
    assert_int_equal(count_ops(mp, XPB_OP_SGD_UPDATE), 62);
    xpb_model_program_free(mp);

    c = config("resnet18", "imagenet", 2, XPB_MODE_INFERENCE, NULL);
    mp = create(&c);
    assert_int_equal(count_ops(mp, XPB_OP_BATCHNORM_INFER), 20);
    assert_int_equal(count_ops(mp, XPB_OP_BATCHNORM_TRAIN), 0);
    xpb_model_program_free(mp);

    c = config("resnet18", NULL, 2, XPB_MODE_TRAIN, NULL); /* default: cifar */
    mp = create(&c);
    expect_shape(mp, "conv1.weight", 4, 64ll, 3ll, 3ll, 3ll);
    expect_shape(mp, "conv1", 4, 2ll, 64ll, 32ll, 32ll);
    expect_shape(mp, "layer4.1.relu2", 4, 2ll, 512ll, 4ll, 4ll);
    expect_shape(mp, "fc.weight", 2, 10ll, 512ll);
    assert_int_equal(find(mp, "maxpool"), XPB_NO_TENSOR);
    xpb_model_program_free(mp);

    c = config("resnet18", "imagenet", 2, XPB_MODE_TRAIN, "image_size=64");
    mp = create(&c);
    expect_shape(mp, "images", 4, 2ll, 3ll, 64ll, 64ll);
    expect_shape(mp, "layer4.1.relu2", 4, 2ll, 512ll, 2ll, 2ll);
    assert_int_equal(mp->param_count, 11689512);
    xpb_model_program_free(mp);

    char msg[1024];
    assert_int_equal(build_status("resnet18", "cifar", "image_size=-1", msg, sizeof msg),
                     XPB_INVALID_ARGUMENT);
    assert_int_equal(build_status("resnet18", "cifar", "image_size=1025", msg, sizeof msg),
                     XPB_INVALID_ARGUMENT);
    assert_int_equal(build_status("resnet18", "imagenet", "image_size=big", msg, sizeof msg),
                     XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(msg, "image_size"));
}

static void test_cyclegan(void **state)
{
    (void)state;
    xpb_run_config c = config("cyclegan", "full", 1, XPB_MODE_TRAIN, NULL);
    xpb_model_program *mp = create(&c);
    assert_int_equal(mp->n_phases, 2);
    assert_string_equal(mp->phases[0].name, "generators");
    assert_string_equal(mp->phases[1].name, "discriminators");
    expect_shape(mp, "real_A", 4, 1ll, 3ll, 256ll, 256ll);
    expect_shape(mp, "fake_B/G_A.model.0", 4, 1ll, 3ll, 262ll, 262ll);
    expect_shape(mp, "fake_B/G_A.model.9", 4, 1ll, 256ll, 64ll, 64ll);
    expect_shape(mp, "fake_B/G_A.model.18.conv_block.0", 4, 1ll, 256ll, 66ll, 66ll);
    expect_shape(mp, "fake_B/G_A.model.18.add", 4, 1ll, 256ll, 64ll, 64ll);
    expect_shape(mp, "fake_B/G_A.model.19", 4, 1ll, 128ll, 128ll, 128ll);
    expect_shape(mp, "fake_B/G_A.model.22", 4, 1ll, 64ll, 256ll, 256ll);
    expect_shape(mp, "fake_B/G_A.model.27", 4, 1ll, 3ll, 256ll, 256ll);
    expect_shape(mp, "rec_A/G_B.model.27", 4, 1ll, 3ll, 256ll, 256ll);
    expect_shape(mp, "pred_fake_B/D_A.model.8", 4, 1ll, 512ll, 31ll, 31ll);
    expect_shape(mp, "pred_fake_B/D_A.model.11", 4, 1ll, 1ll, 30ll, 30ll);
    expect_shape(mp, "real_label", 4, 1ll, 1ll, 30ll, 30ll);
    expect_shape(mp, "G_A.model.19.weight", 4, 256ll, 128ll, 3ll, 3ll); /* [in, out, k, k] */
    expect_shape(mp, "G_B.model.18.conv_block.5.bias", 1, 256ll);
    expect_shape(mp, "D_B.model.11.weight", 4, 1ll, 512ll, 4ll, 4ll);
    assert_int_equal(mp->tensors[find(mp, "real_label")].role, XPB_ROLE_STATE);
    assert_int_equal(count_ops(mp, XPB_OP_CONV_T2D), 12); /* 6 generator applications */
    assert_int_equal(count_ops(mp, XPB_OP_TANH), 6);
    assert_int_equal(count_ops(mp, XPB_OP_SGD_UPDATE), 0);
    /* Adam: every generator tensor in phase 0, every discriminator tensor in phase 1 */
    int updates[2] = {0, 0};
    for (uint32_t p = 0; p < 2; p++)
        for (uint32_t i = mp->phases[p].first_op; i < mp->phases[p].first_op + mp->phases[p].n_ops;
             i++)
            if (mp->ops[i].kind == XPB_OP_ADAM_UPDATE) {
                const char *name = mp->tensors[mp->ops[i].inputs[0]].name;
                assert_int_equal(name[0], p == 0 ? 'G' : 'D');
                assert_true(fabsf(mp->ops[i].attrs.lr - 2e-4f) < 1e-9f);
                assert_true(fabsf(mp->ops[i].attrs.beta1 - 0.5f) < 1e-7f);
                assert_true(fabsf(mp->ops[i].attrs.beta2 - 0.999f) < 1e-7f);
                updates[p]++;
            }
    assert_int_equal(updates[0], 2 * 2 * (6 + 2 * 9));
    assert_int_equal(updates[1], 2 * 2 * 5);
    /* Losses and weights, per phase. */
    static const struct {
        const char *name;
        uint32_t phase;
        double weight;
    } losses[] = {{"loss_idt_A", 0, 5},      {"loss_idt_B", 0, 5},      {"loss_G_A", 0, 1},
                  {"loss_G_B", 0, 1},        {"loss_cycle_A", 0, 10},   {"loss_cycle_B", 0, 10},
                  {"loss_D_A_real", 1, 0.5}, {"loss_D_A_fake", 1, 0.5}, {"loss_D_B_real", 1, 0.5},
                  {"loss_D_B_fake", 1, 0.5}};
    assert_int_equal(mp->n_losses, 10);
    for (size_t i = 0; i < 10; i++) {
        const xpb_program_loss *l = &mp->losses[i];
        assert_string_equal(mp->tensors[l->tensor].name, losses[i].name);
        assert_int_equal(l->phase, losses[i].phase);
        assert_true(l->weight == losses[i].weight);
    }
    /* The discriminators phase does not recompute a generator. */
    for (uint32_t i = mp->phases[1].first_op; i < mp->phases[1].first_op + mp->phases[1].n_ops; i++)
        assert_null(strstr(mp->ops[i].layer, "/G_"));
    xpb_model_program_free(mp);

    c = config("cyclegan", NULL, 1, XPB_MODE_TRAIN, NULL); /* default: small */
    mp = create(&c);
    expect_shape(mp, "fake_B/G_A.model.15.add", 4, 1ll, 256ll, 32ll, 32ll);
    expect_shape(mp, "fake_B/G_A.model.24", 4, 1ll, 3ll, 128ll, 128ll);
    expect_shape(mp, "pred_real_A/D_B.model.11", 4, 1ll, 1ll, 14ll, 14ll);
    assert_int_equal(find(mp, "G_A.model.16.conv_block.1.weight"), XPB_NO_TENSOR);
    xpb_model_program_free(mp);

    /* Inference translates both ways: the two generators, nothing else. */
    c = config("cyclegan", "small", 1, XPB_MODE_INFERENCE, NULL);
    mp = create(&c);
    assert_int_equal(mp->flops_forward, 35055992832);
    for (uint32_t i = 0; i < mp->n_ops; i++)
        assert_true(strncmp(mp->ops[i].layer, "fake_", 5) == 0);
    assert_int_equal(count_ops(mp, XPB_OP_TANH), 2);
    xpb_model_program_free(mp);

    c = config("cyclegan", "full", 1, XPB_MODE_TRAIN, "image_size=24 ngf=4 ndf=4");
    mp = create(&c);
    expect_shape(mp, "pred_fake_A_detached/D_B.model.11", 4, 1ll, 1ll, 1ll, 1ll);
    expect_shape(mp, "G_A.model.1.weight", 4, 4ll, 3ll, 7ll, 7ll);
    expect_shape(mp, "D_A.model.8.weight", 4, 32ll, 16ll, 4ll, 4ll);
    xpb_model_program_free(mp);

    char msg[1024];
    assert_int_equal(build_status("cyclegan", "small", "image_size=30", msg, sizeof msg),
                     XPB_INVALID_ARGUMENT);
    assert_int_equal(build_status("cyclegan", "small", "image_size=20", msg, sizeof msg),
                     XPB_INVALID_ARGUMENT);
    assert_int_equal(build_status("cyclegan", "medium", NULL, msg, sizeof msg),
                     XPB_INVALID_ARGUMENT);
    assert_int_equal(build_status("cyclegan", "small", "ngf=0", msg, sizeof msg),
                     XPB_INVALID_ARGUMENT);
}

/* torchvision's AlexNet; its adaptive pool at the three sizes the model builds it for. */
static void test_alexnet(void **state)
{
    (void)state;
    xpb_run_config c = config("alexnet", NULL, 2, XPB_MODE_TRAIN, NULL);
    xpb_model_program *mp = create(&c);
    expect_shape(mp, "images", 4, 2ll, 3ll, 224ll, 224ll);
    expect_shape(mp, "features.0.weight", 4, 64ll, 3ll, 11ll, 11ll);
    expect_shape(mp, "features.0", 4, 2ll, 64ll, 55ll, 55ll);
    expect_shape(mp, "features.5", 4, 2ll, 192ll, 13ll, 13ll);
    expect_shape(mp, "features.12", 4, 2ll, 256ll, 6ll, 6ll); /* adaptive pool: identity */
    expect_shape(mp, "flatten", 2, 2ll, 9216ll);
    expect_shape(mp, "classifier.1.weight", 2, 4096ll, 9216ll);
    expect_shape(mp, "classifier.3", 2, 2ll, 4096ll);
    expect_shape(mp, "classifier.6.bias", 1, 1000ll);
    assert_int_equal(find(mp, "avgpool"), XPB_NO_TENSOR);
    assert_int_equal(count_ops(mp, XPB_OP_CONV2D), 5);
    assert_int_equal(count_ops(mp, XPB_OP_MAXPOOL), 3);
    assert_int_equal(count_ops(mp, XPB_OP_LINEAR), 3);
    assert_int_equal(count_ops(mp, XPB_OP_DROPOUT), 2);
    assert_int_equal(count_ops(mp, XPB_OP_DROPOUT_BWD), 2);
    assert_int_equal(count_ops(mp, XPB_OP_SGD_UPDATE), 16);
    for (uint32_t i = 0; i < mp->n_ops; i++)
        if (mp->ops[i].kind == XPB_OP_DROPOUT)
            assert_true(fabsf(mp->ops[i].attrs.dropout_p - 0.5f) < 1e-7f);
    char msg[512];
    assert_int_equal(xpb_program_validate(&mp->program, msg, sizeof msg), XPB_OK);
    xpb_model_program_free(mp);

    c = config("alexnet", "imagenet", 2, XPB_MODE_INFERENCE, NULL);
    mp = create(&c);
    assert_int_equal(count_ops(mp, XPB_OP_DROPOUT), 0); /* evaluation mode */
    assert_int_equal(mp->flops_forward, 1428376960);
    xpb_model_program_free(mp);
    c = config("alexnet", "imagenet", 2, XPB_MODE_TRAIN, "dropout=0");
    mp = create(&c);
    assert_int_equal(count_ops(mp, XPB_OP_DROPOUT), 0);
    assert_int_equal(mp->param_count, 61100840);
    xpb_model_program_free(mp);

    /* 64 pixels: a 1x1 map, repeated over 6x6 by a broadcast; 420: 12x12, 2x2 averages */
    c = config("alexnet", "imagenet", 2, XPB_MODE_TRAIN,
               "image_size=64 fc_width=32 num_classes=10");
    mp = create(&c);
    expect_shape(mp, "features.12", 4, 2ll, 256ll, 1ll, 1ll);
    expect_shape(mp, "avgpool", 4, 2ll, 256ll, 6ll, 6ll);
    expect_shape(mp, "classifier.1.weight", 2, 32ll, 9216ll);
    expect_shape(mp, "classifier.6", 2, 2ll, 10ll);
    assert_int_equal(count_ops(mp, XPB_OP_ADD_BROADCAST), 1);
    assert_int_equal(count_ops(mp, XPB_OP_SUM_TO), 1); /* its gradient */
    assert_int_equal(xpb_program_validate(&mp->program, msg, sizeof msg), XPB_OK);
    xpb_model_program_free(mp);
    c = config("alexnet", "imagenet", 1, XPB_MODE_INFERENCE, "image_size=420");
    mp = create(&c);
    expect_shape(mp, "features.12", 4, 1ll, 256ll, 12ll, 12ll);
    expect_shape(mp, "avgpool", 4, 1ll, 256ll, 6ll, 6ll);
    assert_int_equal(count_ops(mp, XPB_OP_AVGPOOL), 1);
    xpb_model_program_free(mp);

    assert_int_equal(build_status("alexnet", "imagenet", "image_size=100", msg, sizeof msg),
                     XPB_INVALID_ARGUMENT); /* a 2x2 map */
    assert_non_null(strstr(msg, "2x2"));
    assert_int_equal(build_status("alexnet", "imagenet", "image_size=32", msg, sizeof msg),
                     XPB_INVALID_ARGUMENT);
    assert_int_equal(build_status("alexnet", "cifar", NULL, msg, sizeof msg), XPB_INVALID_ARGUMENT);
    assert_int_equal(build_status("alexnet", "imagenet", "dropout=1", msg, sizeof msg),
                     XPB_INVALID_ARGUMENT);
}

/* torchvision's initialisation for vgg16 and resnet18, the reference's for CycleGAN. */
static void test_initialisation(void **state)
{
    (void)state;
    double mean, std, maxabs;
    xpb_run_config c = config("vgg16", "cifar", 1, XPB_MODE_TRAIN, NULL);
    xpb_model_program *mp = create(&c);
    init_stats(mp, "features.28.weight", &mean, &std, &maxabs); /* kaiming fan_out */
    assert_true(fabs(std / sqrt(2.0 / (512 * 9)) - 1) < 0.01 && fabs(mean) < 1e-3);
    init_stats(mp, "features.0.bias", &mean, &std, &maxabs);
    assert_true(maxabs == 0);
    init_stats(mp, "classifier.weight", &mean, &std, &maxabs);
    assert_true(fabs(std / 0.01 - 1) < 0.1);
    xpb_model_program_free(mp);

    c = config("resnet18", "imagenet", 1, XPB_MODE_TRAIN, NULL);
    mp = create(&c);
    init_stats(mp, "conv1.weight", &mean, &std, &maxabs);
    assert_true(fabs(std / sqrt(2.0 / (64 * 49)) - 1) < 0.05);
    init_stats(mp, "layer4.1.conv2.weight", &mean, &std, &maxabs);
    assert_true(fabs(std / sqrt(2.0 / (512 * 9)) - 1) < 0.01);
    init_stats(mp, "layer2.0.bn1.weight", &mean, &std, &maxabs);
    assert_true(mean == 1 && std == 0);
    init_stats(mp, "fc.weight", &mean, &std, &maxabs); /* U(-1/sqrt(512), 1/sqrt(512)) */
    assert_true(maxabs <= 1 / sqrt(512.0) && fabs(std / (1 / sqrt(512.0 * 3)) - 1) < 0.01);
    xpb_model_program_free(mp);

    c = config("cyclegan", "small", 1, XPB_MODE_TRAIN, NULL);
    mp = create(&c);
    init_stats(mp, "G_B.model.10.conv_block.5.weight", &mean, &std, &maxabs);
    assert_true(fabs(std / 0.02 - 1) < 0.01);
    init_stats(mp, "D_A.model.11.weight", &mean, &std, &maxabs);
    assert_true(fabs(std / 0.02 - 1) < 0.1);
    init_stats(mp, "G_A.model.16.bias", &mean, &std, &maxabs); /* ConvTranspose */
    assert_true(maxabs == 0);
    xpb_model_program_free(mp);

    c = config("alexnet", "imagenet", 1, XPB_MODE_TRAIN, NULL); /* PyTorch's defaults */
    mp = create(&c);
    init_stats(mp, "features.3.weight", &mean, &std, &maxabs); /* U(+-1/sqrt(64 * 25)) */
    assert_true(maxabs <= 1 / 40.0 && fabs(std / (1 / (40.0 * sqrt(3.0))) - 1) < 0.01);
    init_stats(mp, "classifier.4.bias", &mean, &std, &maxabs);
    assert_true(maxabs <= 1 / 64.0 && maxabs > 0.9 / 64.0);
    xpb_model_program_free(mp);
}

/* ---- running the models ---- */

/* Reduced sizes that keep the architecture (see docs/models.md). */
static const struct reduced {
    const char *model, *variant, *params;
    uint32_t batch;
} reduced[] = {
    {"conv6", "cifar", NULL, 2},
    {"vgg16", "cifar", NULL, 1},
    {"resnet18", "cifar", "image_size=16", 2},
    {"resnet18", "imagenet", "image_size=64", 2}, /* 2x2 in layer4: BN over 8 values */
    {"cyclegan", "small", "image_size=32 ngf=8 ndf=8", 1},
    {"cyclegan", "full", "image_size=24 ngf=4 ndf=4", 1},
    {"alexnet", "imagenet", "image_size=64 fc_width=32 num_classes=10", 2},
};
#define N_REDUCED (sizeof reduced / sizeof reduced[0])

static int same_bytes(xpb_session *s, uint32_t t, const float *before)
{
    xpb_err err = {{0}};
    size_t bytes = xpb_tensor_bytes(&s->mp->tensors[t]);
    float *now = malloc(bytes);
    assert_non_null(now);
    assert_int_equal(xpb_session_read(s, t, now, &err), XPB_OK);
    int same = memcmp(now, before, bytes) == 0;
    free(now);
    return same;
}

/* Steps on the one synthetic batch the session wrote: every loss is finite, parameters move,
 * batch-norm statistics move, and the weighted loss of every phase falls. */
static void test_training_steps(void **state)
{
    (void)state;
    const xpb_backend_api *ref = xpb_registry_backend(registry, "cpu_ref");
    for (size_t k = 0; k < N_REDUCED; k++) {
        const struct reduced *r = &reduced[k];
        xpb_run_config c = config(r->model, r->variant, r->batch, XPB_MODE_TRAIN, r->params);
        xpb_model_program *mp = create(&c);
        xpb_session s;
        xpb_err err = {{0}};
        xpb_compile_options o = {.struct_size = sizeof o, .precision = XPB_PRECISION_FP32};
        if (xpb_session_open(&s, ref, 0, mp, &o, &err) != XPB_OK)
            fail_msg("%s: %s", r->model, err.msg);
        /* the first parameter and, for resnet18, a running mean, before the first step */
        uint32_t p0 = XPB_NO_TENSOR, rm = find(mp, "bn1.running_mean");
        for (uint32_t t = 0; t < mp->n_tensors && p0 == XPB_NO_TENSOR; t++)
            if (mp->tensors[t].role == XPB_ROLE_PARAM)
                p0 = t;
        float *w0 = malloc(xpb_tensor_bytes(&mp->tensors[p0])), rm0[64];
        assert_non_null(w0);
        assert_int_equal(xpb_model_program_initial_value(mp, p0, w0), XPB_OK);
        if (rm != XPB_NO_TENSOR)
            assert_int_equal(xpb_model_program_initial_value(mp, rm, rm0), XPB_OK);
        enum { STEPS = 5 };
        double loss[STEPS][2];
        for (int i = 0; i < STEPS; i++) {
            if (xpb_session_step(&s, NULL, &err) != XPB_OK)
                fail_msg("%s step %d: %s", r->model, i, err.msg);
            for (uint32_t p = 0; p < mp->n_phases; p++) {
                assert_int_equal(xpb_session_loss(&loss[i][p], &s, p, &err), XPB_OK);
                if (!isfinite(loss[i][p]))
                    fail_msg("%s/%s step %d phase %u: loss %g", r->model, r->variant, i, p,
                             loss[i][p]);
            }
            if (i == 0) {
                assert_false(same_bytes(&s, p0, w0));
                if (rm != XPB_NO_TENSOR)
                    assert_false(same_bytes(&s, rm, rm0));
            }
        }
        for (uint32_t p = 0; p < mp->n_phases; p++) {
            printf("  %s/%s %s phase %s: loss", r->model, r->variant, r->params ? r->params : "",
                   mp->phases[p].name);
            for (int i = 0; i < STEPS; i++)
                printf(" %.5f", loss[i][p]);
            printf("\n");
            if (!(loss[STEPS - 1][p] < loss[0][p]))
                fail_msg("%s/%s phase %s: the loss does not fall (%g -> %g)", r->model, r->variant,
                         mp->phases[p].name, loss[0][p], loss[STEPS - 1][p]);
        }
        free(w0);
        xpb_session_close(&s);
        xpb_model_program_free(mp);
    }
}

static int has_suffix(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Reads every PARAM tensor whose name starts with G or D into bufs[t]. */
static void read_params(xpb_session *s, float **bufs)
{
    xpb_err err = {{0}};
    for (uint32_t t = 0; t < s->mp->n_tensors; t++)
        if (s->mp->tensors[t].role == XPB_ROLE_PARAM) {
            if (!bufs[t])
                bufs[t] = malloc(xpb_tensor_bytes(&s->mp->tensors[t]));
            assert_non_null(bufs[t]);
            assert_int_equal(xpb_session_read(s, t, bufs[t], &err), XPB_OK);
        }
}

/* Counts the parameters of network family `net` ('G' or 'D') whose names end with `suffix`
 * ("" for all) and that differ from `bufs`; *total gets how many there are. */
static int changed(xpb_session *s, float **bufs, char net, const char *suffix, int *total)
{
    int n = 0;
    *total = 0;
    for (uint32_t t = 0; t < s->mp->n_tensors; t++)
        if (s->mp->tensors[t].role == XPB_ROLE_PARAM && s->mp->tensors[t].name[0] == net &&
            has_suffix(s->mp->tensors[t].name, suffix)) {
            (*total)++;
            n += !same_bytes(s, t, bufs[t]);
        }
    return n;
}

static void test_cyclegan_phases(void **state)
{
    (void)state;
    xpb_run_config c = config("cyclegan", "small", 1, XPB_MODE_TRAIN, "image_size=32 ngf=8 ndf=8");
    xpb_model_program *mp = create(&c);
    xpb_session s;
    xpb_err err = {{0}};
    xpb_compile_options o = {
        .struct_size = sizeof o, .precision = XPB_PRECISION_FP32, .keep_all = 1};
    assert_int_equal(
        xpb_session_open(&s, xpb_registry_backend(registry, "cpu_ref"), 0, mp, &o, &err), XPB_OK);
    float **bufs = calloc(mp->n_tensors, sizeof *bufs);
    assert_non_null(bufs);
    int total, n;
    for (int step = 0; step < 2; step++) {
        read_params(&s, bufs);
        assert_int_equal(s.api->run(s.exe, 0), XPB_OK); /* generators */
        assert_int_equal(s.api->synchronize(s.exe), XPB_OK);
        n = changed(&s, bufs, 'D', "", &total);
        assert_int_equal(n, 0);
        assert_int_equal(total, 2 * 2 * 5);
        n = changed(&s, bufs, 'G', ".weight", &total);
        assert_int_equal(n, total);
        assert_int_equal(total, 2 * (6 + 2 * 6));
        read_params(&s, bufs);
        assert_int_equal(s.api->run(s.exe, 1), XPB_OK); /* discriminators */
        assert_int_equal(s.api->synchronize(s.exe), XPB_OK);
        n = changed(&s, bufs, 'G', "", &total);
        assert_int_equal(n, 0);
        assert_int_equal(total, 2 * 2 * (6 + 2 * 6));
        n = changed(&s, bufs, 'D', ".weight", &total);
        assert_int_equal(n, total);
        assert_int_equal(total, 2 * 5);
    }
    for (uint32_t t = 0; t < mp->n_tensors; t++)
        free(bufs[t]);
    free(bufs);
    xpb_session_close(&s);
    xpb_model_program_free(mp);
}

/* One training step of `mp` on backend `api` (keep_all): every LOSS, OUTPUT and GRAD tensor,
 * in vals[t] (NULL for the others; the caller frees). XPB_NO_DEVICE / XPB_UNSUPPORTED when the
 * backend cannot run it. */
/* The first step of each reduced model on every other loaded backend, against cpu_ref, judged
 * as `xpubench run` verification judges it (core/check/verify.h: the host's one numerical
 * judge, docs/conformance.md): every loss and output within the forward tolerance, every
 * gradient within the gradient allowance, or all of them together when the two forward passes
 * took different sides of a ReLU kink (a near-zero input that rounding puts on the other side
 * changes every gradient below it, and a largest-element metric then fails two correct
 * backends: CycleGAN's residual blocks did so now and then on a loaded machine). */
static void test_backends_agree(void **state)
{
    (void)state;
    int compared = 0, failed = 0;
    for (size_t i = 0; i < xpb_registry_count(registry); i++) {
        const xpb_plugin_descriptor *d = xpb_registry_at(registry, i, NULL);
        if (d->kind != XPB_PLUGIN_BACKEND || strcmp(d->name, "cpu_ref") == 0)
            continue;
        const xpb_backend_api *be = xpb_registry_backend(registry, d->name);
        for (size_t k = 0; k < N_REDUCED; k++) {
            const struct reduced *r = &reduced[k];
            xpb_run_config c = config(r->model, r->variant, r->batch, XPB_MODE_TRAIN, r->params);
            xpb_model_program *mp = create(&c);
            xpb_verify_result v;
            xpb_err err = {{0}};
            xpb_status st = xpb_verify_step(&v, registry, be, mp, &c, &err);
            if (st == XPB_NO_DEVICE || st == XPB_UNSUPPORTED)
                printf("  %s: %s/%s not run: %s\n", d->name, r->model, r->variant, err.msg);
            else if (st != XPB_OK)
                fail_msg("%s, %s/%s: %s", d->name, r->model, r->variant, err.msg);
            else {
                printf("  %s %s %s/%s %s: %s\n", v.passed ? "ok  " : "FAIL", d->name, r->model,
                       r->variant, r->params ? r->params : "", v.message);
                failed += !v.passed;
                compared++;
            }
            xpb_model_program_free(mp);
        }
    }
    if (failed)
        fail_msg("%d of %d steps disagree with cpu_ref", failed, compared);
    if (!compared) {
        printf("  no other backend loaded: nothing to compare\n");
        skip();
    }
}

/* ---- shipped scenarios ---- */

/* Backends a shipped scenario may name although this build has not loaded them. */
static int known_backend(const char *name)
{
    return strcmp(name, "cpu_onednn") == 0 || strcmp(name, "cuda") == 0;
}

/* Loads every .yaml of `dir` and checks its runs against the plugins; with `run`, also runs
 * those on loaded backends through the runner, which must report "ok". Returns the count. */
static int check_scenarios(const char *dir, int run)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!has_suffix(e->d_name, ".yaml"))
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        xpb_scenario *s = NULL;
        xpb_err err = {{0}};
        if (xpb_scenario_load(&s, path, NULL, 0, &err) != XPB_OK)
            fail_msg("%s", err.msg);
        for (size_t i = 0; i < s->n_runs; i++) {
            const xpb_run_config *c = &s->runs[i];
            const xpb_model_api *m = xpb_registry_model(registry, c->model);
            if (!m)
                fail_msg("%s: run '%s': model '%s' is not loaded", path, c->id, c->model);
            if (xpb_model_params_check(m, c->model, c->variant, c->params, c->n_params, &err))
                fail_msg("%s: run '%s': %s", path, c->id, err.msg);
            if (!xpb_registry_backend(registry, c->backend)) {
                if (!known_backend(c->backend))
                    fail_msg("%s: run '%s': unknown backend '%s'", path, c->id, c->backend);
                continue;
            }
            if (!run)
                continue;
            xpb_runner_opts ro = {.label = c->id, .verify_step = xpb_verify_step};
            json_t *res = xpb_run_one(registry, c, &ro);
            assert_non_null(res);
            const char *status = json_string_value(json_object_get(res, "status"));
            if (!status || strcmp(status, "ok") != 0)
                fail_msg("%s: run '%s': %s: %s", path, c->id, status ? status : "?",
                         json_string_value(json_object_get(res, "message")));
            printf("  %s: %s ok\n", e->d_name, c->id);
            json_decref(res);
        }
        xpb_scenario_free(s);
        count++;
    }
    closedir(d);
    return count;
}

static void test_shipped_scenarios(void **state)
{
    (void)state;
    assert_true(check_scenarios(XPB_TEST_SOURCE_DIR "/configs", 0) >= 18);
    /* One scenario per standard run of docs/workloads.md. */
    static const struct {
        const char *file, *model, *variant;
        uint32_t mode, batch;
    } standard[] = {
        {"conv6-train", "conv6", "cifar", XPB_MODE_TRAIN, 64},
        {"vgg16-cifar-train", "vgg16", "cifar", XPB_MODE_TRAIN, 64},
        {"resnet18-cifar-train", "resnet18", "cifar", XPB_MODE_TRAIN, 64},
        {"vgg16-imagenet-train", "vgg16", "imagenet", XPB_MODE_TRAIN, 8},
        {"resnet18-imagenet-train", "resnet18", "imagenet", XPB_MODE_TRAIN, 16},
        {"cyclegan-small-train", "cyclegan", "small", XPB_MODE_TRAIN, 1},
        {"cyclegan-full-train", "cyclegan", "full", XPB_MODE_TRAIN, 1},
        {"conv6-infer-b1", "conv6", "cifar", XPB_MODE_INFERENCE, 1},
        {"conv6-infer-b128", "conv6", "cifar", XPB_MODE_INFERENCE, 128},
        {"vgg16-cifar-infer-b1", "vgg16", "cifar", XPB_MODE_INFERENCE, 1},
        {"vgg16-cifar-infer-b128", "vgg16", "cifar", XPB_MODE_INFERENCE, 128},
        {"vgg16-imagenet-infer-b1", "vgg16", "imagenet", XPB_MODE_INFERENCE, 1},
        {"vgg16-imagenet-infer-b128", "vgg16", "imagenet", XPB_MODE_INFERENCE, 128},
        {"resnet18-cifar-infer-b1", "resnet18", "cifar", XPB_MODE_INFERENCE, 1},
        {"resnet18-cifar-infer-b128", "resnet18", "cifar", XPB_MODE_INFERENCE, 128},
        {"resnet18-imagenet-infer-b1", "resnet18", "imagenet", XPB_MODE_INFERENCE, 1},
        {"resnet18-imagenet-infer-b128", "resnet18", "imagenet", XPB_MODE_INFERENCE, 128},
        {"alexnet-train", "alexnet", "imagenet", XPB_MODE_TRAIN, 64},
        {"alexnet-infer-b1", "alexnet", "imagenet", XPB_MODE_INFERENCE, 1},
        {"alexnet-infer-b128", "alexnet", "imagenet", XPB_MODE_INFERENCE, 128},
    };
    for (size_t i = 0; i < sizeof standard / sizeof standard[0]; i++) {
        const xpb_run_config *c;
        xpb_scenario *s = standard_run(&c, standard[i].file, standard[i].model, standard[i].variant,
                                       standard[i].mode, standard[i].batch);
        assert_int_equal(c->n_params, 0); /* the published architecture, nothing reduced */
        /* only VGG16-ImageNet lowers its learning rate (it diverges at the default 0.01) */
        if (strcmp(standard[i].file, "vgg16-imagenet-train") == 0)
            assert_true(c->lr == 0.001);
        else
            assert_true(isnan(c->lr));
        xpb_scenario_free(s);
    }
    /* The study: every model, training, cpu_ref and cpu_onednn. */
    xpb_scenario *s = NULL;
    xpb_err err = {{0}};
    if (xpb_scenario_load(&s, XPB_TEST_SOURCE_DIR "/configs/study.yaml", NULL, 0, &err) != XPB_OK)
        fail_msg("%s", err.msg);
    int seen[7] = {0}, backends[2] = {0};
    static const char *const models[7] = {"conv6",   "vgg16", "resnet18",   "cyclegan",
                                          "alexnet", "lstm",  "transformer"};
    for (size_t i = 0; i < s->n_runs; i++) {
        assert_int_equal(s->runs[i].mode, XPB_MODE_TRAIN);
        for (int m = 0; m < 7; m++)
            seen[m] |= strcmp(s->runs[i].model, models[m]) == 0;
        backends[0] |= strcmp(s->runs[i].backend, "cpu_ref") == 0;
        backends[1] |= strcmp(s->runs[i].backend, "cpu_onednn") == 0;
    }
    for (int m = 0; m < 7; m++)
        if (!seen[m])
            fail_msg("configs/study.yaml does not train %s", models[m]);
    assert_true(backends[0] && backends[1]);
    xpb_scenario_free(s);
}

static void test_quick_scenarios_run(void **state)
{
    (void)state;
    assert_true(check_scenarios(XPB_TEST_SOURCE_DIR "/configs/quick", 1) >= 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts),
        cmocka_unit_test(test_vgg16),
        cmocka_unit_test(test_resnet18),
        cmocka_unit_test(test_cyclegan),
        cmocka_unit_test(test_alexnet),
        cmocka_unit_test(test_initialisation),
        cmocka_unit_test(test_training_steps),
        cmocka_unit_test(test_cyclegan_phases),
        cmocka_unit_test(test_backends_agree),
        cmocka_unit_test(test_shipped_scenarios),
        cmocka_unit_test(test_quick_scenarios_run),
    };
    return cmocka_run_group_tests(tests, setup, mh_teardown);
}
