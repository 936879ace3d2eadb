/* Graph-level automatic differentiation: the structure of derived programs (gradient
 * accumulation, stop-gradient, phases and parameter groups, lifetimes, FLOPs) and, through the
 * reference backend, every parameter gradient of whole training programs against central
 * finite differences of the program's own loss. */
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

/* A small residual CNN: conv -> BN -> ReLU -> maxpool, a residual block (conv, add), reflection
 * pad, instance norm, leaky ReLU, tanh, avgpool, global avgpool, flatten, linear, xent. Every
 * value with two consumers gets its gradient accumulated. */
static xpb_status tiny_build(xpb_builder *b, const xpb_builder_api *api)
{
    int64_t n = api->batch_size(b);
    xpb_value x, y, skip, labels, loss;
    xpb_input_desc img = {"images", XPB_DTYPE_F32, 4, {n, 2, 9, 9}, -1, 1};
    xpb_input_desc lab = {"labels", XPB_DTYPE_I32, 1, {n}, 0, 2};
    xpb_layer_opts o = {.bias = 1};
    xpb_op_attrs c3 = {.pad = {1, 1}}, pool = {.kernel = {3, 3}, .stride = {2, 2}, .pad = {1, 1}};
    xpb_op_attrs pad = {.pad = {1, 1}}, leaky = {.negative_slope = 0.2f, .eps = 1e-5f};
    xpb_op_attrs in_eps = {.eps = 1e-5f},
                 avg = {.kernel = {2, 2}, .stride = {1, 1}, .count_include_pad = 1};
    TRY(api->input(&x, b, &img));
    TRY(api->input(&labels, b, &lab));
    TRY(xpb_layer_conv(&y, b, api, "conv1", x, 2, 4, 3, 0, &c3, &o));
    TRY(xpb_layer_batchnorm(&y, b, api, "bn1", y, 4, 0));
    TRY(xpb_layer_unary(&y, b, api, "relu1", XPB_OP_RELU, y, NULL));
    TRY(xpb_layer_unary(&skip, b, api, "pool1", XPB_OP_MAXPOOL, y, &pool));
    TRY(xpb_layer_conv(&y, b, api, "conv2", skip, 4, 4, 3, 0, &c3, &o));
    xpb_value sum_in[2] = {y, skip};
    TRY(api->op(&y, b, "add", XPB_OP_ADD, sum_in, 2, NULL));
    TRY(xpb_layer_unary(&y, b, api, "pad", XPB_OP_REFLECTION_PAD, y, &pad));
    xpb_op_attrs c3s2 = {.stride = {2, 2}, .pad = {1, 1}, .output_padding = {1, 1}};
    TRY(xpb_layer_conv(&y, b, api, "deconv", y, 4, 3, 3, 1, &c3s2, &o));
    TRY(xpb_layer_unary(&y, b, api, "in", XPB_OP_INSTANCENORM, y, &in_eps));
    TRY(xpb_layer_unary(&y, b, api, "leaky", XPB_OP_LEAKY_RELU, y, &leaky));
    TRY(xpb_layer_unary(&y, b, api, "tanh", XPB_OP_TANH, y, NULL));
    TRY(xpb_layer_unary(&y, b, api, "avg", XPB_OP_AVGPOOL, y, &avg));
    TRY(xpb_layer_unary(&y, b, api, "gap", XPB_OP_GLOBAL_AVGPOOL, y, NULL));
    int64_t flat[2] = {n, 3};
    TRY(api->reshape(&y, b, "flatten", y, 2, flat));
    TRY(xpb_layer_linear(&y, b, api, "fc", y, 3, 3, &o));
    TRY(api->output(b, "logits", y));
    xpb_value xin[2] = {y, labels};
    TRY(api->op(&loss, b, "loss", XPB_OP_SOFTMAX_XENT, xin, 2, NULL));
    return api->loss(b, 0, loss, 1.0);
}

/* Declares one parameter name twice: the builder must refuse, naming it. */
static xpb_status twice_build(xpb_builder *b, const xpb_builder_api *api)
{
    xpb_value w;
    xpb_param_desc p = {"D.weight", 1, {4}, {XPB_INIT_ZEROS, 0, 0}, 0, 1};
    TRY(api->parameter(&w, b, &p));
    return api->parameter(&w, b, &p);
}

