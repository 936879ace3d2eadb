/* ALL_REDUCE on both CPU backends (plugins/backend_cpu_ref/collective.c,
 * plugins/backend_cpu_onednn/kern_comm.c) against a communicator simulated in one process: a
 * second rank whose gradients are the first's plus 1, so that the mean is x + 0.5 for every
 * element that went through exactly one collective. Buckets: cpu_ref sums every gradient on
 * its own, cpu_onednn a bucket at once; both are right either way. Without a communicator,
 * or with one rank, the op leaves its gradient alone; a failing collective fails run() with
 * the communicator's message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "plugin/loader.h"
#include "program/program_abi.h"

static xpb_registry *registry;

/* The simulated communicator: rank 0 of `size`, the other rank holding x + 1. */
typedef struct fake {
    uint32_t calls;
    size_t floats;
    int fail;
} fake;

static xpb_status fake_sum(void *ctx, float *data, size_t count)
{
    fake *f = ctx;
    f->calls++;
    f->floats += count;
    if (f->fail)
        return XPB_DEVICE_ERROR;
    for (size_t i = 0; i < count; i++)
        data[i] = data[i] + (data[i] + 1.0f);
    return XPB_OK;
}

static xpb_status fake_broadcast(void *ctx, void *data, size_t bytes, uint32_t root)
{
    (void)ctx, (void)data, (void)bytes, (void)root;
    return XPB_OK;
}

static xpb_status fake_barrier(void *ctx)
{
    (void)ctx;
    return XPB_OK;
}

static const char *fake_error(void *ctx)
{
    (void)ctx;
    return "fake failure of the transport";
}

/* Gradients g0 [5], g1 [3, 4], g2 [2, 3, 4, 5] averaged by ALL_REDUCE ops of buckets b[3]. */
struct grads {
    xpb_tensor_desc t[3];
    xpb_op ops[3];
    xpb_phase phase;
    xpb_program p;
};

static void grads_init(struct grads *g, const uint32_t *b)
{
    static const int64_t dims[3][4] = {{5, 1, 1, 1}, {3, 4, 1, 1}, {2, 3, 4, 5}};
    static const uint32_t ndim[3] = {1, 2, 4};
    static const char *const names[3] = {"g0", "g1", "g2"};
    memset(g, 0, sizeof *g);
    for (uint32_t i = 0; i < 3; i++) {
        g->t[i] = (xpb_tensor_desc){.name = names[i],
                                    .layer = "",
                                    .dtype = XPB_DTYPE_F32,
                                    .role = XPB_ROLE_GRAD,
                                    .ndim = ndim[i],
                                    .flags = XPB_TENSOR_HOST_WRITE | XPB_TENSOR_HOST_READ,
                                    .grad_of = XPB_NO_TENSOR,
                                    .last_op = 2};
        memcpy(g->t[i].dims, dims[i], sizeof dims[i]);
        xpb_op *op = &g->ops[i];
        op->kind = XPB_OP_ALL_REDUCE;
        op->layer = names[i];
        op->n_inputs = 1;
        for (int k = 0; k < XPB_MAX_OP_INPUTS; k++)
            op->inputs[k] = XPB_NO_TENSOR;
        for (int k = 0; k < XPB_MAX_OP_OUTPUTS; k++)
            op->outputs[k] = XPB_NO_TENSOR;
        op->inputs[0] = i;
        op->bucket = b[i];
    }
    g->phase = (xpb_phase){"train", 0, 3};
    g->p.n_tensors = 3;
    g->p.n_ops = 3;
    g->p.n_phases = 1;
    g->p.tensors = g->t;
    g->p.ops = g->ops;
    g->p.phases = &g->phase;
    g->p.training = 1;
    xpb_program_seal(&g->p, g->ops);
}

/* Runs the program on `backend` with communicator `comm` (NULL: none): writes x[i] = i / 8,
 * runs, and checks every element reads `x + shift`. Returns run()'s status; *msg gets the
 * executable's message. */
