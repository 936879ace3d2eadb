/* Automatic differentiation of op set 3 (docs/ops.md, "Op set 3"): a small model that uses every
 * forward op of it (token and position embeddings, layer norm, a causal attention block with
 * permutes and batched matmuls, GELU, broadcast multiply and scale, an LSTM layer, a tied output
 * projection through MATMUL, a token loss with ignore_index and label smoothing) trained with
 * AdamW and gradient clipping. The derived programs are checked for structure (every backward op
 * and the operand arrays, valid by the SDK's rules, op set 3), and through the reference backend
 * every parameter gradient against central finite differences of the program's own loss. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugin/loader.h"
#include "program/init.h"
#include "program/model_program.h"
#include "run/session.h"

#define TRY(expr)                                                                                  \
    do {                                                                                           \
        xpb_status st_ = (expr);                                                                   \
        if (st_ != XPB_OK)                                                                         \
            return st_;                                                                            \
    } while (0)

enum { V = 7, S = 4, D = 4, HEADS = 2, HID = 3 };

static xpb_status param(xpb_value *out, xpb_builder *b, const xpb_builder_api *api,
                        const char *name, uint32_t ndim, int64_t d0, int64_t d1, double lo,
                        double hi)
{
    xpb_param_desc p = {name, ndim, {d0, d1, 1, 1}, {XPB_INIT_UNIFORM, lo, hi}, 0, 1};
    return api->parameter(out, b, &p);
}

static xpb_status seq_build(xpb_builder *b, const xpb_builder_api *api)
{
    if (!XPB_HAS_MEMBER(api, xpb_builder_api, clip_grad_norm))
        return xpb_model_fail(b, api, XPB_UNSUPPORTED, "needs a builder of ABI 1.3");
    int64_t n = api->batch_size(b);
    xpb_value tok, lab, wte, wpe, pos, x, p, y, g, bb, q, k, v, att, w, w_ih, w_hh, b_ih, b_hh;
    xpb_input_desc tokens = {"tokens", XPB_DTYPE_I32, 2, {n, S}, 0, V - 1};
    xpb_input_desc targets = {"targets", XPB_DTYPE_I32, 2, {n, S}, 0, V - 1};
    TRY(api->input(&tok, b, &tokens));
    TRY(api->input(&lab, b, &targets));
    TRY(param(&wte, b, api, "wte", 2, V, D, -1, 1));
    TRY(param(&wpe, b, api, "wpe", 2, S, D, -0.5, 0.5));
    const int32_t positions[S] = {0, 1, 2, 3};
    const int64_t sdim[1] = {S};
    TRY(api->constant_data(&pos, b, "positions", XPB_DTYPE_I32, 1, sdim, positions));
    xpb_op_attrs3 none = {.struct_size = sizeof none};
    xpb_value in2[2] = {tok, wte};
    TRY(api->op3(&x, b, "embed", XPB_OP_EMBEDDING, in2, 2, NULL, &none));
    in2[0] = pos, in2[1] = wpe;
    TRY(api->op3(&p, b, "positions_embed", XPB_OP_EMBEDDING, in2, 2, NULL, &none));
    in2[0] = x, in2[1] = p;
    TRY(api->op3(&x, b, "add_positions", XPB_OP_ADD_BROADCAST, in2, 2, NULL, &none));
    TRY(param(&g, b, api, "ln.weight", 1, D, 1, 0.5, 1.5));
    TRY(param(&bb, b, api, "ln.bias", 1, D, 1, -0.2, 0.2));
    xpb_value ln_in[3] = {x, g, bb};
    xpb_op_attrs eps = {.eps = 1e-5f};
    TRY(api->op3(&y, b, "ln", XPB_OP_LAYER_NORM, ln_in, 3, &eps, &none));
    /* attention: q, k, v from a linear on [B, S, D], heads split by reshape + permute */
    xpb_layer_opts lin = {.bias = 1};
    TRY(xpb_layer_linear(&q, b, api, "q", y, D, D, &lin));
    TRY(xpb_layer_linear(&k, b, api, "k", y, D, D, &lin));
    TRY(xpb_layer_linear(&v, b, api, "v", y, D, D, &lin));
    const int64_t split[4] = {n, S, HEADS, D / HEADS}, merged[3] = {n, S, D};
    xpb_op_attrs3 heads = {.struct_size = sizeof heads, .perm = {0, 2, 1, 3}};
    xpb_value *qkv[3] = {&q, &k, &v};
    for (int i = 0; i < 3; i++) {
        char name[32];
        snprintf(name, sizeof name, "split%d", i);
        TRY(api->reshape(qkv[i], b, name, *qkv[i], 4, split));
        snprintf(name, sizeof name, "heads%d", i);
        TRY(api->op3(qkv[i], b, name, XPB_OP_PERMUTE, qkv[i], 1, NULL, &heads));
    }
    xpb_op_attrs3 trans_b = {.struct_size = sizeof trans_b, .transpose = XPB_TRANSPOSE_B};
    in2[0] = q, in2[1] = k;
    TRY(api->op3(&att, b, "scores", XPB_OP_BATCHED_MATMUL, in2, 2, NULL, &trans_b));
    xpb_op_attrs scale = {.scale = 0.7071f};
    xpb_op_attrs3 causal = {.struct_size = sizeof causal, .causal = 1};
    TRY(api->op3(&att, b, "softmax", XPB_OP_SOFTMAX, &att, 1, &scale, &causal));
    in2[0] = att, in2[1] = v;
    TRY(api->op3(&y, b, "context", XPB_OP_BATCHED_MATMUL, in2, 2, NULL, &none));
    TRY(api->op3(&y, b, "merge", XPB_OP_PERMUTE, &y, 1, NULL, &heads));
    TRY(api->reshape(&y, b, "merged", y, 3, merged));
    xpb_op_attrs3 tanh_gelu = {.struct_size = sizeof tanh_gelu, .approximate = XPB_GELU_TANH};
    TRY(api->op3(&y, b, "gelu", XPB_OP_GELU, &y, 1, NULL, &tanh_gelu));
    TRY(param(&w, b, api, "gate", 1, D, 1, 0.5, 1.5));
    in2[0] = y, in2[1] = w;
    TRY(api->op3(&y, b, "gate_mul", XPB_OP_MUL, in2, 2, NULL, &none));
    xpb_op_attrs half = {.value = 0.5f};
    TRY(api->op3(&y, b, "half", XPB_OP_SCALE, &y, 1, &half, &none));
    in2[0] = y, in2[1] = x; /* residual */
    TRY(api->op3(&y, b, "residual", XPB_OP_ADD_BROADCAST, in2, 2, NULL, &none));
    /* an LSTM over the sequence ([S, B, D]), back to [B, S, HID] */
    xpb_op_attrs3 seq_first = {.struct_size = sizeof seq_first, .perm = {1, 0, 2}};
    TRY(api->op3(&y, b, "to_seq", XPB_OP_PERMUTE, &y, 1, NULL, &seq_first));
    TRY(param(&w_ih, b, api, "lstm.weight_ih", 2, 4 * HID, D, -0.5, 0.5));
    TRY(param(&w_hh, b, api, "lstm.weight_hh", 2, 4 * HID, HID, -0.5, 0.5));
    TRY(param(&b_ih, b, api, "lstm.bias_ih", 1, 4 * HID, 1, -0.5, 0.5));
    TRY(param(&b_hh, b, api, "lstm.bias_hh", 1, 4 * HID, 1, -0.5, 0.5));
    xpb_value lstm_in[5] = {y, w_ih, w_hh, b_ih, b_hh};
    TRY(api->op3(&y, b, "lstm", XPB_OP_LSTM, lstm_in, 5, NULL, &none));
    TRY(api->op3(&y, b, "to_batch", XPB_OP_PERMUTE, &y, 1, NULL, &seq_first));
    /* up to D, then logits through the embedding table (tied, as GPT-2) */
    TRY(xpb_layer_linear(&y, b, api, "up", y, HID, D, &lin));
    const int64_t rows[2] = {n * S, D};
    TRY(api->reshape(&y, b, "rows", y, 2, rows));
    in2[0] = y, in2[1] = wte;
    TRY(api->op3(&y, b, "logits", XPB_OP_MATMUL, in2, 2, NULL, &trans_b));
    const int64_t seq_logits[3] = {n, S, V};
    TRY(api->reshape(&y, b, "seq_logits", y, 3, seq_logits));
    TRY(api->output(b, "logits", y));
    xpb_op_attrs3 xent = {.struct_size = sizeof xent,
                          .index_flags = XPB_INDEX_IGNORE,
                          .ignore_index = 0,
                          .label_smoothing = 0.1f};
    xpb_value loss, xin[2] = {y, lab};
    TRY(api->op3(&loss, b, "loss", XPB_OP_SOFTMAX_XENT, xin, 2, NULL, &xent));
    xpb_optimizer_desc adamw = {.kind = XPB_OPTIMIZER_ADAMW,
                                .lr = 1e-3,
                                .weight_decay = 0.01,
                                .beta1 = 0.9,
                                .beta2 = 0.98,
                                .eps = 1e-9};
    uint32_t phase;
    TRY(api->phase(&phase, b, "train", 0, &adamw));
    TRY(api->loss(b, phase, loss, 1.0));
    return api->clip_grad_norm(b, phase, 1e6); /* never reached: the gradients stay exact */
}

