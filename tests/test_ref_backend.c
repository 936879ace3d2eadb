/* The reference backend through its ABI, as the host sees it: dlopen the plugin, query, list
 * and open its device, compile a hand-built training program (LINEAR + SOFTMAX_XENT + backward
 * + SGD_UPDATE, sealed as the host seals programs), write, run, read, and compare with the same
 * step computed here in double; the same program as an ABI 1.0 host lays it out; then the
 * error paths and their messages, among them the refusal, by name, of an op or attribute bit
 * of a later op set. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <xpubench/xpubench.h>

#include "program/program_abi.h"

#define PLUGIN_PATH XPB_TEST_PLUGIN_DIR "/backend_cpu_ref.so"

/* The tiny classifier: x[4,3] -> LINEAR(w[2,3], b[2]) -> SOFTMAX_XENT with labels[4]. */
enum { NB = 4, NI = 3, NO = 2 };
enum {
    T_X,
    T_LABELS,
    T_W,
    T_B,
    T_LOGITS,
    T_LOSS,
    T_PROB,
    T_DLOGITS,
    T_DW,
    T_DB,
    T_WBUF,
    T_BBUF,
    N_TENSORS
};
enum { N_OPS = 6 };

static const float LR = 0.1f, MOMENTUM = 0.9f;

typedef struct fixture {
    void *dl;
    const xpb_plugin_descriptor *desc;
    const xpb_backend_api *api;
    xpb_backend *be;
    xpb_tensor_desc tensors[N_TENSORS];
    xpb_op ops[N_OPS];
    xpb_phase phase;
    xpb_program prog;
    xpb_compile_options opts;
} fixture;

static fixture fx;

static void tensor(uint32_t id, const char *name, uint32_t dtype, uint32_t role, uint32_t flags,
                   uint32_t ndim, int64_t d0, int64_t d1)
{
    xpb_tensor_desc *t = &fx.tensors[id];
    memset(t, 0, sizeof *t);
    t->name = name;
    t->layer = "fc";
    t->dtype = dtype;
    t->role = role;
    t->flags = flags;
    t->ndim = ndim;
    t->dims[0] = d0;
    t->dims[1] = ndim > 1 ? d1 : 1;
    t->dims[2] = t->dims[3] = 1;
    t->grad_of = XPB_NO_TENSOR;
    t->first_op = 0;
    t->last_op = N_OPS - 1;
}

static void op(uint32_t i, uint32_t kind, const char *layer, uint32_t n_in, const uint32_t *in,
               uint32_t n_out, const uint32_t *out)
{
    xpb_op *o = &fx.ops[i];
    memset(o, 0, sizeof *o);
    o->kind = kind;
    o->layer = layer;
    o->n_inputs = n_in;
    o->n_outputs = n_out;
    for (uint32_t k = 0; k < XPB_MAX_OP_INPUTS; k++)
        o->inputs[k] = k < n_in ? in[k] : XPB_NO_TENSOR;
    for (uint32_t k = 0; k < XPB_MAX_OP_OUTPUTS; k++)
        o->outputs[k] = k < n_out ? out[k] : XPB_NO_TENSOR;
}

