/* The synthetic data of data-parallel runs (core/program/init.c): sample i of a global batch is
 * the same whatever the batch is split into, so N ranks at batch b draw exactly what one
 * process draws at batch N x b (images and labels, for every batch index), shards differ, and
 * one process's data does not depend on whether it was built for several ranks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugin/loader.h"
#include "program/init.h"
#include "program/model_program.h"

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

static xpb_model_program *build(uint32_t batch, uint32_t world, uint32_t rank, uint32_t mode)
{
    xpb_program_options c = {.model = "conv6",
                             .batch = batch,
                             .mode = mode,
                             .seed = 1234,
                             .lr = NAN,
                             .momentum = NAN,
                             .weight_decay = NAN,
                             .average_gradients = 0,
                             .world_size = world,
                             .rank = rank};
    xpb_model_program *mp = NULL;
    xpb_err err = {{0}};
    if (xpb_model_program_create(&mp, xpb_registry_model(registry, "conv6"), &c, &err))
        fail_msg("%s", err.msg);
    return mp;
}

/* The input tensors of mp, in order, into t[] (at most 4). */
static uint32_t inputs(const xpb_model_program *mp, uint32_t *t)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < mp->n_tensors && n < 4; i++)
        if (mp->tensors[i].role == XPB_ROLE_INPUT)
            t[n++] = i;
    return n;
}

static void check_split(uint32_t ranks, uint32_t batch, uint32_t mode)
{
    xpb_model_program *global = build(ranks * batch, 1, 0, mode);
    uint32_t gt[4], n = inputs(global, gt);
    assert_int_equal(n, 2); /* images and labels */
    for (uint64_t index = 0; index < 2; index++)
        for (uint32_t k = 0; k < n; k++) {
            size_t bytes = xpb_tensor_bytes(&global->tensors[gt[k]]), part = bytes / ranks;
            unsigned char *whole = malloc(bytes), *shard = malloc(part);
            assert_int_equal(xpb_model_program_batch(global, gt[k], index, whole), XPB_OK);
            for (uint32_t r = 0; r < ranks; r++) {
                xpb_model_program *mine = build(batch, ranks, r, mode);
                uint32_t mt[4];
                inputs(mine, mt);
                assert_int_equal(xpb_tensor_bytes(&mine->tensors[mt[k]]), part);
                assert_int_equal(xpb_model_program_batch(mine, mt[k], index, shard), XPB_OK);
                assert_memory_equal(shard, whole + r * part, part);
                if (r > 0)
                    assert_memory_not_equal(shard, whole, part);
                xpb_model_program_free(mine);
            }
            free(whole);
            free(shard);
        }
    xpb_model_program_free(global);
}

static void test_shards_are_slices_of_the_global_batch(void **state)
{
    (void)state;
    check_split(2, 3, XPB_MODE_TRAIN);
    check_split(3, 2, XPB_MODE_TRAIN);
    check_split(4, 1, XPB_MODE_INFERENCE);
}

/* A process alone draws the same batch whether its configuration says world size 0 or 1, and
 * the first samples of a larger batch are a smaller batch's. */
static void test_one_process(void **state)
{
    (void)state;
    xpb_model_program *a = build(2, 0, 0, XPB_MODE_TRAIN), *b = build(2, 1, 0, XPB_MODE_TRAIN);
    xpb_model_program *big = build(5, 1, 0, XPB_MODE_TRAIN);
    uint32_t ta[4], tb[4], tbig[4];
    inputs(a, ta);
    inputs(b, tb);
    inputs(big, tbig);
    size_t bytes = xpb_tensor_bytes(&a->tensors[ta[0]]);
    unsigned char *x = malloc(bytes), *y = malloc(bytes),
                  *z = malloc(xpb_tensor_bytes(&big->tensors[tbig[0]]));
    assert_int_equal(xpb_model_program_batch(a, ta[0], 0, x), XPB_OK);
    assert_int_equal(xpb_model_program_batch(b, tb[0], 0, y), XPB_OK);
    assert_int_equal(xpb_model_program_batch(big, tbig[0], 0, z), XPB_OK);
    assert_memory_equal(x, y, bytes);
    assert_memory_equal(x, z, bytes);
    assert_int_equal(xpb_model_program_batch(a, ta[0], 1, y), XPB_OK); /* the next batch */
    assert_memory_not_equal(x, y, bytes);
    free(x);
    free(y);
    free(z);
    xpb_model_program_free(a);
    xpb_model_program_free(b);
    xpb_model_program_free(big);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shards_are_slices_of_the_global_batch),
        cmocka_unit_test(test_one_process),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
