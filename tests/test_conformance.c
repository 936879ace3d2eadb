/* The conformance suite and first-step verification against a backend that is wrong on purpose
 * (tests/faulty_backend: cpu_ref with one op's outputs perturbed when read): the reference
 * against itself passes exactly, a kernel wrong everywhere by 1e-3, wrong at one element or
 * returning NaN fails its cases and no other, a wrong gradient fails a model's gradients row
 * and verification, kink flips are counted and switch the gradients to the joint check; and
 * the verdicts' one table of spellings, in the table and the JSON. */
#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "check/conformance.h"
#include "check/conformance_case.h"
#include "plugin/loader.h"
#include "program/model_program.h"
#include "base/names.h"
#include "check/verify.h"
#include "scenario/run_config.h"

static xpb_registry *registry;

static int setup(void **state)
{
    (void)state;
    const char *dirs[2] = {XPB_TEST_PLUGIN_DIR, XPB_TEST_FAULTY_DIR};
    xpb_err err = {{0}};
    if (xpb_registry_load(&registry, dirs, 2, &err) != XPB_OK)
        return -1;
    if (!xpb_registry_backend(registry, "faulty_ref") ||
        !xpb_registry_backend(registry, XPB_REFERENCE_BACKEND) ||
        !xpb_registry_model(registry, "conv6")) {
        fprintf(stderr, "faulty_ref, %s or conv6 missing\n", XPB_REFERENCE_BACKEND);
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

/* Makes faulty_ref wrong on `op` in the way `kind` says (NULL: right again). */
static void fault(const char *op, const char *kind)
{
    if (op) {
        setenv("XPB_FAULTY_OP", op, 1);
        setenv("XPB_FAULTY_KIND", kind, 1);
    } else {
        unsetenv("XPB_FAULTY_OP");
        unsetenv("XPB_FAULTY_KIND");
    }
}

/* The quick suite on faulty_ref, cases whose name contains `filter`, models or not. */
static xpb_conformance_summary suite(const char *filter, int models, const char *json_path)
{
    xpb_conformance_options opt;
    xpb_conformance_defaults(&opt);
    opt.quick = 1;
    opt.models = models;
    opt.filter = filter;
    opt.json_path = json_path;
    opt.out = NULL;
    xpb_conformance_summary sum;
    xpb_err err = {{0}};
    xpb_status st = xpb_conformance_run(&sum, registry, "faulty_ref", &opt, &err);
    if (st != XPB_OK)
        fprintf(stderr, "conformance: %s\n", err.msg);
    assert_int_equal(st, XPB_OK);
    return sum;
}

static void test_verdict_names(void **state)
{
    (void)state;
    assert_string_equal(xpb_conformance_verdict_name(XPB_CONFORMANCE_PASS), "PASS");
    assert_string_equal(xpb_conformance_verdict_name(XPB_CONFORMANCE_FAIL), "FAIL");
    assert_string_equal(xpb_conformance_verdict_name(XPB_CONFORMANCE_UNSUPPORTED), "UNSUPPORTED");
    assert_string_equal(xpb_conformance_verdict_name(XPB_CONFORMANCE_ERROR), "ERROR");
    assert_string_equal(xpb_conformance_verdict_name(XPB_CONFORMANCE_VERDICT_COUNT), "?");
}

/* The reference against itself: every op and chain case passes with error 0, and the JSON says
 * so in the table's spelling. */
static void test_reference_against_itself(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof path, "%s/test_conformance_%d.json", XPB_TEST_BINARY_DIR, (int)getpid());
    fault(NULL, NULL);
    xpb_conformance_summary sum = suite(NULL, 0, path);
    assert_true(sum.passed >= 60);
    assert_int_equal(sum.failed, 0);
    assert_int_equal(sum.unsupported, 0);
    json_error_t jerr;
    json_t *doc = json_load_file(path, 0, &jerr);
    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "reference")),
                        XPB_REFERENCE_BACKEND);
    assert_string_equal(json_string_value(json_object_get(doc, "precision")), "fp32");
    json_t *cases = json_object_get(doc, "cases");
    assert_int_equal(json_array_size(cases), sum.passed);
    size_t i;
    json_t *row;
    json_array_foreach(cases, i, row)
    {
        assert_string_equal(json_string_value(json_object_get(row, "status")), "PASS");
        assert_true(json_real_value(json_object_get(row, "error")) == 0.0);
        assert_true(json_real_value(json_object_get(row, "tolerance")) == 1e-4);
    }
    json_decref(doc);
    unlink(path);
}

/* A convolution wrong everywhere by 1e-3 relative fails its three quick cases; its backward
 * ops, which the fault does not touch, pass. */
