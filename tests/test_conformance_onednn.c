/* The cpu_onednn backend against the reference through the conformance suite (quick shape set)
 * in fp32 (fused and unfused) and bf16-mixed, plus one training step of every model at reduced
 * size, the im2col + matmul backward weights forced on; and what the backend says about itself:
 * device_info, refused precision policies, memory statistics and per-op profiles with fusion.
 * Skipped (not run) when the build has no oneDNN. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "conformance.h"
#include "loader.h"

static xpb_registry *registry;

static int setup(void **state)
{
    (void)state;
    const char *dirs[1] = {XPB_TEST_PLUGIN_DIR};
    xpb_err err = {{0}};
    if (xpb_registry_load(&registry, dirs, 1, &err) != XPB_OK)
        return -1;
    if (!xpb_registry_backend(registry, "cpu_onednn") ||
        !xpb_registry_backend(registry, "cpu_ref")) {
        fprintf(stderr, "cpu_onednn or cpu_ref not found in %s\n", XPB_TEST_PLUGIN_DIR);
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

/* Runs the quick suite and asserts that every case passed and that it checked something. */
static void suite(uint32_t precision, uint32_t fusion, int models, const char *filter)
{
    xpb_conformance_options opt;
    xpb_conformance_defaults(&opt);
    opt.precision = precision;
    opt.fusion = fusion;
    opt.quick = 1;
    opt.models = models;
    opt.filter = filter;
    opt.threads = 2;
    xpb_conformance_summary sum;
    xpb_err err = {{0}};
    xpb_status st = xpb_conformance_run(&sum, registry, "cpu_onednn", &opt, &err);
    if (st != XPB_OK)
        fprintf(stderr, "conformance: %s\n", err.msg);
    assert_int_equal(st, XPB_OK);
    assert_int_equal(sum.failed, 0);
    assert_int_equal(sum.unsupported, 0);
    assert_true(sum.passed >= (models ? 6u : filter ? 3u : 60u));
}

static void test_ops_fp32_fused(void **state)
{
    (void)state;
    suite(XPB_PRECISION_FP32, 1, 0, NULL);
}

static void test_ops_fp32_unfused(void **state)
{
    (void)state;
    suite(XPB_PRECISION_FP32, 0, 0, NULL);
}

static void test_ops_bf16(void **state)
{
    (void)state;
    suite(XPB_PRECISION_BF16_MIXED, 1, 0, NULL);
}

static void test_models_fp32(void **state)
{
    (void)state;
    suite(XPB_PRECISION_FP32, 1, 1, "model");
}

static void test_models_bf16(void **state)
{
    (void)state;
    suite(XPB_PRECISION_BF16_MIXED, 1, 1, "model");
}

/* The im2col + matmul lowering of backward weights (normally chosen by timing, for small maps)
 * forced on every eligible op: the convolution cases and a model step still agree. */
static void test_lowered_backward_weights(void **state)
{
    (void)state;
    setenv("XPB_ONEDNN_FORCE_LOWER", "1", 1);
    suite(XPB_PRECISION_FP32, 1, 0, "CONV2D_BWD_WEIGHTS");
    suite(XPB_PRECISION_BF16_MIXED, 1, 0, "chain");
    unsetenv("XPB_ONEDNN_FORCE_LOWER");
}

/* The suite itself must fail a wrong backend: cpu_ref against cpu_ref passes, so check that a
 * refused policy is reported as unsupported rather than as a pass. */
static void test_unsupported_policy_is_reported(void **state)
{
    (void)state;
    xpb_conformance_options opt;
    xpb_conformance_defaults(&opt);
    opt.precision = XPB_PRECISION_TF32;
    opt.quick = 1;
    opt.models = 0;
    opt.filter = "LINEAR";
    opt.out = NULL;
    xpb_conformance_summary sum;
    xpb_err err = {{0}};
    assert_int_equal(xpb_conformance_run(&sum, registry, "cpu_onednn", &opt, &err), XPB_OK);
    assert_int_equal(sum.passed, 0);
    assert_true(sum.unsupported > 0);
}