static const xpb_model_api seq_api = {sizeof(xpb_model_api), NULL, 0, seq_build};

static xpb_program_options config(uint32_t mode)
{
    xpb_program_options c = {.model = "seq", .batch = 2, .mode = mode, .seed = 11};
    return c; /* lr, momentum, weight decay 0: the step moves nothing */
}

static int count_kind(const xpb_model_program *mp, uint32_t kind)
{
    int n = 0;
    for (uint32_t i = 0; i < mp->n_ops; i++)
        n += mp->ops[i].kind == kind;
    return n;
}

static void test_structure(void **state)
{
    (void)state;
    xpb_model_program *mp;
    xpb_err err = {{0}};
    xpb_program_options c = config(XPB_MODE_TRAIN);
    if (xpb_model_program_create(&mp, &seq_api, &c, &err) != XPB_OK)
        fail_msg("%s", err.msg);
    char msg[512];
    if (xpb_program_validate(&mp->program, msg, sizeof msg) != XPB_OK)
        fail_msg("training program: %s", msg);
    assert_int_equal(mp->program.opset, 3);
    static const uint32_t expected[] = {
        XPB_OP_EMBEDDING_BWD,  XPB_OP_SUM_TO,      XPB_OP_LAYER_NORM_BWD,
        XPB_OP_PERMUTE,        XPB_OP_MATMUL_BWD,  XPB_OP_BATCHED_MATMUL_BWD,
        XPB_OP_SOFTMAX_BWD,    XPB_OP_GELU_BWD,    XPB_OP_MUL,
        XPB_OP_SCALE,          XPB_OP_LSTM_BWD,    XPB_OP_SOFTMAX_XENT_BWD,
        XPB_OP_CLIP_GRAD_NORM, XPB_OP_ADAMW_UPDATE};
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++)
        if (count_kind(mp, expected[i]) == 0)
            fail_msg("no %s in the training program", xpb_op_name(expected[i]));
    assert_int_equal(count_kind(mp, XPB_OP_CLIP_GRAD_NORM), 1);
    assert_int_equal(count_kind(mp, XPB_OP_ADAMW_UPDATE), 17);
    for (uint32_t i = 0; i < mp->n_ops; i++) {
        const xpb_op *op = &mp->ops[i];
        if (op->kind == XPB_OP_LSTM_BWD) {
            assert_int_equal(op->n_inputs, 8);
            assert_non_null(op->inputs_all);
            assert_non_null(op->outputs_all);
            assert_int_equal(op->n_outputs, 5);
        }
        if (op->kind == XPB_OP_CLIP_GRAD_NORM) {
            assert_int_equal(op->n_inputs, 17); /* every gradient of the phase */
            assert_true(op->max_norm > 0);
            for (uint32_t j = i + 1; j < mp->n_ops; j++) /* clipped before any update */
                assert_int_equal(mp->ops[j].kind, XPB_OP_ADAMW_UPDATE);
        }
        if (op->kind == XPB_OP_SOFTMAX_XENT_BWD) {
            assert_true(op->label_smoothing > 0.09f);
            assert_int_equal(op->index_flags, XPB_INDEX_IGNORE);
        }
    }
    /* FLOPs: the matmuls and the LSTM are counted */
    assert_true(mp->flops_forward > 0);
    assert_true(mp->flops_train > 2 * mp->flops_forward);
    xpb_model_program_free(mp);

    c = config(XPB_MODE_INFERENCE);
    if (xpb_model_program_create(&mp, &seq_api, &c, &err) != XPB_OK)
        fail_msg("%s", err.msg);
    if (xpb_program_validate(&mp->program, msg, sizeof msg) != XPB_OK)
        fail_msg("inference program: %s", msg);
    assert_int_equal(count_kind(mp, XPB_OP_LSTM_BWD), 0);
    for (uint32_t i = 0; i < mp->n_ops; i++)
        if (mp->ops[i].kind == XPB_OP_LSTM || mp->ops[i].kind == XPB_OP_LAYER_NORM)
            assert_int_equal(mp->ops[i].n_outputs, 1); /* no workspace at inference */
    xpb_model_program_free(mp);
}