static void test_kernel_wrong_everywhere(void **state)
{
    (void)state;
    fault("CONV2D", "scale");
    xpb_conformance_summary sum = suite("CONV2D", 0, NULL);
    fault(NULL, NULL);
    assert_int_equal(sum.failed, 3);
    assert_int_equal(sum.passed, 6);
}

/* One wrong element per tensor of backward weights, and a NaN out of ReLU, fail. */
static void test_one_wrong_element_and_nan(void **state)
{
    (void)state;
    fault("CONV2D_BWD_WEIGHTS", "element");
    xpb_conformance_summary sum = suite("CONV2D_BWD_WEIGHTS", 0, NULL);
    assert_int_equal(sum.failed, 3);
    assert_int_equal(sum.passed, 0);
    fault("RELU", "nan");
    sum = suite("RELU", 0, NULL); /* RELU, RELU_BWD, LEAKY_RELU, LEAKY_RELU_BWD */
    fault(NULL, NULL);
    assert_int_equal(sum.failed, 1);
    assert_int_equal(sum.passed, 3);
}

/* A wrong weight gradient in a model step fails the gradients row that reads it (keep_all)
 * and nothing else: the forward rows and the optimizer state of the run as compiled for a
 * benchmark are right. */
static void test_model_gradient_wrong(void **state)
{
    (void)state;
    fault(NULL, NULL);
    xpb_conformance_summary sum = suite("model conv6", 1, NULL);
    assert_int_equal(sum.passed, 4);
    assert_int_equal(sum.failed, 0);
    fault("CONV2D_BWD_WEIGHTS", "element");
    sum = suite("model conv6", 1, NULL);
    fault(NULL, NULL);
    assert_int_equal(sum.failed, 1);
    assert_int_equal(sum.passed, 3);
}

/* Op set 3: a wrong kernel fails the cases that read it, and only those: a softmax scaled by
 * 1 + 1e-3 (its backward right), one wrong element in each LSTM gradient (seven outputs, past
 * xpb_op's inline four), a NaN in the embedding's weight gradient, a gradient clip reporting the
 * wrong norm in the language-model chain, heads merged with the wrong sign in the attention
 * chains. */
static void test_op_set_3_faults(void **state)
{
    (void)state;
    static const struct {
        const char *op, *kind, *filter;
        unsigned failed, passed;
    } faults[] = {
        {"SOFTMAX", "scale", "SOFTMAX+BWD", 5, 0},
        {"LSTM_BWD", "element", "LSTM", 3, 2}, /* LSTM+BWD x3 fail, LSTM (y only) x2 pass */
        {"EMBEDDING_BWD", "nan", "EMBEDDING", 3, 3},
        {"CLIP_GRAD_NORM", "scale", "chain lstm", 1, 0},
        {"PERMUTE", "negate", "chain attention", 2, 0},
    };
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++) {
        fault(faults[i].op, faults[i].kind);
        xpb_conformance_summary sum = suite(faults[i].filter, 0, NULL);
        fault(NULL, NULL);
        if (sum.failed != faults[i].failed || sum.passed != faults[i].passed)
            fail_msg("%s %s on '%s': %u failed, %u passed; expected %u, %u", faults[i].op,
                     faults[i].kind, faults[i].filter, sum.failed, sum.passed, faults[i].failed,
                     faults[i].passed);
    }
}

/* The catalogue's programs as a backend receives them: valid, sealed (op set 3 exactly for the
 * cases with an op or an attribute of op set 3), operands beyond xpb_op's inline arrays in
 * inputs_all / outputs_all; attention masks hide about a third of the keys with -inf, never
 * key 0. */
static void test_catalogue_op_set_3(void **state)
{
    (void)state;
    xpb_ct_list l = {0};
    xpb_ct_catalogue(&l, 0);
    assert_false(l.oom);
    unsigned opset3 = 0, masks = 0, beyond_inline = 0;
    for (size_t i = 0; i < l.n; i++) {
        xpb_ct_case *c = &l.v[i];
        xpb_ct_bind(c);
        char msg[512];
        if (c->overflow || xpb_program_validate(&c->prog, msg, sizeof msg) != XPB_OK)
            fail_msg("case %s %s: %s", c->name, c->shape, c->overflow ? "overflow" : msg);
        uint32_t need = 1;
        for (uint32_t k = 0; k < c->n_ops; k++) {
            const xpb_op *op = &c->ops[k];
            if (xpb_op_opset(op->kind) == 3 || (op->attrs_set & ~((1ull << 18) - 1)))
                need = 3;
            beyond_inline += op->inputs_all != NULL || op->outputs_all != NULL;
        }
        assert_int_equal(c->prog.opset, need);
        opset3 += need == 3;
        void **in = xpb_ct_inputs(c, 7, 0);
        assert_non_null(in);
        xpb_ct_masks(c, in);
        for (uint32_t t = 0; t < c->n_t; t++) {
            if (c->init[t] != XPB_CT_INIT_MASK)
                continue;
            int64_t n = xpb_tensor_numel(&c->t[t]), sk = c->t[t].dims[1], hidden = 0;
            for (int64_t e = 0; e < n; e++)
                if (isinf(((float *)in[t])[e])) {
                    assert_true(e % sk != 0);
                    hidden++;
                }
            assert_true(hidden > n / 6 && hidden < n / 2);
            masks++;
        }
        xpb_ct_buffers_free(in);
    }
    assert_true(opset3 >= 70);
    assert_true(masks >= 3);
    assert_true(beyond_inline >= 4); /* LSTM_BWD with states, CLIP_GRAD_NORM x3 */
    xpb_ct_list_free(&l);
}