/* A one-op program: y = conv(x, w, b) -> relu, x[2,8,6,6], w[16,8,3,3]. */
typedef struct tiny {
    xpb_tensor_desc t[5];
    xpb_op ops[2];
    xpb_phase phase;
    xpb_program prog;
} tiny;

static void tiny_init(tiny *p)
{
    memset(p, 0, sizeof *p);
    static const char *names[5] = {"x", "w", "b", "conv", "y"};
    static const int64_t dims[5][4] = {
        {2, 8, 6, 6}, {16, 8, 3, 3}, {16, 1, 1, 1}, {2, 16, 6, 6}, {2, 16, 6, 6}};
    static const uint32_t roles[5] = {XPB_ROLE_INPUT, XPB_ROLE_PARAM, XPB_ROLE_PARAM,
                                      XPB_ROLE_ACTIVATION, XPB_ROLE_OUTPUT};
    for (int i = 0; i < 5; i++) {
        xpb_tensor_desc *t = &p->t[i];
        t->name = names[i];
        t->layer = "conv";
        t->dtype = XPB_DTYPE_F32;
        t->role = roles[i];
        t->ndim = i == 2 ? 1 : 4;
        memcpy(t->dims, dims[i], sizeof t->dims);
        t->grad_of = XPB_NO_TENSOR;
        t->flags = i == 0   ? XPB_TENSOR_HOST_WRITE
                   : i < 3  ? XPB_TENSOR_PERSISTENT | XPB_TENSOR_HOST_WRITE | XPB_TENSOR_HOST_READ
                   : i == 4 ? XPB_TENSOR_HOST_READ
                            : 0;
        t->first_op = i == 3 ? 0 : 0;
        t->last_op = i == 3 ? 1 : 1;
    }
    xpb_op *c = &p->ops[0], *r = &p->ops[1];
    c->kind = XPB_OP_CONV2D;
    c->n_inputs = 3;
    c->n_outputs = 1;
    c->inputs[0] = 0;
    c->inputs[1] = 1;
    c->inputs[2] = 2;
    for (int k = 3; k < XPB_MAX_OP_INPUTS; k++)
        c->inputs[k] = XPB_NO_TENSOR;
    c->outputs[0] = 3;
    for (int k = 1; k < XPB_MAX_OP_OUTPUTS; k++)
        c->outputs[k] = r->outputs[k] = XPB_NO_TENSOR;
    c->attrs.stride[0] = c->attrs.stride[1] = 1;
    c->attrs.pad[0] = c->attrs.pad[1] = 1;
    c->attrs.dilation[0] = c->attrs.dilation[1] = 1;
    c->layer = "conv";
    r->kind = XPB_OP_RELU;
    r->n_inputs = 1;
    r->n_outputs = 1;
    r->inputs[0] = 3;
    for (int k = 1; k < XPB_MAX_OP_INPUTS; k++)
        r->inputs[k] = XPB_NO_TENSOR;
    r->outputs[0] = 4;
    r->layer = "relu";
    p->phase = (xpb_phase){"infer", 0, 2};
    p->prog = (xpb_program){.struct_size = sizeof p->prog,
                            .opset = 1,
                            .n_tensors = 5,
                            .n_ops = 2,
                            .n_phases = 1,
                            .tensor_stride = sizeof(xpb_tensor_desc),
                            .op_stride = sizeof(xpb_op),
                            .tensors = p->t,
                            .ops = p->ops,
                            .phases = &p->phase,
                            .phase_stride = sizeof(xpb_phase)};
}