static xpb_registry *registry;

static int setup(void **state)
{
    (void)state;
    const char *dirs[] = {XPB_TEST_PLUGIN_DIR};
    xpb_err err = {{0}};
    return xpb_registry_load(&registry, dirs, 1, &err) == XPB_OK &&
                   xpb_registry_backend(registry, "cpu_ref")
               ? 0
               : -1;
}

static int teardown(void **state)
{
    (void)state;
    xpb_registry_free(registry);
    return 0;
}

static double loss_at(xpb_session *s, uint32_t t, const float *value)
{
    xpb_err err = {{0}};
    double loss;
    assert_int_equal(s->api->write(s->exe, t, value, xpb_tensor_bytes(&s->mp->tensors[t])), XPB_OK);
    if (xpb_session_step(s, NULL, &err) != XPB_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(xpb_session_loss(&loss, s, 0, &err), XPB_OK);
    return loss;
}

/* Every parameter's gradient against central differences of the loss (lr 0: nothing moves). */
static void test_gradients(void **state)
{
    (void)state;
    xpb_model_program *mp;
    xpb_err err = {{0}};
    xpb_program_options c = config(XPB_MODE_TRAIN);
    assert_int_equal(xpb_model_program_create(&mp, &seq_api, &c, &err), XPB_OK);
    xpb_session s;
    xpb_compile_options o = {
        .struct_size = sizeof o, .precision = XPB_PRECISION_FP32, .keep_all = 1};
    if (xpb_session_open(&s, xpb_registry_backend(registry, "cpu_ref"), 0, mp, &o, &err))
        fail_msg("%s", err.msg);
    int checked = 0;
    for (uint32_t t = 0; t < mp->n_tensors; t++) {
        const xpb_tensor_desc *d = &mp->tensors[t];
        if (d->role != XPB_ROLE_PARAM)
            continue;
        int64_t n = xpb_tensor_numel(d);
        float *w = malloc((size_t)n * 4), *grad = malloc((size_t)n * 4);
        assert_non_null(w);
        assert_non_null(grad);
        assert_int_equal(xpb_model_program_initial_value(mp, t, w), XPB_OK);
        loss_at(&s, t, w);
        char gname[256];
        snprintf(gname, sizeof gname, "%s.grad", d->name);
        uint32_t gt = XPB_NO_TENSOR;
        for (uint32_t i = 0; i < mp->n_tensors; i++)
            if (strcmp(mp->tensors[i].name, gname) == 0)
                gt = i;
        assert_int_not_equal(gt, XPB_NO_TENSOR);
        assert_int_equal(xpb_session_read(&s, gt, grad, &err), XPB_OK);
        double max_err = 0, max_grad = 0;
        for (int64_t i = 0; i < n && i < 16; i++) {
            float keep = w[i];
            double h = 1e-3 * (fabs(keep) > 1 ? fabs(keep) : 1);
            w[i] = (float)(keep + h);
            double up = loss_at(&s, t, w);
            w[i] = (float)(keep - h);
            double down = loss_at(&s, t, w);
            w[i] = keep;
            double numeric = (up - down) / ((double)(float)(keep + h) - (double)(float)(keep - h));
            double e = fabs(numeric - grad[i]);
            max_err = e > max_err ? e : max_err;
            max_grad = fabs(grad[i]) > max_grad ? fabs(grad[i]) : max_grad;
        }
        loss_at(&s, t, w);
        if (max_err > 2e-3 + 2e-2 * max_grad)
            fail_msg("'%s' gradient differs from finite differences by %g (max |grad| %g)", d->name,
                     max_err, max_grad);
        checked++;
        free(w);
        free(grad);
    }
    assert_int_equal(checked, 17);
    xpb_session_close(&s);
    xpb_model_program_free(mp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_structure),
        cmocka_unit_test(test_gradients),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
