/* `xpubench info MODEL --program` (core/cli/cli_info_program.c): the program it prints is the one
 * the host hands a backend (op for op, tensor for tensor, the attributes each op sets), the
 * inference program holds no backward op, the options are checked, and the table of op kinds
 * in docs/models.md ("The ops of each program") is what the command says for every shipped
 * model: the test fails when that table goes stale. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "cli_harness.h"
#include "plugin/loader.h"
#include "program/model_program.h"
#include "program/program_abi.h"

static int setup(void **state)
{
    (void)state;
    return make_tmpdir("xpb_test_info_program_");
}

static int teardown(void **state)
{
    (void)state;
    return remove_tmpdir();
}

/* `xpubench info MODEL --variant V --program --mode MODE --json`, parsed; owned by the caller. */
static json_t *program_json(const char *model, const char *variant, const char *mode)
{
    char *out, *err;
    int rc = xpb(&out, &err, "info", model, "--variant", variant, "--program", "--mode", mode,
                 "--json", NULL);
    if (rc != 0)
        print_error("info %s --variant %s --mode %s: exit %d: %s\n", model, variant, mode, rc, err);
    assert_int_equal(rc, 0);
    json_error_t e;
    json_t *doc = json_loads(out, 0, &e);
    assert_non_null(doc);
    free(out);
    free(err);
    return doc;
}

/* "CONV2D, RELU, ..." from the document's op_kinds, into buf. */
static void kinds_text(char *buf, size_t size, const json_t *doc)
{
    const json_t *kinds = json_object_get(doc, "op_kinds");
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < json_array_size(kinds); i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? ", " : "",
                              json_string_value(json_object_get(json_array_get(kinds, i), "kind")));
}

/* ---- the document against the program the host builds ---- */

static const xpb_model_api *conv6_api(xpb_registry **r)
{
    const char *dirs[] = {XPB_TEST_PLUGIN_DIR};
    xpb_err err = {{0}};
    assert_int_equal(xpb_registry_load(r, dirs, 1, &err), XPB_OK);
    const xpb_model_api *m = xpb_registry_model(*r, "conv6");
    assert_non_null(m);
    return m;
}

static void test_json_is_the_program(void **state)
{
    (void)state;
    xpb_registry *r;
    const xpb_model_api *m = conv6_api(&r);
    xpb_program_options o = {.model = "conv6",
                             .mode = XPB_MODE_TRAIN,
                             .batch = 1,
                             .seed = 42,
                             .lr = NAN,
                             .momentum = NAN,
                             .weight_decay = NAN};
    xpb_model_program *mp;
    xpb_err err = {{0}};
    assert_int_equal(xpb_model_program_create(&mp, m, &o, &err), XPB_OK);
    const xpb_program *p = &mp->program;

    json_t *doc = program_json("conv6", "cifar", "train");
    assert_string_equal(json_string_value(json_object_get(doc, "mode")), "train");
    assert_string_equal(json_string_value(json_object_get(doc, "variant")), "cifar");
    assert_string_equal(json_string_value(json_object_get(doc, "precision")), "fp32");
    assert_int_equal(json_integer_value(json_object_get(doc, "opset")), p->opset);
    json_t *ops = json_object_get(doc, "ops"), *tensors = json_object_get(doc, "tensors");
    assert_int_equal(json_array_size(ops), p->n_ops);
    assert_int_equal(json_array_size(tensors), p->n_tensors);
    assert_int_equal(json_array_size(json_object_get(doc, "phases")), p->n_phases);
    for (uint32_t t = 0; t < p->n_tensors; t++) {
        const xpb_tensor_desc *d = xpb_program_tensor(p, t);
        json_t *e = json_array_get(tensors, t);
        assert_string_equal(json_string_value(json_object_get(e, "name")), d->name);
        assert_int_equal(json_array_size(json_object_get(e, "shape")), d->ndim);
        assert_int_equal(json_integer_value(json_object_get(e, "last_op")), d->last_op);
    }
    for (uint32_t i = 0; i < p->n_ops; i++) {
        const xpb_op *op = xpb_program_op(p, i);
        json_t *e = json_array_get(ops, i);
        assert_string_equal(json_string_value(json_object_get(e, "kind")), xpb_op_name(op->kind));
        assert_string_equal(json_string_value(json_object_get(e, "layer")), op->layer);
        json_t *in = json_object_get(e, "inputs"), *out = json_object_get(e, "outputs");
        assert_int_equal(json_array_size(in), op->n_inputs);
        assert_int_equal(json_array_size(out), op->n_outputs);
        for (uint32_t k = 0; k < op->n_inputs; k++)
            assert_int_equal(json_integer_value(json_object_get(json_array_get(in, k), "tensor")),
                             op->inputs[k]);
        /* one attribute per bit the host set, and only those */
        assert_int_equal(json_object_size(json_object_get(e, "attributes")),
                         __builtin_popcountll(op->attrs_set));
    }
    /* the values, as the op holds them */
    json_t *conv1 = json_object_get(json_array_get(ops, 0), "attributes");
    assert_int_equal(json_integer_value(json_array_get(json_object_get(conv1, "pad"), 0)), 1);
    assert_null(json_object_get(conv1, "kernel")); /* CONV2D's kernel is its weight's shape */
    json_t *sgd = json_object_get(json_array_get(ops, p->n_ops - 1), "attributes");
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(ops, p->n_ops - 1), "kind")),
        "SGD_UPDATE");
    assert_true(json_real_value(json_object_get(sgd, "lr")) == 0.01);
    assert_true(json_real_value(json_object_get(sgd, "momentum")) == 0.9);
    assert_null(json_object_get(sgd, "weight_decay")); /* zero: not set */
    json_decref(doc);
    xpb_model_program_free(mp);
    xpb_registry_free(r);
}

