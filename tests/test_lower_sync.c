/* The training program of a data-parallel run (core/program/lower_sync.c, docs/ops.md): one
 * ALL_REDUCE per parameter gradient, after the backward op that completes it and before the
 * update that reads it, in reverse order of the forward pass, grouped into consecutive buckets
 * of about bucket_mb MiB inside each phase; and for one rank, or parallel none, exactly the
 * op-set-1 program of a single process. On the real models (conv6, resnet18, cyclegan). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "plugin/loader.h"
#include "program/model_program.h"
#include "program/program_abi.h"
#include "scenario/run_config.h"

static xpb_registry *registry;

static int setup(void **state)
{
    (void)state;
    const char *dirs[1] = {XPB_TEST_PLUGIN_DIR};
    xpb_err err = {{0}};
    return xpb_registry_load(&registry, dirs, 1, &err) == XPB_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    xpb_registry_free(registry);
    return 0;
}

static xpb_model_program *build(const char *model, uint32_t batch, uint32_t world,
                                uint32_t parallel, double bucket_mb)
{
    xpb_program_options c = {.model = model,
                             .batch = batch,
                             .mode = XPB_MODE_TRAIN,
                             .seed = 42,
                             .lr = NAN,
                             .momentum = NAN,
                             .weight_decay = NAN,
                             .average_gradients = parallel != XPB_PARALLEL_NONE,
                             .bucket_mb = bucket_mb,
                             .world_size = world,
                             .rank = world > 1 ? 1 : 0};
    xpb_model_program *mp = NULL;
    xpb_err err = {{0}};
    const xpb_model_api *api = xpb_registry_model(registry, model);
    assert_non_null(api);
    if (xpb_model_program_create(&mp, api, &c, &err) != XPB_OK)
        fail_msg("%s: %s", model, err.msg);
    return mp;
}

static uint32_t phase_of(const xpb_model_program *mp, uint32_t op)
{
    for (uint32_t p = 0; p < mp->n_phases; p++)
        if (op >= mp->phases[p].first_op && op < mp->phases[p].first_op + mp->phases[p].n_ops)
            return p;
    return UINT32_MAX;
}

static int writes(const xpb_op *op, uint32_t t)
{
    for (uint32_t k = 0; k < op->n_outputs; k++)
        if (op->outputs[k] == t)
            return 1;
    return 0;
}

/* Every GRAD tensor is averaged exactly once, after its last writer and before its update, in
 * the same phase; returns how many ALL_REDUCE ops there are. */
static uint32_t check_placement(const xpb_model_program *mp)
{
    uint32_t n = 0;
    for (uint32_t t = 0; t < mp->n_tensors; t++) {
        if (mp->tensors[t].role != XPB_ROLE_GRAD)
            continue;
        uint32_t reduce = UINT32_MAX, writer = UINT32_MAX, update = UINT32_MAX, count = 0;
        for (uint32_t i = 0; i < mp->n_ops; i++) {
            const xpb_op *op = &mp->ops[i];
            if (op->kind == XPB_OP_ALL_REDUCE && op->inputs[0] == t)
                reduce = i, count++;
            if (writes(op, t))
                writer = i;
            if ((op->kind == XPB_OP_SGD_UPDATE || op->kind == XPB_OP_ADAM_UPDATE) &&
                op->inputs[1] == t)
                update = i;
        }
        if (count != 1 || !(writer < reduce && reduce < update) ||
            phase_of(mp, reduce) != phase_of(mp, update))
            fail_msg("'%s': %u ALL_REDUCE, written by op %u, averaged by op %u, read by update %u",
                     mp->tensors[t].name, count, writer, reduce, update);
        n++;
    }
    return n;
}

/* Buckets are runs of one bucket number, closed as soon as they reach `mb` MiB (the last one
 * of a phase may be smaller). Returns the number of buckets. */
static uint32_t check_buckets(const xpb_model_program *mp, double mb)
{
    uint32_t buckets = 0;
    for (uint32_t i = 0; i < mp->n_ops;) {
        const xpb_op *op = &mp->ops[i];
        if (op->kind != XPB_OP_ALL_REDUCE) {
            i++;
            continue;
        }
        uint32_t j = i;
        double bytes = 0, last = 0;
        while (j < mp->n_ops && mp->ops[j].kind == XPB_OP_ALL_REDUCE &&
               mp->ops[j].bucket == op->bucket && phase_of(mp, j) == phase_of(mp, i) &&
               (op->bucket != 0 || j == i)) {
            last = (double)xpb_tensor_bytes(&mp->tensors[mp->ops[j].inputs[0]]);
            bytes += last;
            j++;
        }
        /* a bucket below the size is the phase's last: backward ended before it filled */
        int later = 0;
        const xpb_phase *ph = &mp->phases[phase_of(mp, i)];
        for (uint32_t k = j; k < ph->first_op + ph->n_ops; k++)
            later |= mp->ops[k].kind == XPB_OP_ALL_REDUCE;
        if (mb > 0 && bytes - last >= mb * 1048576.0)
            fail_msg("bucket %u at op %u: %.0f bytes, full before its last gradient", op->bucket, i,
                     bytes);
        if (mb > 0 && bytes < mb * 1048576.0 && later)
            fail_msg("bucket %u at op %u: %.0f bytes, closed before it held %g MiB", op->bucket, i,
                     bytes, mb);
        if (mb == 0 && op->bucket != 0)
            fail_msg("bucket_mb 0: op %u has bucket %u", i, op->bucket);
        buckets++;
        i = j;
    }
    return buckets;
}

