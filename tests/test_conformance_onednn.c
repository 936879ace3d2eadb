/* The cpu_onednn backend against the reference through the conformance suite (quick shape set,
 * op set 3 included: nothing may be unsupported) in fp32 (fused and unfused) and bf16-mixed, plus
 * one training step of every model at reduced size (the sequence models and AlexNet included),
 * the im2col + matmul backward weights forced on;
 * and the backend's ABI 1.1 surface, the test_api_* cases (also registered as the light test
 * test_onednn_api, which runs them alone, and as test_onednn_api_avx512_core under
 * DNNL_MAX_CPU_ISA=AVX512_CORE, where bf16 must come out emulated): which precisions a CPU runs
 * natively for every combination of features, device_info / device_count / describe_device,
 * refusals naming the op (unknown kinds and attribute bits, and the op set's shape rules; what
 * op set 3 still refuses is test_onednn_opset3.c), write_async, phases walked by stride, refused
 * precision policies, memory statistics and per-op profiles with fusion. Disabled (not run) when
 * the build has no oneDNN.
 *
 * Usage: test_conformance_onednn [cmocka test-name pattern, e.g. "test_api_*"] */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#ifdef XPB_TEST_HAVE_ONEDNN
#include <dnnl.h>
#include <dnnl_debug.h>

#include "isa.h"
#endif

#include "check/conformance.h"
#include "check/conformance_case.h"
#include "plugin/loader.h"
#include "program/program_abi.h"

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

/* Runs the quick suite and asserts that every case passed (cpu_onednn implements op sets 1 to 3:
 * nothing is unsupported) and that it checked something. */
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
    /* models: 8 cases of 4 rows (conv6, vgg16, resnet18, cyclegan, alexnet, lstm, and the
     * transformer's two variants; the cmake file builds every model plugin before the test) */
    assert_true(sum.passed >= (models ? 32u : filter ? 3u : 60u));
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
static void test_api_unsupported_policy_is_reported(void **state)
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

/* ---- a small program: y = relu(conv(x, w, b)), x[2,8,6,6], w[16,8,3,3], pad 1 ---- */

/* A phase as a later ABI may grow it: the backend must walk phases by phase_stride. */
typedef struct wide_phase {
    xpb_phase ph;
    uint64_t future; /* garbage a backend that ignores the stride would read as phase 1 */
} wide_phase;

typedef struct tiny {
    xpb_tensor_desc t[5];
    xpb_op ops[2];
    wide_phase phases[2];
    xpb_program prog;
} tiny;

enum { TX = 0, TW = 1, TB = 2, TCONV = 3, TY = 4 };
#define TINY_X (2 * 8 * 6 * 6)
#define TINY_W (16 * 8 * 3 * 3)
#define TINY_Y (2 * 16 * 6 * 6)

/* One phase "infer" (conv and relu) or two ("conv", then "relu"), sealed as the host seals every
 * program (per-op op set, attribute bits and names). */