/* ---- text, modes and options ---- */

static void test_text(void **state)
{
    (void)state;
    char *out, *err;
    assert_int_equal(xpb(&out, &err, "info", "conv6", "--program", NULL), 0);
    assert_non_null(strstr(out, "program of conv6, variant cifar: training, batch 1, op set 1; "
                                "1 phase, 70 ops"));
    assert_non_null(strstr(out, "\nop kinds (14): CONV2D x6, CONV2D_BWD_DATA x5, "));
    assert_non_null(strstr(out, "SGD_UPDATE x18\n"));
    assert_non_null(strstr(out, "\nphase 0 'train': ops 0-69\n"));
    assert_non_null(strstr(out, "CONV2D               conv1                        stride 1,1, "
                                "pad 1,1, dilation 1,1\n"));
    assert_non_null(strstr(out, "          in   #0     images "));
    assert_non_null(strstr(out, "momentum 0.9, lr 0.01\n"));
    assert_null(strstr(out, "weight_decay"));
    free(out);
    free(err);

    /* --batch scales the shapes, --precision is only echoed */
    assert_int_equal(
        xpb(&out, &err, "info", "conv6", "--program", "--batch", "8", "--precision", "bf16", NULL),
        0);
    assert_non_null(strstr(out, "images                               input            float32  "
                                "[8, 3, 32, 32]"));
    assert_non_null(strstr(out, "precision bf16-mixed: a compile option"));
    free(out);
    free(err);
}

static void test_inference(void **state)
{
    (void)state;
    json_t *doc = program_json("resnet18", "cifar", "infer");
    assert_string_equal(json_string_value(json_object_get(doc, "mode")), "inference");
    json_t *phases = json_object_get(doc, "phases");
    assert_int_equal(json_array_size(phases), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(phases, 0), "name")),
                        "inference");
    json_t *ops = json_object_get(doc, "ops");
    for (size_t i = 0; i < json_array_size(ops); i++) {
        const char *kind = json_string_value(json_object_get(json_array_get(ops, i), "kind"));
        assert_null(strstr(kind, "_BWD"));
        assert_null(strstr(kind, "_UPDATE"));
        assert_string_not_equal(kind, "BATCHNORM_TRAIN");
    }
    json_decref(doc);
}

