/* cpu_onednn's op set 3 through its ABI, beyond what the conformance suite compares (that part
 * is test_conformance_onednn's suites, which require every op-set-3 case to pass): the run-time
 * refusals the reference makes too (an embedding index outside the table, named by its
 * position; a label outside the classes that is not the ignored one, next to an ignored row
 * that counts for nothing), MATMUL with a GELU post-op at inference (fusion), and what cpu_onednn
 * still refuses by name: an LSTM_BWD whose
 * workspace no LSTM of the program wrote, an op of op set 3 with an attribute bit unknown to
 * these headers, operands beyond xpb_op's inline arrays without inputs_all, and the LSTM
 * workspace as host data. Programs are built with the conformance suite's case language.
 * Disabled (not run) when the build has no oneDNN. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "check/conformance_case.h"
#include "plugin/loader.h"

static xpb_registry *registry;
static const xpb_backend_api *api;
static xpb_backend *be;

static int setup(void **state)
{
    (void)state;
    const char *dirs[1] = {XPB_TEST_PLUGIN_DIR};
    xpb_err err = {{0}};
    if (xpb_registry_load(&registry, dirs, 1, &err) != XPB_OK)
        return -1;
    api = xpb_registry_backend(registry, "cpu_onednn");
    if (!api || api->open(&be, 0) != XPB_OK) {
        fprintf(stderr, "cpu_onednn not found or not opened in %s\n", XPB_TEST_PLUGIN_DIR);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    api->close(be);
    xpb_registry_free(registry);
    return 0;
}

/* Compiles the case's program in fp32 with fusion and profiling (keep_all as given); the
 * status, *exe on success. */
static xpb_status compile_case(xpb_executable **exe, xpb_ct_case *c, uint32_t keep_all)
{
    xpb_ct_bind(c);
    xpb_compile_options o = {.struct_size = sizeof o,
                             .precision = XPB_PRECISION_FP32,
                             .fusion = 1,
                             .threads = 2,
                             .profiling = 1,
                             .keep_all = keep_all};
    *exe = NULL;
    xpb_status st = api->compile(exe, be, &c->prog, &o);
    if (st != XPB_OK)
        printf("refused: %s\n", api->last_error(be));
    return st;
}

static void assert_contains(const char *text, const char *part)
{
    if (!strstr(text, part)) {
        fprintf(stderr, "'%s' lacks '%s'\n", text, part);
        fail();
    }
}

/* ---- EMBEDDING: rows by index; an index outside [0, V) refused at run time by position ---- */

static void test_embedding_index_checked(void **state)
{
    (void)state;
    xpb_ct_list l = {0};
    xpb_ct_case *c = xpb_ct_new(&l, "EMBEDDING", 1, "ids2x3 V5 D4");
    assert_non_null(c);
    uint32_t ids = xpb_ct_tensor(c, "ids", XPB_ROLE_INPUT, XPB_CT_INIT_LABELS, 0, 2, 2, 3, 1, 1);
    uint32_t w = xpb_ct_param(c, "weight", 2, 5, 4, 1, 1);
    uint32_t y = xpb_ct_out(c, "y", 3, 2, 3, 4, 1);
    xpb_ct_op(c, XPB_OP_EMBEDDING, 2, XPB_CT_T(ids, w), 1, XPB_CT_T(y))->layer = "emb";
    xpb_ct_finish(c);
    xpb_executable *exe;
    assert_int_equal(compile_case(&exe, c, 0), XPB_OK);
    float weight[20], out[24];
    for (int i = 0; i < 20; i++)
        weight[i] = (float)i * 0.5f - 3.0f;
    int32_t bad[6] = {0, 1, 4, 2, 3, 7}, good[6] = {4, 4, 0, 2, 3, 1};
    assert_int_equal(api->write(exe, w, weight, sizeof weight), XPB_OK);
    assert_int_equal(api->write(exe, ids, bad, sizeof bad), XPB_OK);
    assert_int_equal(api->run(exe, 0), XPB_INVALID_ARGUMENT);
    printf("refused: %s\n", api->exe_last_error(exe));
    assert_contains(api->exe_last_error(exe), "op 0 EMBEDDING (layer 'emb')");
    assert_contains(api->exe_last_error(exe),
                    "position [1, 2] of the indices [2, 3] holds 7, outside the 5 rows [0, 5)");
    assert_int_equal(api->write(exe, ids, good, sizeof good), XPB_OK);
    assert_int_equal(api->run(exe, 0), XPB_OK);
    assert_int_equal(api->read(exe, y, out, sizeof out), XPB_OK);
    for (int p = 0; p < 6; p++)
        assert_memory_equal(out + 4 * p, weight + 4 * good[p], 4 * sizeof(float));
    api->destroy(exe);
    xpb_ct_list_free(&l);
}