/* A layer whose shapes do not fit: the message names the layer. */
static xpb_status misfit_build(xpb_builder *b, const xpb_builder_api *api)
{
    xpb_value x, y;
    xpb_input_desc img = {"images", XPB_DTYPE_F32, 4, {1, 3, 8, 8}, -1, 1};
    xpb_layer_opts o = {.bias = 1};
    TRY(api->input(&x, b, &img));
    return xpb_layer_conv(&y, b, api, "conv_wrong", x, 4, 8, 3, 0, NULL, &o);
}

/* Two groups and two phases, CycleGAN-style: G maps a to fake; phase "gen" trains G through
 * D (MSE vs 1) plus a weighted L1 term; phase "disc" trains D on the detached fake vs 0 and on
 * a vs 1, reusing D's weights and the fakes of the first phase. */
static xpb_status gan2_build(xpb_builder *b, const xpb_builder_api *api)
{
    int64_t n = api->batch_size(b);
    uint32_t g, d, pg, pd;
    xpb_value a, fake, dfake, dreal, ddet, ones, zeros, l, det, gw, gb, dw, db;
    xpb_input_desc img = {"real_a", XPB_DTYPE_F32, 4, {n, 1, 6, 6}, -1, 1};
    xpb_op_attrs c3 = {.pad = {1, 1}}, c4 = {.stride = {2, 2}, .pad = {1, 1}};
    xpb_optimizer_desc adam = {.kind = XPB_OPTIMIZER_ADAM, .lr = 0, .beta1 = 0.5, .beta2 = 0.999};
    TRY(api->group(&g, b, "G"));
    TRY(api->group(&d, b, "D"));
    TRY(api->phase(&pg, b, "gen", g, &adam));
    TRY(api->phase(&pd, b, "disc", d, &adam));
    TRY(api->input(&a, b, &img));
    xpb_param_desc p_gw = {"G.weight", 4, {1, 1, 3, 3}, {XPB_INIT_NORMAL, 0, 0.5}, g, 1};
    xpb_param_desc p_gb = {"G.bias", 1, {1}, {XPB_INIT_NORMAL, 0, 0.1}, g, 1};
    xpb_param_desc p_dw = {"D.weight", 4, {1, 1, 4, 4}, {XPB_INIT_NORMAL, 0, 0.5}, d, 1};
    xpb_param_desc p_db = {"D.bias", 1, {1}, {XPB_INIT_NORMAL, 0, 0.1}, d, 1};
    TRY(api->parameter(&gw, b, &p_gw));
    TRY(api->parameter(&gb, b, &p_gb));
    TRY(api->parameter(&dw, b, &p_dw));
    TRY(api->parameter(&db, b, &p_db));
    xpb_value gin[3] = {a, gw, gb};
    TRY(api->op(&fake, b, "G.conv", XPB_OP_CONV2D, gin, 3, &c3));
    TRY(api->op(&fake, b, "G.tanh", XPB_OP_TANH, &fake, 1, NULL));
    int64_t pd_dims[4] = {n, 1, 3, 3};
    TRY(api->constant(&ones, b, "ones", 4, pd_dims, 1.0));
    TRY(api->constant(&zeros, b, "zeros", 4, pd_dims, 0.0));
    xpb_value din[3] = {fake, dw, db};
    TRY(api->op(&dfake, b, "D.conv", XPB_OP_CONV2D, din, 3, &c4));
    xpb_value m1[2] = {dfake, ones};
    TRY(api->op(&l, b, "gan_loss", XPB_OP_MSE_LOSS, m1, 2, NULL));
    TRY(api->loss(b, pg, l, 1.0));
    xpb_value m2[2] = {fake, a};
    TRY(api->op(&l, b, "cycle", XPB_OP_L1_LOSS, m2, 2, NULL));
    TRY(api->loss(b, pg, l, 10.0));
    TRY(api->stop_gradient(&det, b, fake));
    din[0] = det;
    TRY(api->op(&ddet, b, "D.conv_fake", XPB_OP_CONV2D, din, 3, &c4));
    din[0] = a;
    TRY(api->op(&dreal, b, "D.conv_real", XPB_OP_CONV2D, din, 3, &c4));
    xpb_value m3[2] = {ddet, zeros}, m4[2] = {dreal, ones};
    TRY(api->op(&l, b, "d_fake", XPB_OP_MSE_LOSS, m3, 2, NULL));
    TRY(api->loss(b, pd, l, 0.5));
    TRY(api->op(&l, b, "d_real", XPB_OP_MSE_LOSS, m4, 2, NULL));
    TRY(api->loss(b, pd, l, 0.5));
    return XPB_OK;
}