static void tiny_init(tiny *p, int two_phases)
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
        t->ndim = i == TB ? 1 : 4;
        memcpy(t->dims, dims[i], sizeof t->dims);
        t->grad_of = XPB_NO_TENSOR;
        t->flags = i == TX   ? XPB_TENSOR_HOST_WRITE
                   : i < 3   ? XPB_TENSOR_PERSISTENT | XPB_TENSOR_HOST_WRITE | XPB_TENSOR_HOST_READ
                   : i == TY ? XPB_TENSOR_HOST_READ
                             : 0;
        t->first_op = 0;
        t->last_op = 1;
    }
    xpb_op *c = &p->ops[0], *r = &p->ops[1];
    c->kind = XPB_OP_CONV2D;
    c->n_inputs = 3;
    c->n_outputs = 1;
    c->inputs[0] = TX;
    c->inputs[1] = TW;
    c->inputs[2] = TB;
    for (int k = 3; k < XPB_MAX_OP_INPUTS; k++)
        c->inputs[k] = XPB_NO_TENSOR;
    c->outputs[0] = TCONV;
    for (int k = 1; k < XPB_MAX_OP_OUTPUTS; k++)
        c->outputs[k] = r->outputs[k] = XPB_NO_TENSOR;
    c->attrs.stride[0] = c->attrs.stride[1] = 1;
    c->attrs.pad[0] = c->attrs.pad[1] = 1;
    c->attrs.dilation[0] = c->attrs.dilation[1] = 1;
    c->layer = "conv";
    r->kind = XPB_OP_RELU;
    r->n_inputs = 1;
    r->n_outputs = 1;
    r->inputs[0] = TCONV;
    for (int k = 1; k < XPB_MAX_OP_INPUTS; k++)
        r->inputs[k] = XPB_NO_TENSOR;
    r->outputs[0] = TY;
    r->layer = "relu";
    if (two_phases) {
        p->phases[0].ph = (xpb_phase){"conv", 0, 1};
        p->phases[1].ph = (xpb_phase){"relu", 1, 1};
    } else {
        p->phases[0].ph = (xpb_phase){"infer", 0, 2};
    }
    p->phases[0].future = p->phases[1].future = UINT64_MAX;
    p->prog.n_tensors = 5;
    p->prog.n_ops = 2;
    p->prog.n_phases = two_phases ? 2 : 1;
    p->prog.tensors = p->t;
    p->prog.ops = p->ops;
    p->prog.phases = &p->phases[0].ph;
    xpb_program_seal(&p->prog, p->ops);
    p->prog.phase_stride = sizeof(wide_phase);
}

/* Deterministic inputs; `variant` changes x. */
static void tiny_data(float *x, float *w, float *b, int variant)
{
    for (int i = 0; i < TINY_X; i++)
        x[i] = (float)((int)((i * (variant + 3)) % 13) - 6) * 0.1f;
    for (int i = 0; i < TINY_W; i++)
        w[i] = (float)((int)(i % 7) - 3) * 0.05f;
    for (int i = 0; i < 16; i++)
        b[i] = -0.1f + 0.01f * (float)i;
}

/* y = relu(conv(x, w, b)) computed here, the plain way, in double. */
static void tiny_expected(float *y, const float *x, const float *w, const float *b)
{
    for (int n = 0; n < 2; n++)
        for (int k = 0; k < 16; k++)
            for (int oh = 0; oh < 6; oh++)
                for (int ow = 0; ow < 6; ow++) {
                    double acc = b[k];
                    for (int c = 0; c < 8; c++)
                        for (int i = 0; i < 3; i++)
                            for (int j = 0; j < 3; j++) {
                                int ih = oh - 1 + i, iw = ow - 1 + j;
                                if (ih >= 0 && ih < 6 && iw >= 0 && iw < 6)
                                    acc += (double)x[((n * 8 + c) * 6 + ih) * 6 + iw] *
                                           w[((k * 8 + c) * 3 + i) * 3 + j];
                            }
                    y[((n * 16 + k) * 6 + oh) * 6 + ow] = acc > 0 ? (float)acc : 0.0f;
                }
}

static void assert_close(const float *y, const float *expected, int n)
{
    for (int i = 0; i < n; i++)
        if (fabsf(y[i] - expected[i]) > 1e-4f) {
            fprintf(stderr, "element %d: %g, expected %g\n", i, y[i], expected[i]);
            fail();
        }
}

static const xpb_backend_api *onednn(void)
{
    const xpb_backend_api *api = xpb_registry_backend(registry, "cpu_onednn");
    assert_non_null(api);
    return api;
}

/* Whether the first "flags" line of /proc/cpuinfo lists `flag` as a whole word. */
static int cpuinfo_has(const char *flag)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return 0;
    char line[8192];
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5) != 0)
            continue;
        for (char *tok = strtok(strchr(line, ':') ? strchr(line, ':') + 1 : line, " \t\n"); tok;
             tok = strtok(NULL, " \t\n"))
            found |= strcmp(tok, flag) == 0;
        break;
    }
    fclose(f);
    return found;
}