static xpb_status run_grads(const char *backend, const uint32_t *buckets,
                            const xpb_communicator *comm, float shift, char *msg, size_t size)
{
    const xpb_backend_api *api = xpb_registry_backend(registry, backend);
    struct grads g;
    grads_init(&g, buckets);
    xpb_backend *be = NULL;
    xpb_executable *exe = NULL;
    xpb_compile_options o = {.struct_size = sizeof o,
                             .precision = XPB_PRECISION_FP32,
                             .fusion = 1,
                             .threads = 1,
                             .comm = comm};
    assert_int_equal(api->open(&be, 0), XPB_OK);
    if (api->compile(&exe, be, &g.p, &o) != XPB_OK)
        fail_msg("%s: %s", backend, api->last_error(be));
    float x[120];
    for (uint32_t t = 0; t < 3; t++) {
        size_t n = (size_t)xpb_tensor_numel(&g.t[t]);
        for (size_t i = 0; i < n; i++)
            x[i] = (float)(i + t) / 8;
        assert_int_equal(api->write(exe, t, x, n * 4), XPB_OK);
    }
    xpb_status st = api->run(exe, 0);
    if (st == XPB_OK)
        st = api->synchronize(exe);
    snprintf(msg, size, "%s", api->exe_last_error(exe));
    for (uint32_t t = 0; st == XPB_OK && t < 3; t++) {
        size_t n = (size_t)xpb_tensor_numel(&g.t[t]);
        assert_int_equal(api->read(exe, t, x, n * 4), XPB_OK);
        for (size_t i = 0; i < n; i++)
            if (x[i] != (float)(i + t) / 8 + shift)
                fail_msg("%s: %s[%zu] is %g, expected %g", backend, g.t[t].name, i, x[i],
                         (float)(i + t) / 8 + shift);
    }
    api->destroy(exe);
    api->close(be);
    return st;
}

static void check_backend(const char *backend, uint32_t coalesced_calls)
{
    if (!xpb_registry_backend(registry, backend)) {
        fprintf(stderr, "skipped: backend %s is not built\n", backend);
        return;
    }
    fake f = {0};
    xpb_communicator comm = {.struct_size = sizeof comm,
                             .rank = 0,
                             .size = 2,
                             .local_size = 1,
                             .kind = "fake",
                             .ctx = &f,
                             .allreduce_sum_f32 = fake_sum,
                             .broadcast = fake_broadcast,
                             .barrier = fake_barrier,
                             .last_error = fake_error};
    char msg[1024];
    static const uint32_t alone[3] = {0, 0, 0}, bucketed[3] = {1, 1, 2};
    assert_int_equal(run_grads(backend, alone, &comm, 0.5f, msg, sizeof msg), XPB_OK);
    assert_int_equal(f.calls, 3);
    assert_int_equal(f.floats, 5 + 12 + 120);
    f = (fake){0};
    assert_int_equal(run_grads(backend, bucketed, &comm, 0.5f, msg, sizeof msg), XPB_OK);
    assert_int_equal(f.calls, coalesced_calls);
    assert_int_equal(f.floats, 5 + 12 + 120);
    /* one process: the mean over one rank */
    f = (fake){0};
    assert_int_equal(run_grads(backend, bucketed, NULL, 0.0f, msg, sizeof msg), XPB_OK);
    comm.size = 1;
    assert_int_equal(run_grads(backend, bucketed, &comm, 0.0f, msg, sizeof msg), XPB_OK);
    assert_int_equal(f.calls, 0);
    /* a failed collective fails the run, naming the op and saying why */
    comm.size = 2;
    f.fail = 1;
    assert_int_equal(run_grads(backend, alone, &comm, 0.0f, msg, sizeof msg), XPB_DEVICE_ERROR);
    assert_non_null(strstr(msg, "ALL_REDUCE"));
    assert_non_null(strstr(msg, "fake failure of the transport"));
    assert_int_equal(f.calls, 1); /* and no other collective after it */
}

static void test_cpu_ref(void **state)
{
    (void)state;
    check_backend("cpu_ref", 3); /* one collective per gradient */
}

static void test_cpu_onednn(void **state)
{
    (void)state;
    check_backend("cpu_onednn", 2); /* g0 and g1 as one */
}

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_ref),
        cmocka_unit_test(test_cpu_onednn),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