static const xpb_model_api tiny_api = {sizeof(xpb_model_api), NULL, 0, tiny_build};
static const xpb_model_api twice_api = {sizeof(xpb_model_api), NULL, 0, twice_build};
static const xpb_model_api misfit_api = {sizeof(xpb_model_api), NULL, 0, misfit_build};
static const xpb_model_api gan2_api = {sizeof(xpb_model_api), NULL, 0, gan2_build};

static xpb_program_options config(const char *model, uint32_t batch, uint32_t mode)
{
    xpb_program_options c = {.model = model,
                             .batch = batch,
                             .mode = mode,
                             .seed = 7,
                             .lr = 0.0,
                             .momentum = 0.0,
                             .weight_decay = 0.0};
    return c;
}

static uint32_t find_tensor(const xpb_model_program *mp, const char *name)
{
    for (uint32_t t = 0; t < mp->n_tensors; t++)
        if (strcmp(mp->tensors[t].name, name) == 0)
            return t;
    return XPB_NO_TENSOR;
}

static int count_ops(const xpb_model_program *mp, uint32_t first, uint32_t n, uint32_t kind)
{
    int c = 0;
    for (uint32_t i = first; i < first + n; i++)
        c += mp->ops[i].kind == kind;
    return c;
}

static void test_structure(void **state)
{
    (void)state;
    xpb_model_program *mp;
    xpb_err err = {{0}};
    xpb_program_options c = config("tiny", 2, XPB_MODE_TRAIN);
    assert_int_equal(xpb_model_program_create(&mp, &tiny_api, &c, &err), XPB_OK);
    assert_int_equal(mp->n_phases, 1);
    /* pool1's output feeds conv2 and the add: its gradient is a sum. */
    uint32_t pool_grad = find_tensor(mp, "pool1.grad");
    assert_int_not_equal(pool_grad, XPB_NO_TENSOR);
    int producer_is_add = 0;
    for (uint32_t i = 0; i < mp->n_ops; i++)
        if (mp->ops[i].n_outputs && mp->ops[i].outputs[0] == pool_grad)
            producer_is_add = mp->ops[i].kind == XPB_OP_ADD;
    assert_true(producer_is_add);
    /* Every trainable parameter has a GRAD tensor and exactly one SGD update. */
    int params = 0;
    for (uint32_t t = 0; t < mp->n_tensors; t++)
        if (mp->tensors[t].role == XPB_ROLE_PARAM) {
            char name[256];
            snprintf(name, sizeof name, "%s.grad", mp->tensors[t].name);
            uint32_t g = find_tensor(mp, name);
            assert_int_not_equal(g, XPB_NO_TENSOR);
            assert_int_equal(mp->tensors[g].role, XPB_ROLE_GRAD);
            assert_int_equal(mp->tensors[g].grad_of, t);
            params++;
        }
    assert_int_equal(count_ops(mp, 0, mp->n_ops, XPB_OP_SGD_UPDATE), params);
    /* The input needs no gradient: no backward-data op for the first conv. */
    assert_int_equal(find_tensor(mp, "images.grad"), XPB_NO_TENSOR);
    /* Lifetimes: every op reads tensors that are alive. */
    for (uint32_t i = 0; i < mp->n_ops; i++)
        for (uint32_t k = 0; k < mp->ops[i].n_inputs; k++) {
            const xpb_tensor_desc *d = &mp->tensors[mp->ops[i].inputs[k]];
            assert_true(d->first_op <= i && i <= d->last_op);
        }
    /* Parameter count: conv1 2*4*9+4, bn 4+4, conv2 4*4*9+4, deconv 4*3*9+3, fc 3*3+3. */
    assert_int_equal(mp->param_count, 76 + 8 + 148 + 111 + 12);
    assert_true(mp->flops_train > 2 * mp->flops_forward);
    xpb_model_program_free(mp);

    c = config("tiny", 2, XPB_MODE_INFERENCE);
    assert_int_equal(xpb_model_program_create(&mp, &tiny_api, &c, &err), XPB_OK);
    assert_int_equal(count_ops(mp, 0, mp->n_ops, XPB_OP_BATCHNORM_INFER), 1);
    assert_int_equal(count_ops(mp, 0, mp->n_ops, XPB_OP_BATCHNORM_TRAIN), 0);
    assert_int_equal(count_ops(mp, 0, mp->n_ops, XPB_OP_SOFTMAX_XENT), 1); /* cheap loss kept */
    assert_int_equal(count_ops(mp, 0, mp->n_ops, XPB_OP_SGD_UPDATE), 0);
    xpb_model_program_free(mp);
}