/* ---- which precisions are native, for every combination of features ---- */

static void test_api_isa_policy(void **state)
{
    (void)state;
#ifdef XPB_TEST_HAVE_ONEDNN
    const uint32_t fp32 = XPB_PRECISION_BIT(XPB_PRECISION_FP32),
                   bf16 = XPB_PRECISION_BIT(XPB_PRECISION_BF16_MIXED);
    /* index: the ODN_ISA_* bits (AVX512_CORE 1, AVX512_BF16 2, AMX_TILE 4, AMX_BF16 8) */
    static const struct {
        int offered, emulated;
    } want[16] = {
        {0, 0}, /* no AVX-512: no bf16 at all */
        {1, 1}, /* avx512_core: bf16 converted in software (the Xeon case, 2.3x slower) */
        {0, 0}, /* AVX512-BF16 bit without avx512_core: not a real CPU, oneDNN offers none */
        {1, 0}, /* avx512_core + AVX512-BF16 (Cooper Lake, Zen 4) */
        {0, 0}, {1, 1},                 /* AMX tiles alone do not compute bf16 */
        {0, 0}, {1, 0}, {0, 0}, {1, 1}, /* AMX-BF16 needs the tiles too */
        {0, 0}, {1, 0}, {0, 0}, {1, 0}, /* AMX-BF16 with tiles (Sapphire Rapids) */
        {0, 0}, {1, 0},
    };
    for (uint32_t f = 0; f <= ODN_ISA_ALL; f++) {
        uint32_t p = odn_isa_precisions(f), e = odn_isa_emulated(f);
        if ((p & fp32) == 0 || (e & fp32) || !!(p & bf16) != want[f].offered ||
            !!(e & bf16) != want[f].emulated || (e & ~p) ||
            (p & ~(fp32 | bf16))) { /* tf32 and fp16-mixed are never offered on a CPU */
            fprintf(stderr, "features 0x%x: precisions 0x%x, emulated 0x%x\n", f, p, e);
            fail();
        }
    }
    /* CPUID leaf 7: EBX 16/17/30/31 AVX512F/DQ/BW/VL, EDX 22 AMX-BF16, 24 AMX-TILE, subleaf 1
     * EAX 5 AVX512-BF16; anything less than the four AVX-512 bits is not avx512_core */
    const uint32_t core = (1u << 16) | (1u << 17) | (1u << 30) | (1u << 31);
    assert_int_equal(odn_isa_from_cpuid(0, 0, 0), 0);
    assert_int_equal(odn_isa_from_cpuid(core, 0, 0), ODN_ISA_AVX512_CORE);
    assert_int_equal(odn_isa_from_cpuid(core & ~(1u << 30), 0, 0), 0);
    assert_int_equal(odn_isa_from_cpuid(core, 0, 1u << 5),
                     ODN_ISA_AVX512_CORE | ODN_ISA_AVX512_BF16);
    assert_int_equal(odn_isa_from_cpuid(core, (1u << 22) | (1u << 24), 0),
                     ODN_ISA_AVX512_CORE | ODN_ISA_AMX_BF16 | ODN_ISA_AMX_TILE);
    assert_int_equal(odn_isa_from_cpuid(core, 1u << 25, 0), ODN_ISA_AVX512_CORE); /* AMX-INT8 */
    assert_int_equal(odn_isa_from_cpuid(UINT32_MAX, UINT32_MAX, UINT32_MAX), ODN_ISA_ALL);
#else
    skip();
#endif
}

/* ---- device_info, device_count, describe_device ---- */