static void test_conv6(void **state)
{
    (void)state;
    xpb_model_program *one = build("conv6", 4, 0, XPB_PARALLEL_AUTO, 25);
    xpb_model_program *dp = build("conv6", 4, 2, XPB_PARALLEL_DATA, 1);
    /* 18 parameters (6 convolutions, 3 linear layers, with biases): 18 ALL_REDUCE */
    assert_int_equal(check_placement(dp), 18);
    assert_int_equal(one->program.opset, 1);
    assert_int_equal(dp->program.opset, 2);
    assert_int_equal(xpb_program_first_op_beyond(&dp->program, 1)->kind, XPB_OP_ALL_REDUCE);
    char msg[1024];
    if (xpb_program_validate(&dp->program, msg, sizeof msg) != XPB_OK)
        fail_msg("%s", msg);
    /* reverse order of the forward pass, and early: backward still runs after the first */
    uint32_t first = 0;
    while (dp->ops[first].kind != XPB_OP_ALL_REDUCE)
        first++;
    assert_string_equal(dp->ops[first].layer, "fc3");
    assert_true(dp->ops[first + 1].kind == XPB_OP_ALL_REDUCE);
    int backward_after = 0;
    for (uint32_t i = first; i < dp->n_ops; i++)
        backward_after |= dp->ops[i].kind == XPB_OP_CONV2D_BWD_WEIGHTS;
    assert_true(backward_after);
    /* 1 MiB buckets: several, each closed once it holds 1 MiB */
    uint32_t buckets = check_buckets(dp, 1);
    assert_true(buckets >= 4);
    /* the same program otherwise: ALL_REDUCE ops aside, the same op kinds */
    assert_int_equal(dp->n_ops - 18, one->n_ops);
    assert_int_equal(dp->n_tensors, one->n_tensors);
    xpb_model_program_free(dp);
    /* 25 MiB: conv6's 9 MB of gradients in one bucket, coalesced after backward */
    dp = build("conv6", 4, 2, XPB_PARALLEL_DATA, 25);
    assert_int_equal(check_buckets(dp, 25), 1);
    xpb_model_program_free(dp);
    /* 0: every gradient its own all-reduce, bucket 0 */
    dp = build("conv6", 4, 2, XPB_PARALLEL_DATA, 0);
    assert_int_equal(check_buckets(dp, 0), 18);
    xpb_model_program_free(dp);
    xpb_model_program_free(one);
}

/* One rank, or replicas, are the single-process program, op for op. */
static void test_one_rank_is_unchanged(void **state)
{
    (void)state;
    xpb_model_program *one = build("resnet18", 2, 0, XPB_PARALLEL_AUTO, 25);
    xpb_model_program *alone = build("resnet18", 2, 1, XPB_PARALLEL_DATA, 25);
    xpb_model_program *replicas = build("resnet18", 2, 2, XPB_PARALLEL_NONE, 25);
    const xpb_model_program *same[2] = {alone, replicas};
    for (int k = 0; k < 2; k++) {
        assert_int_equal(same[k]->n_ops, one->n_ops);
        assert_int_equal(same[k]->program.opset, 1);
        for (uint32_t i = 0; i < one->n_ops; i++) {
            assert_int_equal(same[k]->ops[i].kind, one->ops[i].kind);
            assert_memory_equal(same[k]->ops[i].inputs, one->ops[i].inputs,
                                sizeof one->ops[i].inputs);
        }
    }
    xpb_model_program_free(one);
    xpb_model_program_free(alone);
    xpb_model_program_free(replicas);
}

static void test_resnet18_and_two_phases(void **state)
{
    (void)state;
    xpb_model_program *dp = build("resnet18", 2, 3, XPB_PARALLEL_DATA, 4);
    assert_int_equal(check_placement(dp), 62); /* 62 trainable parameter tensors */
    assert_true(check_buckets(dp, 4) >= 5);
    char msg[1024];
    if (xpb_program_validate(&dp->program, msg, sizeof msg) != XPB_OK)
        fail_msg("%s", msg);
    xpb_model_program_free(dp);
    /* CycleGAN: each phase averages the gradients of its own group, buckets within it */
    dp = build("cyclegan", 1, 2, XPB_PARALLEL_AUTO, 2);
    assert_int_equal(dp->n_phases, 2);
    uint32_t n = check_placement(dp);
    assert_true(n > 0);
    check_buckets(dp, 2);
    if (xpb_program_validate(&dp->program, msg, sizeof msg) != XPB_OK)
        fail_msg("%s", msg);
    for (uint32_t p = 0; p < 2; p++) {
        int in_phase = 0;
        for (uint32_t i = dp->phases[p].first_op; i < dp->phases[p].first_op + dp->phases[p].n_ops;
             i++)
            in_phase += dp->ops[i].kind == XPB_OP_ALL_REDUCE;
        assert_true(in_phase > 0);
    }
    xpb_model_program_free(dp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv6),
        cmocka_unit_test(test_one_rank_is_unchanged),
        cmocka_unit_test(test_resnet18_and_two_phases),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