static void test_builder_errors(void **state)
{
    (void)state;
    xpb_model_program *mp = NULL;
    xpb_err err = {{0}};
    xpb_program_options c = config("twice", 1, XPB_MODE_TRAIN);
    assert_int_equal(xpb_model_program_create(&mp, &twice_api, &c, &err), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(err.msg, "'D.weight' declared twice"));
    assert_non_null(strstr(err.msg, "model 'twice'"));
    c = config("misfit", 1, XPB_MODE_TRAIN);
    assert_int_equal(xpb_model_program_create(&mp, &misfit_api, &c, &err), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(err.msg, "layer 'conv_wrong'"));
    assert_non_null(strstr(err.msg, "expects 4 input channels"));
    assert_null(mp);
}

static void test_phases(void **state)
{
    (void)state;
    xpb_model_program *mp;
    xpb_err err = {{0}};
    xpb_program_options c = config("gan2", 2, XPB_MODE_TRAIN);
    assert_int_equal(xpb_model_program_create(&mp, &gan2_api, &c, &err), XPB_OK);
    assert_int_equal(mp->n_phases, 2);
    const xpb_phase *gen = &mp->phases[0], *disc = &mp->phases[1];
    uint32_t gw = find_tensor(mp, "G.weight"), dw = find_tensor(mp, "D.weight");
    /* Phase gen updates G only, phase disc updates D only. */
    for (uint32_t p = 0; p < 2; p++)
        for (uint32_t i = mp->phases[p].first_op; i < mp->phases[p].first_op + mp->phases[p].n_ops;
             i++)
            if (mp->ops[i].kind == XPB_OP_ADAM_UPDATE) {
                const char *name = mp->tensors[mp->ops[i].inputs[0]].name;
                assert_true(strncmp(name, p == 0 ? "G." : "D.", 2) == 0);
            }
    assert_int_equal(count_ops(mp, gen->first_op, gen->n_ops, XPB_OP_ADAM_UPDATE), 2);
    assert_int_equal(count_ops(mp, disc->first_op, disc->n_ops, XPB_OP_ADAM_UPDATE), 2);
    /* The generator forward is not recomputed in the disc phase (fakes are reused). */
    for (uint32_t i = disc->first_op; i < disc->first_op + disc->n_ops; i++)
        assert_true(strcmp(mp->ops[i].layer, "G.conv") != 0 || mp->ops[i].kind != XPB_OP_CONV2D);
    /* No weight gradient of D in the gen phase, no gradient into G in the disc phase. */
    for (uint32_t i = gen->first_op; i < gen->first_op + gen->n_ops; i++)
        for (uint32_t k = 0; k < mp->ops[i].n_outputs; k++)
            assert_int_not_equal(mp->tensors[mp->ops[i].outputs[k]].grad_of, dw);
    for (uint32_t i = disc->first_op; i < disc->first_op + disc->n_ops; i++)
        for (uint32_t k = 0; k < mp->ops[i].n_outputs; k++)
            assert_int_not_equal(mp->tensors[mp->ops[i].outputs[k]].grad_of, gw);
    xpb_model_program_free(mp);
}

/* ---- numerical check through the reference backend ---- */

static xpb_registry *registry;