static void test_options(void **state)
{
    (void)state;
    char *out, *err;
    assert_int_equal(xpb(&out, &err, "info", "conv6", "--program", "--mode", "sideways", NULL), 2);
    assert_non_null(strstr(err, "--mode: expected train or infer, found 'sideways'"));
    free(out);
    free(err);
    assert_int_equal(xpb(&out, &err, "info", "conv6", "--program", "--precision", "fp8", NULL), 2);
    assert_non_null(strstr(err, "--precision: expected"));
    free(out);
    free(err);
    assert_int_equal(xpb(&out, &err, "info", "conv6", "--mode", "infer", NULL), 2);
    assert_non_null(strstr(err, "add --program"));
    free(out);
    free(err);
    /* --variant is --set variant= */
    assert_int_equal(xpb(&out, &err, "info", "vgg16", "--variant", "imagenet", "--json", NULL), 0);
    assert_non_null(strstr(out, "\"parameters\": 138357544"));
    free(out);
    free(err);
    assert_int_equal(xpb(&out, &err, "info", "vgg16", "--variant", "nope", "--program", NULL), 3);
    free(out);
    free(err);
}

/* ---- docs/models.md ---- */

/* The table rows of docs/models.md's "The ops of each program": "| model | variant | mode |
 * kinds | op kinds |". */
typedef struct doc_row {
    char model[32], variant[32], mode[16], kinds[1024];
    int count;
} doc_row;

static size_t doc_rows(doc_row *rows, size_t cap)
{
    char *text = slurp(XPB_TEST_SOURCE_DIR "/docs/models.md");
    char *section = strstr(text, "\n## The ops of each program\n");
    assert_non_null(section);
    char *end = strstr(section + 1, "\n## ");
    if (end)
        *end = '\0';
    size_t n = 0;
    for (char *line = strtok(section, "\n"); line && n < cap; line = strtok(NULL, "\n")) {
        doc_row r = {0};
        if (sscanf(line, "| %31[a-z0-9_] | %31[a-z0-9_] | %15[a-z] | %d | %1023[^|]|", r.model,
                   r.variant, r.mode, &r.count, r.kinds) != 5)
            continue;
        size_t len = strlen(r.kinds);
        while (len && r.kinds[len - 1] == ' ')
            r.kinds[--len] = '\0';
        rows[n++] = r;
    }
    free(text);
    return n;
}

static void test_models_doc_is_current(void **state)
{
    (void)state;
    static const char *const shipped[][2] = {{"conv6", "cifar"},       {"vgg16", "cifar"},
                                             {"vgg16", "imagenet"},    {"resnet18", "cifar"},
                                             {"resnet18", "imagenet"}, {"cyclegan", "small"},
                                             {"cyclegan", "full"}};
    static const char *const modes[] = {"train", "infer"};
    doc_row rows[64];
    size_t n = doc_rows(rows, 64);
    assert_int_equal(n, 2 * sizeof shipped / sizeof shipped[0]);
    for (size_t s = 0; s < sizeof shipped / sizeof shipped[0]; s++)
        for (size_t m = 0; m < 2; m++) {
            const doc_row *row = NULL;
            for (size_t i = 0; i < n; i++)
                if (strcmp(rows[i].model, shipped[s][0]) == 0 &&
                    strcmp(rows[i].variant, shipped[s][1]) == 0 &&
                    strcmp(rows[i].mode, modes[m]) == 0)
                    row = &rows[i];
            if (!row)
                print_error("docs/models.md has no row for %s %s %s\n", shipped[s][0],
                            shipped[s][1], modes[m]);
            assert_non_null(row);
            json_t *doc = program_json(shipped[s][0], shipped[s][1], modes[m]);
            char kinds[1024];
            kinds_text(kinds, sizeof kinds, doc);
            if (strcmp(kinds, row->kinds) != 0 ||
                (size_t)row->count != json_array_size(json_object_get(doc, "op_kinds")))
                print_error("docs/models.md is stale for %s %s %s:\n  doc:     %d | %s\n  "
                            "command: %zu | %s\n",
                            shipped[s][0], shipped[s][1], modes[m], row->count, row->kinds,
                            json_array_size(json_object_get(doc, "op_kinds")), kinds);
            assert_string_equal(kinds, row->kinds);
            assert_int_equal(row->count, json_array_size(json_object_get(doc, "op_kinds")));
            json_decref(doc);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_is_the_program),
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_inference),
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_models_doc_is_current),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