static void test_device_info_and_options(void **state)
{
    (void)state;
    const xpb_backend_api *api = xpb_registry_backend(registry, "cpu_onednn");
    xpb_backend *be = NULL;
    assert_int_equal(api->open(&be, 0), XPB_OK);
    xpb_backend *none = NULL;
    assert_int_equal(api->open(&none, 1), XPB_NO_DEVICE);
    assert_non_null(strstr(api->last_error(NULL), "device"));
    xpb_device_info info = {.struct_size = sizeof info};
    assert_int_equal(api->device_info(be, &info), XPB_OK);
    assert_non_null(strstr(info.libraries, "oneDNN 2."));
    assert_true(info.threads >= 1);
    assert_true(info.precisions & XPB_PRECISION_BIT(XPB_PRECISION_FP32));
    assert_true(info.peak_flops[XPB_PRECISION_FP32] > 1e9);

    tiny p;
    tiny_init(&p);
    xpb_executable *exe = NULL;
    /* refused policies name themselves */
    xpb_compile_options o = {.struct_size = sizeof o,
                             .precision = XPB_PRECISION_FP16_MIXED,
                             .fusion = 1,
                             .threads = 2,
                             .profiling = 1};
    assert_int_equal(api->compile(&exe, be, &p.prog, &o), XPB_UNSUPPORTED);
    assert_non_null(strstr(api->last_error(be), "fp16"));
    o.precision = XPB_PRECISION_TF32;
    assert_int_equal(api->compile(&exe, be, &p.prog, &o), XPB_UNSUPPORTED);
    assert_non_null(strstr(api->last_error(be), "tf32"));

    /* fused and profiled: relu is done by the convolution's kernel */
    o.precision = XPB_PRECISION_FP32;
    assert_int_equal(api->compile(&exe, be, &p.prog, &o), XPB_OK);
    float x[2 * 8 * 36], w[16 * 72], b[16], y[2 * 16 * 36];
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++)
        x[i] = (float)((int)(i % 13) - 6) * 0.1f;
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
        w[i] = (float)((int)(i % 7) - 3) * 0.05f;
    for (size_t i = 0; i < 16; i++)
        b[i] = -0.1f;
    assert_int_equal(api->write(exe, 0, x, sizeof x), XPB_OK);
    assert_int_equal(api->write(exe, 1, w, sizeof w), XPB_OK);
    assert_int_equal(api->write(exe, 2, b, sizeof b), XPB_OK);
    assert_int_equal(api->run(exe, 0), XPB_OK);
    assert_int_equal(api->synchronize(exe), XPB_OK);
    assert_int_equal(api->read(exe, 4, y, sizeof y), XPB_OK);
    /* the intermediate is elided: not readable */
    assert_int_not_equal(api->read(exe, 3, y, sizeof y), XPB_OK);
    int positive = 0, negative = 0;
    for (size_t i = 0; i < sizeof y / sizeof y[0]; i++) {
        positive += y[i] > 0;
        negative += y[i] < 0;
    }
    assert_true(positive > 0);
    assert_int_equal(negative, 0);
    xpb_op_profile prof[2];
    uint32_t count = 0;
    assert_int_equal(api->profile_read(exe, prof, 2, &count), XPB_OK);
    assert_int_equal(count, 2);
    assert_int_equal(prof[0].calls, 1);
    assert_true(prof[0].seconds > 0);
    assert_int_equal(prof[1].fused_into, 0);
    xpb_memory_stats ms = {.struct_size = sizeof ms};
    assert_int_equal(api->memory_stats(exe, &ms), XPB_OK);
    assert_true(ms.peak_bytes >= sizeof x + sizeof w + sizeof b + sizeof y);
    api->destroy(exe);
    api->close(be);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_info_and_options),
        cmocka_unit_test(test_unsupported_policy_is_reported),
        cmocka_unit_test(test_ops_fp32_fused),
        cmocka_unit_test(test_ops_fp32_unfused),
        cmocka_unit_test(test_ops_bf16),
        cmocka_unit_test(test_lowered_backward_weights),
        cmocka_unit_test(test_models_fp32),
        cmocka_unit_test(test_models_bf16),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