static int setup(void **state)
{
    (void)state;
    const char *dirs[1] = {XPB_TEST_PLUGIN_DIR};
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

/* Loss of phase `phase` (weighted sum) after writing `params` and running one step. With
 * lr 0 the parameters do not move, so every call sees the same function. */
static double loss_at(xpb_session *s, uint32_t phase, uint32_t t, const float *value)
{
    xpb_err err = {{0}};
    double loss;
    assert_int_equal(s->api->write(s->exe, t, value, xpb_tensor_bytes(&s->mp->tensors[t])), XPB_OK);
    assert_int_equal(xpb_session_step(s, NULL, &err), XPB_OK);
    assert_int_equal(xpb_session_loss(&loss, s, phase, &err), XPB_OK);
    return loss;
}

static void gradcheck_program(const xpb_model_api *model, const char *name)
{
    xpb_model_program *mp;
    xpb_err err = {{0}};
    xpb_program_options c = config(name, 2, XPB_MODE_TRAIN);
    assert_int_equal(xpb_model_program_create(&mp, model, &c, &err), XPB_OK);
    xpb_session s;
    xpb_compile_options o = {
        .struct_size = sizeof o, .precision = XPB_PRECISION_FP32, .keep_all = 1};
    assert_int_equal(
        xpb_session_open(&s, xpb_registry_backend(registry, "cpu_ref"), 0, mp, &o, &err), XPB_OK);
    int checked = 0;
    for (uint32_t t = 0; t < mp->n_tensors; t++) {
        const xpb_tensor_desc *d = &mp->tensors[t];
        if (d->role != XPB_ROLE_PARAM)
            continue;
        /* The phase that updates this parameter. */
        uint32_t phase = 0;
        for (uint32_t i = 0; i < mp->n_ops; i++)
            if ((mp->ops[i].kind == XPB_OP_SGD_UPDATE || mp->ops[i].kind == XPB_OP_ADAM_UPDATE) &&
                mp->ops[i].inputs[0] == t)
                for (uint32_t p = 0; p < mp->n_phases; p++)
                    if (i >= mp->phases[p].first_op &&
                        i < mp->phases[p].first_op + mp->phases[p].n_ops)
                        phase = p;
        int64_t n = xpb_tensor_numel(d);
        float *w = malloc((size_t)n * 4), *grad = malloc((size_t)n * 4);
        assert_int_equal(xpb_model_program_initial_value(mp, t, w), XPB_OK);
        loss_at(&s, phase, t, w);
        char gname[256];
        snprintf(gname, sizeof gname, "%s.grad", d->name);
        uint32_t g = find_tensor(mp, gname);
        assert_int_not_equal(g, XPB_NO_TENSOR);
        assert_int_equal(xpb_session_read(&s, g, grad, &err), XPB_OK);
        double max_err = 0, max_grad = 0;
        for (int64_t i = 0; i < n && i < 24; i++) {
            float keep = w[i];
            /* small enough that no ReLU or max-pool kink lies within +-h for the synthetic
             * data (1e-2 crossed one), large enough for fp32 losses */
            double h = 1e-3 * (fabs(keep) > 1 ? fabs(keep) : 1);
            w[i] = (float)(keep + h);
            double up = loss_at(&s, phase, t, w);
            w[i] = (float)(keep - h);
            double down = loss_at(&s, phase, t, w);
            w[i] = keep;
            double numeric = (up - down) / ((double)(float)(keep + h) - (double)(float)(keep - h));
            double e = fabs(numeric - grad[i]);
            if (e > max_err)
                max_err = e;
            if (fabs(grad[i]) > max_grad)
                max_grad = fabs(grad[i]);
        }
        loss_at(&s, phase, t, w);
        if (max_err > 2e-3 + 2e-2 * max_grad)
            fail_msg("%s: '%s' gradient differs from finite differences by %g (max |grad| %g)",
                     name, d->name, max_err, max_grad);
        checked++;
        free(w);
        free(grad);
    }
    assert_true(checked >= 4);
    xpb_session_close(&s);
    xpb_model_program_free(mp);
}

static void test_gradients_tiny(void **state)
{
    (void)state;
    gradcheck_program(&tiny_api, "tiny");
}

static void test_gradients_two_phases(void **state)
{
    (void)state;
    gradcheck_program(&gan2_api, "gan2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_structure),
        cmocka_unit_test(test_builder_errors),
        cmocka_unit_test(test_phases),
        cmocka_unit_test(test_gradients_tiny),
        cmocka_unit_test(test_gradients_two_phases),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