/* ---- SOFTMAX_XENT with op set 3's attributes: ignored rows, smoothing, bad labels ---- */

static void test_xent_ignored_and_bad_labels(void **state)
{
    (void)state;
    xpb_ct_list l = {0};
    xpb_ct_case *c = xpb_ct_new(&l, "SOFTMAX_XENT", 1, "logits3x4 ignore -100 smooth 0.1");
    assert_non_null(c);
    uint32_t z = xpb_ct_in(c, "logits", 2, 3, 4, 1, 1);
    uint32_t lab = xpb_ct_tensor(c, "labels", XPB_ROLE_INPUT, XPB_CT_INIT_LABELS, 0, 1, 3, 1, 1, 1);
    uint32_t loss = xpb_ct_tensor(c, "loss", XPB_ROLE_LOSS, 0, 1, 1, 1, 1, 1, 1);
    xpb_op *op = xpb_ct_op(c, XPB_OP_SOFTMAX_XENT, 2, XPB_CT_T(z, lab), 1, XPB_CT_T(loss));
    op->index_flags = XPB_INDEX_IGNORE;
    op->ignore_index = -100;
    op->label_smoothing = 0.1f;
    xpb_ct_finish(c);
    xpb_executable *exe;
    assert_int_equal(compile_case(&exe, c, 0), XPB_OK);
    const float logits[12] = {0.5f, -1.0f, 2.0f,   0.0f, 9.0f,  9.0f,
                              9.0f, 9.0f,  -0.25f, 1.5f, 0.75f, -2.0f};
    int32_t labels[3] = {2, -100, 1};
    assert_int_equal(api->write(exe, z, logits, sizeof logits), XPB_OK);
    assert_int_equal(api->write(exe, lab, labels, sizeof labels), XPB_OK);
    assert_int_equal(api->run(exe, 0), XPB_OK);
    float got;
    assert_int_equal(api->read(exe, loss, &got, sizeof got), XPB_OK);
    /* (1 - eps) (-log p[label]) + (eps / K) sum_k (-log p[k]) over rows 0 and 2, halved */
    double want = 0.0;
    for (int r = 0; r < 3; r += 2) {
        double sum = 0.0, nll = 0.0;
        for (int k = 0; k < 4; k++)
            sum += exp(logits[4 * r + k]);
        for (int k = 0; k < 4; k++) {
            double lp = logits[4 * r + k] - log(sum);
            nll -= 0.1 / 4.0 * lp + (k == labels[r] ? 0.9 * lp : 0.0);
        }
        want += nll / 2.0;
    }
    assert_true(fabs(got - want) < 1e-5 * fabs(want));
    labels[1] = 4; /* not the ignored label, and outside the 4 classes */
    assert_int_equal(api->write(exe, lab, labels, sizeof labels), XPB_OK);
    assert_int_equal(api->run(exe, 0), XPB_INVALID_ARGUMENT);
    assert_contains(api->exe_last_error(exe), "op 0 SOFTMAX_XENT (layer 'case')");
    assert_contains(api->exe_last_error(exe), "sample 1 has label 4, outside the 4 classes [0, 4)");
    api->destroy(exe);
    xpb_ct_list_free(&l);
}

/* ---- fusion: MATMUL + GELU at inference is one primitive with a post-op ---- */