/* (Re)builds the training program and default options (fp32, profiling on) in fx. */
static void build_program(void)
{
    const uint32_t P = XPB_TENSOR_PERSISTENT, W = XPB_TENSOR_HOST_WRITE, R = XPB_TENSOR_HOST_READ;
    tensor(T_X, "x", XPB_DTYPE_F32, XPB_ROLE_INPUT, W, 2, NB, NI);
    tensor(T_LABELS, "labels", XPB_DTYPE_I32, XPB_ROLE_INPUT, W, 1, NB, 1);
    tensor(T_W, "fc.weight", XPB_DTYPE_F32, XPB_ROLE_PARAM, P | W | R, 2, NO, NI);
    tensor(T_B, "fc.bias", XPB_DTYPE_F32, XPB_ROLE_PARAM, P | W | R, 1, NO, 1);
    tensor(T_LOGITS, "logits", XPB_DTYPE_F32, XPB_ROLE_OUTPUT, 0, 2, NB, NO);
    tensor(T_LOSS, "loss", XPB_DTYPE_F32, XPB_ROLE_LOSS, R, 1, 1, 1);
    tensor(T_PROB, "loss.prob", XPB_DTYPE_F32, XPB_ROLE_WORKSPACE, 0, 2, NB, NO);
    tensor(T_DLOGITS, "logits.grad", XPB_DTYPE_F32, XPB_ROLE_ACTIVATION_GRAD, 0, 2, NB, NO);
    tensor(T_DW, "fc.weight.grad", XPB_DTYPE_F32, XPB_ROLE_GRAD, R, 2, NO, NI);
    tensor(T_DB, "fc.bias.grad", XPB_DTYPE_F32, XPB_ROLE_GRAD, R, 1, NO, 1);
    tensor(T_WBUF, "fc.weight.momentum", XPB_DTYPE_F32, XPB_ROLE_STATE, P, 2, NO, NI);
    tensor(T_BBUF, "fc.bias.momentum", XPB_DTYPE_F32, XPB_ROLE_STATE, P, 1, NO, 1);
    fx.tensors[T_DLOGITS].grad_of = T_LOGITS;
    fx.tensors[T_DW].grad_of = T_W;
    fx.tensors[T_DB].grad_of = T_B;

    op(0, XPB_OP_LINEAR, "fc", 3, (uint32_t[]){T_X, T_W, T_B}, 1, (uint32_t[]){T_LOGITS});
    op(1, XPB_OP_SOFTMAX_XENT, "loss", 2, (uint32_t[]){T_LOGITS, T_LABELS}, 2,
       (uint32_t[]){T_LOSS, T_PROB});
    op(2, XPB_OP_SOFTMAX_XENT_BWD, "loss", 2, (uint32_t[]){T_PROB, T_LABELS}, 1,
       (uint32_t[]){T_DLOGITS});
    fx.ops[2].attrs.scale = 1.0f;
    op(3, XPB_OP_LINEAR_BWD_WEIGHTS, "fc", 2, (uint32_t[]){T_DLOGITS, T_X}, 2,
       (uint32_t[]){T_DW, T_DB});
    op(4, XPB_OP_SGD_UPDATE, "fc", 3, (uint32_t[]){T_W, T_DW, T_WBUF}, 0, NULL);
    op(5, XPB_OP_SGD_UPDATE, "fc", 3, (uint32_t[]){T_B, T_DB, T_BBUF}, 0, NULL);
    for (int i = 4; i < 6; i++) {
        fx.ops[i].attrs.lr = LR;
        fx.ops[i].attrs.momentum = MOMENTUM;
    }

    fx.phase = (xpb_phase){.name = "train", .first_op = 0, .n_ops = N_OPS};
    fx.prog = (xpb_program){.training = 1,
                            .n_tensors = N_TENSORS,
                            .n_ops = N_OPS,
                            .n_phases = 1,
                            .tensors = fx.tensors,
                            .ops = fx.ops,
                            .phases = &fx.phase};
    xpb_program_seal(&fx.prog, fx.ops); /* op sets, attribute bits, names, strides */
    fx.opts = (xpb_compile_options){.struct_size = sizeof(xpb_compile_options),
                                    .precision = XPB_PRECISION_FP32,
                                    .fusion = 1,
                                    .profiling = 1};
}

static const float X[NB * NI] = {0.5f,  -1.0f, 2.0f, 1.5f,  0.25f, -0.5f,
                                 -2.0f, 1.0f,  0.0f, 0.75f, 0.75f, -1.25f};
static const int32_t LABELS[NB] = {1, 0, 1, 0};
static const float W0[NO * NI] = {0.1f, -0.2f, 0.3f, -0.4f, 0.5f, 0.05f};
static const float B0[NO] = {0.01f, -0.02f};

/* One training step of the program in double: returns the loss, updates w, b, the momentum
 * buffers, and leaves the gradients in dw, db. */