/* The configuration of a conv6 training step at batch 2 on faulty_ref. */
static void conv6_config(xpb_run_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->id = (char *)"conv6";
    cfg->model = (char *)"conv6";
    cfg->mode = XPB_MODE_TRAIN;
    cfg->batch = 2;
    cfg->precision = XPB_PRECISION_FP32;
    cfg->backend = (char *)"faulty_ref";
    cfg->seed = 3;
    cfg->data = (char *)"synthetic";
    cfg->lr = cfg->momentum = cfg->weight_decay = NAN; /* the model's own */
    cfg->min_steps = cfg->repeats = 1;
}

/* Verification of one conv6 step on faulty_ref, as `op`/`kind` make it wrong. */
static xpb_verify_result verify(const char *op, const char *kind)
{
    xpb_run_config cfg;
    conv6_config(&cfg);
    xpb_program_options po = xpb_run_config_program(&cfg);
    xpb_model_program *mp = NULL;
    xpb_err err = {{0}};
    assert_int_equal(
        xpb_model_program_create(&mp, xpb_registry_model(registry, "conv6"), &po, &err), XPB_OK);
    xpb_verify_result r;
    fault(op, kind);
    xpb_status st =
        xpb_verify_step(&r, registry, xpb_registry_backend(registry, "faulty_ref"), mp, &cfg, &err);
    fault(NULL, NULL);
    if (st != XPB_OK)
        fprintf(stderr, "verify: %s\n", err.msg);
    assert_int_equal(st, XPB_OK);
    xpb_model_program_free(mp);
    return r;
}

static void test_verify(void **state)
{
    (void)state;
    xpb_verify_result r = verify(NULL, NULL);
    assert_true(r.passed);
    assert_true(r.max_rel_error == 0.0);
    assert_int_equal(r.kink_flips, 0);
    assert_non_null(strstr(r.message, "verified"));

    r = verify("CONV2D_BWD_WEIGHTS", "element");
    assert_false(r.passed);
    assert_true(r.max_rel_error > r.tolerance);
    assert_true(r.tolerance == 1e-2); /* the gradient allowance */
    assert_non_null(strstr(r.message, "verification failed"));
    assert_non_null(strstr(r.message, "on 'conv")); /* a weight or bias gradient of a conv */
    assert_non_null(strstr(r.message, ".grad'"));

    r = verify("LINEAR", "scale"); /* the logits, a forward output, wrong by 1e-3 */
    assert_false(r.passed);
    assert_true(r.tolerance == 1e-4);
}

/* Every ReLU output read on the other side of 0: kink flips are counted, and the gradients
 * (right: the fault is only in what is read) are judged together and pass. */
static void test_verify_counts_kink_flips(void **state)
{
    (void)state;
    xpb_verify_result r = verify("RELU", "negate");
    assert_true(r.kink_flips > 100);
    assert_true(r.passed);
    assert_non_null(strstr(r.message, "kink flips"));
}

static void test_missing_backend(void **state)
{
    (void)state;
    xpb_conformance_options opt;
    xpb_conformance_defaults(&opt);
    opt.out = NULL;
    xpb_conformance_summary sum;
    xpb_err err = {{0}};
    assert_int_equal(xpb_conformance_run(&sum, registry, "no_such_backend", &opt, &err),
                     XPB_NOT_FOUND);
    assert_non_null(strstr(err.msg, "no_such_backend"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verdict_names),
        cmocka_unit_test(test_reference_against_itself),
        cmocka_unit_test(test_kernel_wrong_everywhere),
        cmocka_unit_test(test_one_wrong_element_and_nan),
        cmocka_unit_test(test_model_gradient_wrong),
        cmocka_unit_test(test_op_set_3_faults),
        cmocka_unit_test(test_catalogue_op_set_3),
        cmocka_unit_test(test_verify),
        cmocka_unit_test(test_verify_counts_kink_flips),
        cmocka_unit_test(test_missing_backend),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