static void test_api_device(void **state)
{
    (void)state;
    const xpb_backend_api *api = onednn();
    assert_true(XPB_HAS_MEMBER(api, xpb_backend_api, host_free));
    assert_non_null(api->device_count);
    assert_non_null(api->describe_device);
    assert_non_null(api->write_async);
    assert_null(api->host_alloc); /* host memory is the device's */
    assert_null(api->host_free);
    const xpb_plugin_descriptor *d = NULL;
    for (size_t i = 0; i < xpb_registry_count(registry); i++) {
        const char *path;
        const xpb_plugin_descriptor *c = xpb_registry_at(registry, i, &path);
        if (c->kind == XPB_PLUGIN_BACKEND && strcmp(c->name, "cpu_onednn") == 0)
            d = c;
    }
    assert_non_null(d);
    assert_int_equal(d->caps, XPB_CAP_FUSION | XPB_CAP_THREADS);
    assert_true(XPB_HAS_MEMBER(d, xpb_plugin_descriptor, opset));
    assert_int_equal(d->opset, XPB_OPSET_VERSION);

    uint32_t count = 0;
    assert_int_equal(api->device_count(&count), XPB_OK);
    assert_int_equal(count, 1);
    xpb_device_info listed = {.struct_size = sizeof listed};
    assert_int_equal(api->describe_device(0, &listed), XPB_OK);
    assert_true(strlen(listed.name) > 0);
    assert_int_equal(listed.kind, XPB_DEVICE_CPU);
    assert_int_equal(listed.memory_bytes, 0);
    assert_int_equal(api->describe_device(1, &listed), XPB_NO_DEVICE);
    assert_non_null(strstr(api->last_error(NULL), "no device 1"));

    xpb_backend *be = NULL;
    assert_int_equal(api->open(&be, 0), XPB_OK);
    xpb_device_info info = {.struct_size = sizeof info};
    assert_int_equal(api->device_info(be, &info), XPB_OK);
    assert_string_equal(info.name, listed.name);
    assert_int_equal(info.kind, XPB_DEVICE_CPU);
    assert_int_equal(info.memory_bytes, 0);
    assert_int_equal(info.precisions, listed.precisions);
    assert_int_equal(info.emulated_precisions, listed.emulated_precisions);
    assert_string_equal(info.libraries, listed.libraries);
    assert_true(info.threads >= 1);
    assert_true(info.peak_flops[XPB_PRECISION_FP32] > 1e9);
    assert_true(listed.peak_flops[XPB_PRECISION_FP32] == 0.0); /* not measured unopened */
    /* the memory ceiling of a roofline: a plausible host bandwidth (0.5 GB/s .. 2 TB/s), with
     * how it was measured; nothing measured unopened */
    assert_true(info.memory_bandwidth > 5e8 && info.memory_bandwidth < 2e12);
    assert_non_null(strstr(info.memory_bandwidth_source, "STREAM triad"));
    assert_non_null(strstr(info.peak_flops_source, "measured"));
    assert_true(listed.memory_bandwidth == 0.0);
    assert_int_equal(info.emulated_precisions & ~info.precisions, 0);
    assert_int_equal(info.emulated_precisions & XPB_PRECISION_BIT(XPB_PRECISION_FP32), 0);

#ifdef XPB_TEST_HAVE_ONEDNN
    /* The policy against what oneDNN dispatches to and what /proc/cpuinfo says the CPU has
     * (device.c reads CPUID instead): bf16-mixed is offered from avx512_core on, native only
     * when both agree on AVX512-BF16 or AMX-BF16. */
    dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
    const char *isa_name = dnnl_cpu_isa2str(isa);
    if (strncmp(isa_name, "cpu_isa_", 8) == 0)
        isa_name += 8;
    assert_non_null(strstr(info.libraries, "oneDNN 2."));
    assert_non_null(strstr(info.libraries, isa_name));
    unsigned u = (unsigned)isa;
    int avx512 = (u & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core;
    int isa_bf16 = (u & dnnl_cpu_isa_avx512_core_bf16) == dnnl_cpu_isa_avx512_core_bf16;
    int cpu_bf16 =
        cpuinfo_has("avx512_bf16") || (cpuinfo_has("amx_bf16") && cpuinfo_has("amx_tile"));
    uint32_t bf16 = XPB_PRECISION_BIT(XPB_PRECISION_BF16_MIXED);
    assert_int_equal(!!(info.precisions & bf16), avx512);
    assert_int_equal(!!(info.emulated_precisions & bf16), avx512 && !(isa_bf16 && cpu_bf16));
    printf("oneDNN dispatches to %s; the CPU %s AVX512-BF16/AMX-BF16; bf16-mixed: %s\n", isa_name,
           cpu_bf16 ? "has" : "lacks",
           !(info.precisions & bf16)           ? "not offered"
           : (info.emulated_precisions & bf16) ? "emulated"
                                               : "native");
    const char *expect = getenv("XPB_TEST_EXPECT_BF16");
    if (expect && strcmp(expect, "emulated") == 0) {
        if (!cpuinfo_has("avx512bw")) /* no AVX-512 here: nothing to emulate on */
            skip();
        assert_true(info.emulated_precisions & bf16);
    }
#endif

    /* An ABI 1.0 host's shorter struct: the 1.1 members past its struct_size stay untouched. */
    xpb_device_info small;
    memset(&small, 0x5a, sizeof small);
    small.struct_size = offsetof(xpb_device_info, kind);
    assert_int_equal(api->device_info(be, &small), XPB_OK);
    assert_int_equal(small.kind, 0x5a5a5a5au);
    assert_int_equal(small.emulated_precisions, 0x5a5a5a5au);
    assert_int_equal(small.precisions, info.precisions);
    memset(&small, 0x5a, sizeof small);
    small.struct_size = offsetof(xpb_device_info, kind);
    assert_int_equal(api->describe_device(0, &small), XPB_OK);
    assert_int_equal(small.kind, 0x5a5a5a5au);
    assert_string_equal(small.name, listed.name);

    xpb_backend *none = NULL;
    assert_int_equal(api->open(&none, 1), XPB_NO_DEVICE);
    assert_null(none);
    assert_non_null(strstr(api->last_error(NULL), "no device 1"));
    api->close(be);
}

/* ---- refusals name the op ---- */

static void test_api_refusals(void **state)
{
    (void)state;
    const xpb_backend_api *api = onednn();
    xpb_backend *be = NULL;
    assert_int_equal(api->open(&be, 0), XPB_OK);
    xpb_compile_options o = {.struct_size = sizeof o, .precision = XPB_PRECISION_FP32};
    xpb_executable *exe = NULL;
    tiny p;

    /* an op of a later op set, as a newer host describes it */
    tiny_init(&p, 0);
    p.ops[1].kind = 99;
    p.ops[1].kind_name = "FUTURE_OP";
    p.ops[1].opset = 2;
    p.prog.opset = 2;
    assert_int_equal(api->compile(&exe, be, &p.prog, &o), XPB_UNSUPPORTED);
    assert_null(exe);
    printf("refused: %s\n", api->last_error(be));
    assert_non_null(strstr(api->last_error(be), "op 1 FUTURE_OP (layer 'relu')"));
    assert_non_null(strstr(api->last_error(be), "not implemented"));

    /* a known op with an attribute bit these headers do not know */
    tiny_init(&p, 0);
    p.ops[0].attrs_set |= 1ull << 40;
    assert_int_equal(api->compile(&exe, be, &p.prog, &o), XPB_UNSUPPORTED);
    assert_null(exe);
    printf("refused: %s\n", api->last_error(be));
    assert_non_null(strstr(api->last_error(be), "op 0 CONV2D (layer 'conv')"));
    assert_non_null(strstr(api->last_error(be), "bit 40"));
    p.ops[0].attrs_set |= 1ull << 63;
    assert_int_equal(api->compile(&exe, be, &p.prog, &o), XPB_UNSUPPORTED);
    assert_non_null(strstr(api->last_error(be), "bits 40, 63"));

    /* a malformed op is refused by the op set's shape rules (shapes.h), naming it */
    tiny_init(&p, 0);
    p.t[TY].dims[3] = 5;
    assert_int_equal(api->compile(&exe, be, &p.prog, &o), XPB_INVALID_ARGUMENT);
    assert_null(exe);
    printf("refused: %s\n", api->last_error(be));
    assert_non_null(strstr(api->last_error(be), "op 1 RELU (layer 'relu')"));

    /* the same program sealed as it is compiles: the refusals are about those ops only */
    tiny_init(&p, 0);
    assert_int_equal(p.prog.opset, 1);
    assert_int_equal(api->compile(&exe, be, &p.prog, &o), XPB_OK);
    api->destroy(exe);
    api->close(be);
}

/* ---- streamed inputs (write_async), phases walked by stride, 1.0-sized options ---- */

static void test_api_write_async_and_phases(void **state)
{
    (void)state;
    const xpb_backend_api *api = onednn();
    xpb_backend *be = NULL;
    assert_int_equal(api->open(&be, 0), XPB_OK);
    static float x[TINY_X], w[TINY_W], b[16], y[TINY_Y], expected[TINY_Y];
    tiny p;
    xpb_executable *exe = NULL;

    /* two phases in 16-byte-longer elements: conv, then relu */
    tiny_init(&p, 1);
    xpb_compile_options o = {.struct_size = sizeof o,
                             .precision = XPB_PRECISION_FP32,
                             .fusion = 1,
                             .threads = 2,
                             .transfer = XPB_TRANSFER_STREAMED};
    assert_int_equal(api->compile(&exe, be, &p.prog, &o), XPB_OK);
    tiny_data(x, w, b, 0);
    assert_int_equal(api->write(exe, TW, w, sizeof w), XPB_OK);
    assert_int_equal(api->write(exe, TB, b, sizeof b), XPB_OK);
    for (int variant = 0; variant < 3; variant++) { /* each step reads the batch given last */
        tiny_data(x, w, b, variant);
        assert_int_equal(api->write_async(exe, TX, x, sizeof x), XPB_OK);
        assert_int_equal(api->run(exe, 0), XPB_OK);
        assert_int_equal(api->run(exe, 1), XPB_OK);
        assert_int_equal(api->synchronize(exe), XPB_OK);
        assert_int_equal(api->read(exe, TY, y, sizeof y), XPB_OK);
        tiny_expected(expected, x, w, b);
        assert_close(y, expected, TINY_Y);
    }
    assert_int_equal(api->run(exe, 2), XPB_INVALID_ARGUMENT);
    /* only inputs are streamed, whole */
    assert_int_equal(api->write_async(exe, TW, w, sizeof w), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(api->exe_last_error(exe), "tensor 1 'w'"));
    assert_non_null(strstr(api->exe_last_error(exe), "not INPUT"));
    assert_int_equal(api->write_async(exe, TX, x, sizeof x - 4), XPB_INVALID_ARGUMENT);
    assert_int_equal(api->write_async(exe, 7, x, sizeof x), XPB_INVALID_ARGUMENT);
    api->destroy(exe);

    /* an ABI 1.0 host's options (no transfer member): resident inputs, written with write */
    tiny_init(&p, 0);
    o.struct_size = offsetof(xpb_compile_options, transfer);
    o.transfer = 77; /* beyond struct_size: never read */
    assert_int_equal(api->compile(&exe, be, &p.prog, &o), XPB_OK);
    tiny_data(x, w, b, 1);
    assert_int_equal(api->write(exe, TX, x, sizeof x), XPB_OK);
    assert_int_equal(api->write(exe, TW, w, sizeof w), XPB_OK);
    assert_int_equal(api->write(exe, TB, b, sizeof b), XPB_OK);
    assert_int_equal(api->run(exe, 0), XPB_OK);
    assert_int_equal(api->synchronize(exe), XPB_OK);
    assert_int_equal(api->read(exe, TY, y, sizeof y), XPB_OK);
    tiny_expected(expected, x, w, b);
    assert_close(y, expected, TINY_Y);
    api->destroy(exe);

    /* a transfer mode from the future is refused by name */
    o.struct_size = sizeof o;
    assert_int_equal(api->compile(&exe, be, &p.prog, &o), XPB_UNSUPPORTED);
    assert_non_null(strstr(api->last_error(be), "transfer mode 77"));
    api->close(be);
}

/* ---- policies, fusion, profiles, memory statistics ---- */

static void test_api_options_profile_memory(void **state)
{
    (void)state;
    const xpb_backend_api *api = onednn();
    xpb_backend *be = NULL;
    assert_int_equal(api->open(&be, 0), XPB_OK);

    tiny p;
    tiny_init(&p, 0);
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
    static float x[TINY_X], w[TINY_W], b[16], y[TINY_Y], expected[TINY_Y];
    tiny_data(x, w, b, 0);
    assert_int_equal(api->write(exe, TX, x, sizeof x), XPB_OK);
    assert_int_equal(api->write(exe, TW, w, sizeof w), XPB_OK);
    assert_int_equal(api->write(exe, TB, b, sizeof b), XPB_OK);
    assert_int_equal(api->run(exe, 0), XPB_OK);
    assert_int_equal(api->synchronize(exe), XPB_OK);
    assert_int_equal(api->read(exe, TY, y, sizeof y), XPB_OK);
    tiny_expected(expected, x, w, b);
    assert_close(y, expected, TINY_Y);
    /* the intermediate is elided: not readable */
    assert_int_not_equal(api->read(exe, TCONV, y, sizeof y), XPB_OK);
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

/* Mappings of this process that were asked to be transparent huge pages ("hg" among the
 * VmFlags of /proc/self/smaps); -1 when the file cannot be read. */
static int huge_page_mappings(void)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmFlags:", 8) == 0 && strstr(line, " hg"))
            n++;
    fclose(f);
    return n;
}

/* The arena is asked to be transparent huge pages (memplan.c) unless XPB_ONEDNN_NO_HUGEPAGES is
 * set, and never under AddressSanitizer, where it is a heap block. */
static void test_api_arena_huge_pages(void **state)
{
    (void)state;
    int asan = 0;
#if defined(__SANITIZE_ADDRESS__)
    asan = 1;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    asan = 1;
#endif
#endif
    FILE *thp = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (!thp || huge_page_mappings() < 0) {
        if (thp)
            fclose(thp);
        skip(); /* a kernel without transparent huge pages: nothing to ask for */
    }
    fclose(thp);
    const xpb_backend_api *api = onednn();
    xpb_backend *be = NULL;
    assert_int_equal(api->open(&be, 0), XPB_OK);
    tiny p;
    tiny_init(&p, 0);
    xpb_compile_options o = {
        .struct_size = sizeof o, .precision = XPB_PRECISION_FP32, .fusion = 1, .threads = 2};
    for (int off = 0; off < 2; off++) {
        if (off)
            setenv("XPB_ONEDNN_NO_HUGEPAGES", "1", 1);
        int before = huge_page_mappings();
        xpb_executable *exe = NULL;
        assert_int_equal(api->compile(&exe, be, &p.prog, &o), XPB_OK);
        int after = huge_page_mappings();
        if (asan || off)
            assert_int_equal(after, before);
        else
            assert_int_equal(after, before + 1);
        api->destroy(exe);
        assert_int_equal(huge_page_mappings(), before); /* unmapped with the executable */
    }
    unsetenv("XPB_ONEDNN_NO_HUGEPAGES");
    api->close(be);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_api_isa_policy),
        cmocka_unit_test(test_api_device),
        cmocka_unit_test(test_api_refusals),
        cmocka_unit_test(test_api_write_async_and_phases),
        cmocka_unit_test(test_api_options_profile_memory),
        cmocka_unit_test(test_api_arena_huge_pages),
        cmocka_unit_test(test_api_unsupported_policy_is_reported),
        cmocka_unit_test(test_ops_fp32_fused),
        cmocka_unit_test(test_ops_fp32_unfused),
        cmocka_unit_test(test_ops_bf16),
        cmocka_unit_test(test_lowered_backward_weights),
        cmocka_unit_test(test_models_fp32),
        cmocka_unit_test(test_models_bf16),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, setup, teardown);
}