static double step_double(double *w, double *b, double *wbuf, double *bbuf, double *dw, double *db)
{
    double loss = 0, dz[NB * NO];
    for (int n = 0; n < NB; n++) {
        double z[NO], m = -INFINITY, sum = 0;
        for (int o = 0; o < NO; o++) {
            z[o] = b[o];
            for (int i = 0; i < NI; i++)
                z[o] += X[n * NI + i] * w[o * NI + i];
            m = fmax(m, z[o]);
        }
        for (int o = 0; o < NO; o++)
            sum += exp(z[o] - m);
        loss += log(sum) + m - z[LABELS[n]];
        for (int o = 0; o < NO; o++)
            dz[n * NO + o] = (exp(z[o] - m) / sum - (o == LABELS[n])) / NB;
    }
    for (int o = 0; o < NO; o++) {
        db[o] = 0;
        for (int n = 0; n < NB; n++)
            db[o] += dz[n * NO + o];
        for (int i = 0; i < NI; i++) {
            dw[o * NI + i] = 0;
            for (int n = 0; n < NB; n++)
                dw[o * NI + i] += dz[n * NO + o] * X[n * NI + i];
        }
    }
    for (int k = 0; k < NO * NI; k++) {
        wbuf[k] = (double)MOMENTUM * wbuf[k] + dw[k];
        w[k] -= (double)LR * wbuf[k];
    }
    for (int o = 0; o < NO; o++) {
        bbuf[o] = (double)MOMENTUM * bbuf[o] + db[o];
        b[o] -= (double)LR * bbuf[o];
    }
    return loss / NB;
}