static void test_matmul_gelu_fused(void **state)
{
    (void)state;
    xpb_ct_list l = {0};
    xpb_ct_case *c = xpb_ct_new(&l, "MATMUL+GELU", 0, "a4x8 b16x8 t2 bias, tanh");
    assert_non_null(c);
    uint32_t a = xpb_ct_in(c, "a", 2, 4, 8, 1, 1), b = xpb_ct_param(c, "b", 2, 16, 8, 1, 1);
    uint32_t bias = xpb_ct_param(c, "bias", 1, 16, 1, 1, 1), y = xpb_ct_out(c, "y", 2, 4, 16, 1, 1);
    uint32_t mid = xpb_ct_mid(c, "mid", 2, 4, 16, 1, 1);
    xpb_ct_op(c, XPB_OP_MATMUL, 3, XPB_CT_T(a, b, bias), 1, XPB_CT_T(mid))->transpose =
        XPB_TRANSPOSE_B;
    xpb_ct_op(c, XPB_OP_GELU, 1, XPB_CT_T(mid), 1, XPB_CT_T(y))->approximate = XPB_GELU_TANH;
    xpb_ct_finish(c);
    xpb_executable *exe;
    assert_int_equal(compile_case(&exe, c, 0), XPB_OK);
    float va[32], vb[128], vbias[16], out[64];
    for (int i = 0; i < 128; i++)
        vb[i] = (float)((i * 7) % 11 - 5) * 0.1f;
    for (int i = 0; i < 32; i++)
        va[i] = (float)((i * 5) % 9 - 4) * 0.25f;
    for (int i = 0; i < 16; i++)
        vbias[i] = (float)(i - 8) * 0.05f;
    assert_int_equal(api->write(exe, a, va, sizeof va), XPB_OK);
    assert_int_equal(api->write(exe, b, vb, sizeof vb), XPB_OK);
    assert_int_equal(api->write(exe, bias, vbias, sizeof vbias), XPB_OK);
    assert_int_equal(api->run(exe, 0), XPB_OK);
    assert_int_equal(api->read(exe, y, out, sizeof out), XPB_OK);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 16; j++) {
            double v = vbias[j];
            for (int k = 0; k < 8; k++)
                v += (double)va[i * 8 + k] * vb[j * 8 + k]; /* b held [N, K] */
            double g = 0.5 * v * (1.0 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
            assert_true(fabs(out[i * 16 + j] - g) < 1e-5 * (1.0 + fabs(g)));
        }
    xpb_op_profile prof[2];
    uint32_t count = 0;
    assert_int_equal(api->profile_read(exe, prof, 2, &count), XPB_OK);
    assert_int_equal(count, 2);
    assert_int_equal(prof[1].fused_into, 0); /* GELU done by the product's post-op */
    api->destroy(exe);
    xpb_ct_list_free(&l);
}

/* ---- still refused ---- */

/* An LSTM layer and its backward (T2 B1 I3 H2) into `c`, with the workspace of `ws_role`. */
static void lstm_case(xpb_ct_case *c, uint32_t ws_role, int forward)
{
    uint32_t x = xpb_ct_in(c, "x", 3, 2, 1, 3, 1);
    uint32_t wih = xpb_ct_param(c, "w_ih", 2, 8, 3, 1, 1),
             whh = xpb_ct_param(c, "w_hh", 2, 8, 2, 1, 1);
    uint32_t bih = xpb_ct_param(c, "b_ih", 1, 8, 1, 1, 1),
             bhh = xpb_ct_param(c, "b_hh", 1, 8, 1, 1, 1);
    uint32_t y = forward ? xpb_ct_out(c, "y", 3, 2, 1, 2, 1) : xpb_ct_in(c, "y", 3, 2, 1, 2, 1);
    uint32_t ws = xpb_ct_tensor(
        c, "ws", ws_role, ws_role == XPB_ROLE_INPUT ? XPB_CT_INIT_UNIFORM : 0, 0, 3, 2, 1, 10, 1);
    if (forward)
        xpb_ct_op(c, XPB_OP_LSTM, 5, XPB_CT_T(x, wih, whh, bih, bhh), 4,
                  XPB_CT_T(y, XPB_NO_TENSOR, XPB_NO_TENSOR, ws));
    xpb_ct_op(c, XPB_OP_LSTM_BWD, 8,
              XPB_CT_T(xpb_ct_in(c, "dy", 3, 2, 1, 2, 1), XPB_NO_TENSOR, XPB_NO_TENSOR, x, wih, whh,
                       y, ws),
              5,
              XPB_CT_T(xpb_ct_out(c, "dx", 3, 2, 1, 3, 1), xpb_ct_out(c, "dw_ih", 2, 8, 3, 1, 1),
                       xpb_ct_out(c, "dw_hh", 2, 8, 2, 1, 1), xpb_ct_out(c, "db_ih", 1, 8, 1, 1, 1),
                       xpb_ct_out(c, "db_hh", 1, 8, 1, 1, 1)));
    xpb_ct_finish(c);
}

static void test_lstm_workspace_refusals(void **state)
{
    (void)state;
    xpb_ct_list l = {0};
    xpb_executable *exe;
    /* a workspace the host wrote: the backward reads what the forward left in its own layout */
    xpb_ct_case *c = xpb_ct_new(&l, "LSTM_BWD", 1, "alone");
    assert_non_null(c);
    lstm_case(c, XPB_ROLE_INPUT, 0);
    assert_int_equal(compile_case(&exe, c, 0), XPB_UNSUPPORTED);
    assert_null(exe);
    assert_contains(api->last_error(be), "op 0 LSTM_BWD (layer 'case')");
    assert_contains(api->last_error(be), "workspace must come from an LSTM");
    /* with its LSTM it compiles; under keep_all the workspace is no host data */
    c = xpb_ct_new(&l, "LSTM+BWD", 1, "pair");
    assert_non_null(c);
    lstm_case(c, XPB_ROLE_WORKSPACE, 1);
    assert_int_equal(compile_case(&exe, c, 1), XPB_OK);
    float ws[20];
    assert_int_equal(api->read(exe, 6, ws, sizeof ws), XPB_UNSUPPORTED);
    assert_contains(api->exe_last_error(exe), "workspace");
    api->destroy(exe);
    xpb_ct_list_free(&l);
}

static void test_opset3_structure_refusals(void **state)
{
    (void)state;
    xpb_ct_list l = {0};
    xpb_executable *exe;
    /* an op of op set 3 with an attribute bit these headers do not know */
    xpb_ct_case *c = xpb_ct_new(&l, "MATMUL", 1, "future attribute");
    assert_non_null(c);
    uint32_t a = xpb_ct_in(c, "a", 2, 2, 3, 1, 1), b = xpb_ct_in(c, "b", 2, 3, 4, 1, 1);
    xpb_ct_op(c, XPB_OP_MATMUL, 2, XPB_CT_T(a, b), 1, XPB_CT_T(xpb_ct_out(c, "y", 2, 2, 4, 1, 1)));
    xpb_ct_finish(c);
    xpb_ct_bind(c);
    c->ops[0].attrs_set |= 1ull << 41;
    xpb_compile_options o = {.struct_size = sizeof o, .precision = XPB_PRECISION_FP32};
    assert_int_equal(api->compile(&exe, be, &c->prog, &o), XPB_UNSUPPORTED);
    assert_contains(api->last_error(be), "op 0 MATMUL (layer 'case'): sets attribute bit 41");
    /* eight gradients to clip, but no inputs_all for the two beyond the inline six */
    c = xpb_ct_new(&l, "CLIP_GRAD_NORM", 1, "no inputs_all");
    assert_non_null(c);
    uint32_t g[8];
    for (int i = 0; i < 8; i++)
        g[i] = xpb_ct_tensor(c, "g", XPB_ROLE_INPUT, XPB_CT_INIT_UNIFORM, 1, 1, 3, 1, 1, 1);
    xpb_ct_op(c, XPB_OP_CLIP_GRAD_NORM, 8, g, 1, XPB_CT_T(xpb_ct_out(c, "norm", 1, 1, 1, 1, 1)))
        ->max_norm = 1.0f;
    xpb_ct_finish(c);
    xpb_ct_bind(c);
    assert_non_null(c->ops[0].inputs_all);
    assert_int_equal(compile_case(&exe, c, 0), XPB_OK); /* with them: fine */
    api->destroy(exe);
    c->ops[0].inputs_all = NULL;
    assert_int_equal(api->compile(&exe, be, &c->prog, &o), XPB_INVALID_ARGUMENT);
    assert_null(exe);
    assert_contains(api->last_error(be), "op 0 CLIP_GRAD_NORM (layer 'case'): 8 inputs");
    xpb_ct_list_free(&l);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_embedding_index_checked),
        cmocka_unit_test(test_xent_ignored_and_bad_labels),
        cmocka_unit_test(test_matmul_gelu_fused),
        cmocka_unit_test(test_lstm_workspace_refusals),
        cmocka_unit_test(test_opset3_structure_refusals),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, setup, teardown);
}