static int group_setup(void **state)
{
    (void)state;
    fx.dl = dlopen(PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    if (!fx.dl) {
        fprintf(stderr, "dlopen %s: %s\n", PLUGIN_PATH, dlerror());
        return -1;
    }
    xpb_plugin_query_fn query;
    *(void **)&query = dlsym(fx.dl, XPB_PLUGIN_QUERY_SYMBOL);
    if (!query || query(&fx.desc, XPB_ABI_MAJOR, XPB_ABI_MINOR, NULL) != XPB_OK)
        return -1;
    fx.api = fx.desc->api;
    if (fx.api->open(&fx.be, 0) != XPB_OK)
        return -1;
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    if (fx.api)
        fx.api->close(fx.be);
    if (fx.dl)
        dlclose(fx.dl);
    return 0;
}

static void test_query(void **state)
{
    (void)state;
    xpb_plugin_query_fn query;
    *(void **)&query = dlsym(fx.dl, XPB_PLUGIN_QUERY_SYMBOL);
    assert_non_null(query);
    const xpb_plugin_descriptor *d = NULL;
    assert_int_equal(query(&d, XPB_ABI_MAJOR, XPB_ABI_MINOR + 3, NULL), XPB_OK);
    assert_ptr_equal(d, fx.desc);
    assert_int_equal(d->struct_size, sizeof(xpb_plugin_descriptor));
    assert_int_equal(d->abi_major, XPB_ABI_MAJOR);
    assert_int_equal(d->kind, XPB_PLUGIN_BACKEND);
    assert_string_equal(d->name, "cpu_ref");
    assert_string_equal(d->version, "1.2.0");
    assert_int_equal(d->abi_minor, XPB_ABI_MINOR);
    assert_int_equal(d->opset, XPB_OPSET_VERSION);
    /* single-threaded, no fusion: no bit; the entry points say what it reports */
    assert_int_equal(d->caps, 0);
    const xpb_backend_api *api = d->api;
    assert_int_equal(api->struct_size, sizeof(xpb_backend_api));
    assert_non_null(api->profile_read);
    assert_non_null(api->memory_stats);
    assert_null(api->energy_read);
    assert_non_null(api->device_count);
    assert_non_null(api->describe_device);
    assert_null(api->write_async);
    assert_null(api->host_alloc);
    assert_null(api->host_free);

    d = NULL; /* another major: refused, but named */
    assert_int_equal(query(&d, XPB_ABI_MAJOR + 1, 0, NULL), XPB_INCOMPATIBLE);
    assert_non_null(d);
    assert_string_equal(d->name, "cpu_ref");

    /* Only xpb_plugin_query is exported. */
    assert_null(dlsym(fx.dl, "ref_kernel_for"));
    assert_null(dlsym(fx.dl, "ref_relu"));
}

static void test_open_and_device_info(void **state)
{
    (void)state;
    xpb_device_info info = {.struct_size = sizeof info};
    assert_int_equal(fx.api->device_info(fx.be, &info), XPB_OK);
    assert_true(strlen(info.name) > 0);
    assert_string_equal(info.libraries, "none (plain C reference)");
    assert_int_equal(info.precisions, XPB_PRECISION_BIT(XPB_PRECISION_FP32));
    assert_int_equal(info.threads, 1);
    assert_true(info.peak_flops[XPB_PRECISION_FP32] == 0.0);
    assert_int_equal(info.kind, XPB_DEVICE_CPU);
    assert_int_equal(info.emulated_precisions, 0);
    printf("device: %s\n", info.name);

    /* Listed without opening: one device, described as device_info describes it. */
    uint32_t count = 0;
    assert_int_equal(fx.api->device_count(&count), XPB_OK);
    assert_int_equal(count, 1);
    xpb_device_info listed;
    memset(&listed, 0x5a, sizeof listed);
    listed.struct_size = sizeof listed;
    assert_int_equal(fx.api->describe_device(0, &listed), XPB_OK);
    assert_string_equal(listed.name, info.name);
    assert_int_equal(listed.kind, XPB_DEVICE_CPU);
    assert_int_equal(listed.memory_bytes, 0);
    assert_int_equal(listed.precisions, info.precisions);
    assert_int_equal(listed.emulated_precisions, 0);
    assert_int_equal(fx.api->describe_device(1, &listed), XPB_NO_DEVICE);
    assert_non_null(strstr(fx.api->last_error(NULL), "no device 1"));
    assert_int_equal(fx.api->device_count(NULL), XPB_INVALID_ARGUMENT);
    assert_int_equal(fx.api->describe_device(0, NULL), XPB_INVALID_ARGUMENT);

    /* An ABI 1.0 host's struct ends before kind: kind stays what the host put there. */
    xpb_device_info old;
    memset(&old, 0x5a, sizeof old);
    old.struct_size = offsetof(xpb_device_info, kind);
    assert_int_equal(fx.api->device_info(fx.be, &old), XPB_OK);
    assert_int_equal(old.kind, 0x5a5a5a5au);
    assert_int_equal(old.emulated_precisions, 0x5a5a5a5au);
    assert_int_equal(old.threads, 1);

    /* An older host's shorter struct: members past struct_size stay untouched. */
    xpb_device_info small;
    memset(&small, 0x5a, sizeof small);
    small.struct_size = offsetof(xpb_device_info, libraries);
    assert_int_equal(fx.api->device_info(fx.be, &small), XPB_OK);
    assert_int_equal((unsigned char)small.libraries[0], 0x5a);
    assert_int_equal(small.threads, 0x5a5a5a5au);

    xpb_backend *be = (xpb_backend *)&be; /* must be reset to NULL */
    assert_int_equal(fx.api->open(&be, 1), XPB_NO_DEVICE);
    assert_null(be);
    const char *msg = fx.api->last_error(NULL);
    assert_non_null(msg);
    assert_non_null(strstr(msg, "device 1"));
    fx.api->close(NULL);

    assert_int_equal(fx.api->open(&be, 0), XPB_OK);
    assert_non_null(be);
    assert_non_null(fx.api->last_error(be));
    fx.api->close(be);
}

static void write_inputs(xpb_executable *exe)
{
    const xpb_backend_api *api = fx.api;
    assert_int_equal(api->write(exe, T_X, X, sizeof X), XPB_OK);
    assert_int_equal(api->write(exe, T_LABELS, LABELS, sizeof LABELS), XPB_OK);
    assert_int_equal(api->write(exe, T_W, W0, sizeof W0), XPB_OK);
    assert_int_equal(api->write(exe, T_B, B0, sizeof B0), XPB_OK);
}

static void assert_close(const float *got, const double *want, int n, double tol, const char *what)
{
    for (int i = 0; i < n; i++)
        if (!(fabs((double)got[i] - want[i]) <= tol * (1.0 + fabs(want[i]))))
            fail_msg("%s[%d]: got %.9g, want %.9g", what, i, (double)got[i], want[i]);
}

static void test_train_steps(void **state)
{
    (void)state;
    const xpb_backend_api *api = fx.api;
    build_program();
    xpb_executable *exe = NULL;
    assert_int_equal(api->compile(&exe, fx.be, &fx.prog, &fx.opts), XPB_OK);
    assert_non_null(exe);
    write_inputs(exe);

    double w[NO * NI], b[NO], wbuf[NO * NI] = {0}, bbuf[NO] = {0}, dw[NO * NI], db[NO];
    for (int k = 0; k < NO * NI; k++)
        w[k] = W0[k];
    for (int o = 0; o < NO; o++)
        b[o] = B0[o];
    for (int s = 0; s < 3; s++) {
        double want_loss = step_double(w, b, wbuf, bbuf, dw, db);
        assert_int_equal(api->run(exe, 0), XPB_OK);
        assert_int_equal(api->synchronize(exe), XPB_OK);
        float loss, gw[NO * NI], gb[NO], dgw[NO * NI], dgb[NO];
        assert_int_equal(api->read(exe, T_LOSS, &loss, sizeof loss), XPB_OK);
        printf("step %d: loss %.7f (double: %.7f)\n", s, (double)loss, want_loss);
        assert_close(&loss, &want_loss, 1, 1e-5, "loss");
        assert_int_equal(api->read(exe, T_DW, dgw, sizeof dgw), XPB_OK);
        assert_int_equal(api->read(exe, T_DB, dgb, sizeof dgb), XPB_OK);
        assert_close(dgw, dw, NO * NI, 1e-5, "dw");
        assert_close(dgb, db, NO, 1e-5, "db");
        assert_int_equal(api->read(exe, T_W, gw, sizeof gw), XPB_OK);
        assert_int_equal(api->read(exe, T_B, gb, sizeof gb), XPB_OK);
        assert_close(gw, w, NO * NI, 1e-5, "w");
        assert_close(gb, b, NO, 1e-5, "b");
    }
    /* The loss must have gone down on this separable toy problem. */
    float last;
    assert_int_equal(api->read(exe, T_LOSS, &last, sizeof last), XPB_OK);
    assert_true(last < 0.69f);

    xpb_op_profile prof[N_OPS + 2];
    uint32_t count = 0;
    assert_int_equal(api->profile_read(exe, prof, N_OPS + 2, &count), XPB_OK);
    assert_int_equal(count, N_OPS);
    for (uint32_t i = 0; i < N_OPS; i++) {
        assert_int_equal(prof[i].op, i);
        assert_int_equal(prof[i].calls, 3);
        assert_int_equal(prof[i].fused_into, XPB_NO_TENSOR);
        assert_true(prof[i].seconds >= 0.0);
    }
    assert_int_equal(api->profile_read(exe, NULL, 0, &count), XPB_OK);
    assert_int_equal(count, N_OPS);

    uint64_t want_bytes = 0;
    for (int i = 0; i < N_TENSORS; i++)
        want_bytes += xpb_tensor_bytes(&fx.tensors[i]);
    xpb_memory_stats ms = {.struct_size = sizeof ms};
    assert_int_equal(api->memory_stats(exe, &ms), XPB_OK);
    assert_int_equal(ms.bytes_in_use, want_bytes);
    assert_int_equal(ms.peak_bytes, want_bytes);
    api->destroy(exe);
    api->destroy(NULL);
}

static void test_transfer_and_run_errors(void **state)
{
    (void)state;
    const xpb_backend_api *api = fx.api;
    build_program();
    fx.opts.profiling = 0;
    xpb_executable *exe = NULL;
    assert_int_equal(api->compile(&exe, fx.be, &fx.prog, &fx.opts), XPB_OK);
    write_inputs(exe);
    float buf[64] = {0};

    assert_int_equal(api->write(exe, T_X, X, sizeof X - 4), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(api->exe_last_error(exe), "bytes"));
    assert_int_equal(api->read(exe, T_W, buf, sizeof W0 + 4), XPB_INVALID_ARGUMENT);
    assert_int_equal(api->write(exe, N_TENSORS, X, sizeof X), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(api->exe_last_error(exe), "does not exist"));
    assert_int_equal(api->read(exe, 1000000, buf, 4), XPB_INVALID_ARGUMENT);
    assert_int_equal(api->write(exe, T_X, NULL, sizeof X), XPB_INVALID_ARGUMENT);
    /* Flags: logits are neither host-readable nor host-writable without keep_all. */
    assert_int_equal(api->read(exe, T_LOGITS, buf, NB * NO * 4), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(api->exe_last_error(exe), "HOST_READ"));
    assert_int_equal(api->write(exe, T_LOSS, buf, 4), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(api->exe_last_error(exe), "HOST_WRITE"));
    assert_int_equal(api->run(exe, 1), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(api->exe_last_error(exe), "phase 1"));
    /* profiling was off */
    uint32_t count;
    assert_int_not_equal(api->profile_read(exe, NULL, 0, &count), XPB_OK);
    assert_true(strlen(api->exe_last_error(exe)) > 0);

    /* A label outside [0, 2) fails the run with the layer, sample and label named. */
    const int32_t bad[NB] = {1, 0, 2, 0};
    assert_int_equal(api->write(exe, T_LABELS, bad, sizeof bad), XPB_OK);
    assert_int_equal(api->run(exe, 0), XPB_INVALID_ARGUMENT);
    const char *msg = api->exe_last_error(exe);
    printf("label error: %s\n", msg);
    assert_non_null(strstr(msg, "loss"));
    assert_non_null(strstr(msg, "sample 2"));
    assert_non_null(strstr(msg, "label 2"));
    assert_non_null(api->exe_last_error(NULL));
    api->destroy(exe);

    /* keep_all: every tensor is readable. */
    fx.opts.keep_all = 1;
    assert_int_equal(api->compile(&exe, fx.be, &fx.prog, &fx.opts), XPB_OK);
    write_inputs(exe);
    assert_int_equal(api->run(exe, 0), XPB_OK);
    float logits[NB * NO];
    assert_int_equal(api->read(exe, T_LOGITS, logits, sizeof logits), XPB_OK);
    double want0 = B0[0];
    for (int i = 0; i < NI; i++)
        want0 += (double)X[i] * W0[i];
    assert_close(logits, &want0, 1, 1e-6, "logits[0]");
    api->destroy(exe);
}

/* One step of fx.prog on a fresh executable: loss, w and b against the step in double. */
static void run_one_step_and_compare(const xpb_program *prog, uint32_t n_phases)
{
    const xpb_backend_api *api = fx.api;
    xpb_executable *exe = NULL;
    assert_int_equal(api->compile(&exe, fx.be, prog, &fx.opts), XPB_OK);
    write_inputs(exe);
    double w[NO * NI], b[NO], wbuf[NO * NI] = {0}, bbuf[NO] = {0}, dw[NO * NI], db[NO];
    for (int k = 0; k < NO * NI; k++)
        w[k] = W0[k];
    for (int o = 0; o < NO; o++)
        b[o] = B0[o];
    double want_loss = step_double(w, b, wbuf, bbuf, dw, db);
    for (uint32_t ph = 0; ph < n_phases; ph++)
        assert_int_equal(api->run(exe, ph), XPB_OK);
    assert_int_equal(api->synchronize(exe), XPB_OK);
    float loss, gw[NO * NI], gb[NO];
    assert_int_equal(api->read(exe, T_LOSS, &loss, sizeof loss), XPB_OK);
    assert_int_equal(api->read(exe, T_W, gw, sizeof gw), XPB_OK);
    assert_int_equal(api->read(exe, T_B, gb, sizeof gb), XPB_OK);
    assert_close(&loss, &want_loss, 1, 1e-5, "loss");
    assert_close(gw, w, NO * NI, 1e-5, "w");
    assert_close(gb, b, NO, 1e-5, "b");
    api->destroy(exe);
}

/* The program as an ABI 1.0 host lays it out: a shorter header (no phase_stride) and ops that
 * end at `layer` (no op set, attribute bits or names). cpu_ref must run it unchanged. */
static void test_program_of_an_abi_1_0_host(void **state)
{
    (void)state;
    build_program();
    enum { OLD_OP = offsetof(xpb_op, opset) };
    _Alignas(xpb_op) unsigned char old_ops[N_OPS * OLD_OP];
    for (int i = 0; i < N_OPS; i++)
        memcpy(old_ops + i * OLD_OP, &fx.ops[i], OLD_OP);
    xpb_program old = fx.prog;
    old.struct_size = offsetof(xpb_program, phase_stride);
    old.op_stride = OLD_OP;
    old.ops = (const xpb_op *)(const void *)old_ops;
    old.phase_stride = 12345; /* beyond struct_size: must not be read */
    run_one_step_and_compare(&old, 1);

    /* Refusals still name the op: by the only name a 1.0 host gives, its number. */
    ((xpb_op *)(void *)(old_ops + 2 * OLD_OP))->kind = 77;
    xpb_executable *exe = NULL;
    assert_int_equal(fx.api->compile(&exe, fx.be, &old, &fx.opts), XPB_UNSUPPORTED);
    assert_non_null(strstr(fx.api->last_error(fx.be), "op 2 UNKNOWN (layer 'loss')"));
}

/* Phases are walked by the host's phase_stride: a later minor may append to xpb_phase. */
static void test_phases_by_stride(void **state)
{
    (void)state;
    build_program();
    struct {
        xpb_phase phase;
        const char *appended; /* what a later minor version might add */
    } wide[2] = {{{"forward", 0, 2}, "x"}, {{"backward", 2, N_OPS - 2}, "y"}};
    xpb_program p = fx.prog;
    p.phases = &wide[0].phase;
    p.n_phases = 2;
    p.phase_stride = sizeof wide[0];
    run_one_step_and_compare(&p, 2);
}

/* Compiles fx.prog expecting `want`; checks *out stays NULL and the message contains every
 * non-NULL needle. */
static void expect_compile_error(xpb_status want, const char *needle1, const char *needle2)
{
    xpb_executable *exe = (xpb_executable *)&exe;
    assert_int_equal(fx.api->compile(&exe, fx.be, &fx.prog, &fx.opts), want);
    assert_null(exe);
    const char *msg = fx.api->last_error(fx.be);
    printf("compile error: %s\n", msg);
    assert_true(strlen(msg) > 0);
    if (needle1)
        assert_non_null(strstr(msg, needle1));
    if (needle2)
        assert_non_null(strstr(msg, needle2));
}

static void test_compile_errors(void **state)
{
    (void)state;
    build_program();
    fx.opts.precision = XPB_PRECISION_BF16_MIXED;
    expect_compile_error(XPB_UNSUPPORTED, "cpu_ref supports only fp32", NULL);
    fx.opts.precision = XPB_PRECISION_TF32;
    expect_compile_error(XPB_UNSUPPORTED, "fp32", NULL);

    /* An op of a later op set, as a newer host describes it: refused by its name. */
    build_program();
    fx.ops[2].kind = 999;
    fx.ops[2].kind_name = "FUTURE_OP";
    fx.ops[2].opset = 2;
    fx.prog.opset = 2;
    expect_compile_error(XPB_UNSUPPORTED, "op 2 FUTURE_OP (layer 'loss'): not implemented",
                         "kind 999");
    build_program();
    fx.ops[3].kind = XPB_OP_KIND_END_;
    fx.ops[3].kind_name = NULL;
    expect_compile_error(XPB_UNSUPPORTED, "op 3 UNKNOWN (layer 'fc'): not implemented", NULL);

    /* A known op with an attribute bit these headers do not know: refused, naming the bit. */
    build_program();
    fx.ops[0].attrs_set |= 1ull << 40;
    expect_compile_error(XPB_UNSUPPORTED, "op 0 LINEAR (layer 'fc'): not implemented",
                         "attribute bit 40,");
    fx.ops[0].attrs_set |= 1ull << 41;
    expect_compile_error(XPB_UNSUPPORTED, "attribute bits 40, 41,", NULL);

    /* The op set is the host's business (it refuses before compile): a program that says 2
     * but holds only op-set-1 ops compiles here. */
    build_program();
    fx.prog.opset = XPB_OPSET_VERSION + 1;
    xpb_executable *exe = NULL;
    assert_int_equal(fx.api->compile(&exe, fx.be, &fx.prog, &fx.opts), XPB_OK);
    fx.api->destroy(exe);

    build_program();
    fx.ops[1].inputs[0] = N_TENSORS + 5;
    expect_compile_error(XPB_INVALID_ARGUMENT, "SOFTMAX_XENT", "tensor 17");

    build_program();
    fx.ops[1].outputs[0] = XPB_NO_TENSOR; /* the loss is not optional */
    expect_compile_error(XPB_INVALID_ARGUMENT,
                         "op 1 SOFTMAX_XENT (layer 'loss'): output 0 (loss) is missing", NULL);

    build_program();
    fx.phase.n_ops = N_OPS + 1;
    expect_compile_error(XPB_INVALID_ARGUMENT, "phase", NULL);

    build_program();
    fx.tensors[T_X].dtype = 7;
    expect_compile_error(XPB_UNSUPPORTED, "'x'", "dtype");

    /* A shape the op cannot take (LINEAR's weight with the wrong input size). */
    build_program();
    fx.tensors[T_W].dims[1] = NI + 1;
    fx.tensors[T_DW].dims[1] = NI + 1;
    expect_compile_error(XPB_INVALID_ARGUMENT,
                         "op 0 LINEAR (layer 'fc'): input w \"fc.weight\" [2, 4] expects 4 "
                         "input features (dim 1), input x \"x\" [4, 3] has 3",
                         NULL);

    /* No options at all: defaults (fp32). */
    build_program();
    assert_int_equal(fx.api->compile(&exe, fx.be, &fx.prog, NULL), XPB_OK);
    fx.api->destroy(exe);
}

/* splitmix64 as docs/ops.md writes it. */
static uint64_t mix(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* DROPOUT's call index counts the runs of the op: run c uses stream c. */
static void test_dropout_call_index(void **state)
{
    (void)state;
    enum { N = 256 };
    const uint64_t seed = 2024;
    xpb_tensor_desc t[3];
    memset(t, 0, sizeof t);
    const char *names[3] = {"x", "y", "y.mask"};
    const uint32_t roles[3] = {XPB_ROLE_INPUT, XPB_ROLE_OUTPUT, XPB_ROLE_WORKSPACE};
    const uint32_t flags[3] = {XPB_TENSOR_HOST_WRITE, XPB_TENSOR_HOST_READ, 0};
    for (int i = 0; i < 3; i++) {
        t[i] = (xpb_tensor_desc){.name = names[i],
                                 .layer = "drop",
                                 .dtype = XPB_DTYPE_F32,
                                 .role = roles[i],
                                 .flags = flags[i],
                                 .ndim = 2,
                                 .dims = {4, N / 4, 1, 1},
                                 .grad_of = XPB_NO_TENSOR};
    }
    xpb_op o = {.kind = XPB_OP_DROPOUT, .n_inputs = 1, .n_outputs = 2, .layer = "drop"};
    for (int k = 0; k < XPB_MAX_OP_INPUTS; k++)
        o.inputs[k] = XPB_NO_TENSOR;
    for (int k = 0; k < XPB_MAX_OP_OUTPUTS; k++)
        o.outputs[k] = XPB_NO_TENSOR;
    o.inputs[0] = 0;
    o.outputs[0] = 1;
    o.outputs[1] = 2;
    o.attrs.dropout_p = 0.5f;
    o.attrs.seed = seed;
    xpb_phase ph = {.name = "fwd", .first_op = 0, .n_ops = 1};
    xpb_program p = {
        .n_tensors = 3, .n_ops = 1, .n_phases = 1, .tensors = t, .ops = &o, .phases = &ph};
    xpb_program_seal(&p, &o);
    xpb_compile_options opts = {.struct_size = sizeof opts, .precision = XPB_PRECISION_FP32};
    xpb_executable *exe = NULL;
    assert_int_equal(fx.api->compile(&exe, fx.be, &p, &opts), XPB_OK);
    float x[N], y[N];
    for (int i = 0; i < N; i++)
        x[i] = 1.0f + (float)i;
    assert_int_equal(fx.api->write(exe, 0, x, sizeof x), XPB_OK);
    for (uint64_t c = 0; c < 3; c++) {
        assert_int_equal(fx.api->run(exe, 0), XPB_OK);
        assert_int_equal(fx.api->read(exe, 1, y, sizeof y), XPB_OK);
        uint64_t h = mix(seed + 0x9E3779B97F4A7C15ull * (c + 1));
        for (int i = 0; i < N; i++) {
            double u = (double)(mix(h + (uint64_t)i) >> 40) / 16777216.0;
            float want = u >= 0.5 ? x[i] * 2.0f : 0.0f;
            if (y[i] != want)
                fail_msg("run %d element %d: got %g, want %g", (int)c, i, (double)y[i],
                         (double)want);
        }
    }
    fx.api->destroy(exe);

    /* The optional mask output absent (XPB_NO_TENSOR): y is the same as on the first run. */
    o.outputs[1] = XPB_NO_TENSOR;
    assert_int_equal(fx.api->compile(&exe, fx.be, &p, &opts), XPB_OK);
    assert_int_equal(fx.api->write(exe, 0, x, sizeof x), XPB_OK);
    assert_int_equal(fx.api->run(exe, 0), XPB_OK);
    assert_int_equal(fx.api->read(exe, 1, y, sizeof y), XPB_OK);
    uint64_t h = mix(seed + 0x9E3779B97F4A7C15ull);
    for (int i = 0; i < N; i++) {
        double u = (double)(mix(h + (uint64_t)i) >> 40) / 16777216.0;
        assert_true(y[i] == (u >= 0.5 ? x[i] * 2.0f : 0.0f));
    }
    fx.api->destroy(exe);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_query),
        cmocka_unit_test(test_open_and_device_info),
        cmocka_unit_test(test_train_steps),
        cmocka_unit_test(test_transfer_and_run_errors),
        cmocka_unit_test(test_compile_errors),
        cmocka_unit_test(test_dropout_call_index),
        cmocka_unit_test(test_program_of_an_abi_1_0_host),
        cmocka_unit_test(test_phases_by_stride),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
