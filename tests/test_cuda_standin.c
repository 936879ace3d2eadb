/* The cuda plugin's real host code and kernels, run on the CPU stand-in of the CUDA runtime,
 * cuDNN and cuBLASLt (tests/cuda_standin; the plugin built for it by tests/cuda_standin/plugin,
 * run through the copy of xpubench beside it):
 * - `xpubench list` sees the stand-in's device through the plugin;
 * - `xpubench conformance --backend cuda` passes the op and chain cases of op sets 1 to 3 in
 *   fp32 (fused and unfused), tf32, bf16-mixed and fp16-mixed (none may be refused), including
 * the SGD_UPDATE and ADAM_UPDATE cases under fp16-mixed, whose gradients the host writes and which
 * used to be divided by the loss scale;
 * - the model cases of conv6 pass under fp16-mixed, with keep_all and as run ("as run" with the
 *   dynamic loss scale: no overflow at the first step);
 * - the model cases of the LSTM and transformer plugins pass in every policy, AlexNet's under
 *   fp16-mixed and ParaDnn's under bf16-mixed;
 * - conv6 trains a few steps with `verify: true` against cpu_ref in fp32, and the run's device
 *   has the ABI 1.3 figures (measured copy bandwidth, datasheet bandwidth, the peaks' source);
 *   the LSTM, GPT-2 and the Transformer (at small sizes) train verified in fp32 and bf16-mixed.
 * That part is kept to about a minute and a half on two cores (each model case or training of
 * conv6 takes half a minute to a minute on the stand-in). With `--heavy` (ctest's
 * test_cuda_standin_heavy, opt-in: the better part of an hour on two cores) it runs instead the
 * model cases of conv6 in the other policies and of VGG16, ResNet18 and CycleGAN in every
 * policy, and trains conv6 in the other policies and ResNet18 and CycleGAN-small in every
 * policy, all with verification.
 * Every run's output is printed when it fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

/* cli_harness.h runs XPB_TEST_BINARY_DIR/xpubench: here the copy beside the stand-in build */
#undef XPB_TEST_BINARY_DIR
#define XPB_TEST_BINARY_DIR XPB_TEST_STANDIN_DIR
#include "cli_harness.h"

static const char *const policies[4] = {"fp32", "tf32", "bf16", "fp16"};

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/xpb_cuda_standin_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Fails with the command's output when rc is not 0. */
static void expect_ok(int rc, char *out, char *err, const char *what)
{
    if (rc != 0)
        fail_msg("%s exited %d:\n%s\n%s", what, rc, out ? out : "", err ? err : "");
    free(out);
    free(err);
}

static void test_list(void **state)
{
    (void)state;
    char *out = NULL, *err = NULL;
    int rc = xpb(&out, &err, "list", (char *)NULL);
    if (rc != 0 || !strstr(out, "  cuda ") || !strstr(out, "stand-in"))
        fail_msg("xpubench list (rc %d) does not show the cuda plugin on the stand-in:\n%s\n%s", rc,
                 out, err);
    expect_ok(rc, out, err, "list");
}

/* Fails naming the case unless every row of the conformance document `path` passed (the
 * backend implements op sets 1 to 3: nothing may be refused). */
static void expect_rows(const char *path, const char *what, const char *out)
{
    json_error_t jerr;
    json_t *doc = json_load_file(path, 0, &jerr);
    if (!doc)
        fail_msg("%s: no conformance document %s (%s)\n%s", what, path, jerr.text, out);
    json_t *cases = json_object_get(doc, "cases");
    size_t i, passed = 0;
    json_t *row;
    json_array_foreach(cases, i, row)
    {
        const char *status = json_string_value(json_object_get(row, "status"));
        const char *msg = json_string_value(json_object_get(row, "message"));
        if (!status || strcmp(status, "PASS") != 0)
            fail_msg("%s: case %s (%s) %s: %s\n%s", what,
                     json_string_value(json_object_get(row, "case")),
                     json_string_value(json_object_get(row, "shape")), status ? status : "?",
                     msg ? msg : "", out);
        passed += strcmp(status, "PASS") == 0;
    }
    if (!json_is_true(json_object_get(doc, "complete")) || passed == 0)
        fail_msg("%s: incomplete, or no case passed\n%s", what, out);
    json_decref(doc);
}

/* `conformance --backend cuda --precision p --fusion f`, with `--filter filter` when filter is
 * not NULL, else with the model cases when models is 1; its rows checked by expect_rows. */
static void conformance(const char *p, const char *fusion, const char *filter, int models)
{
    char *out = NULL, *err = NULL, what[160], json[300];
    snprintf(json, sizeof json, "%s/conformance.json", tmpdir);
    const char *last[3] = {filter ? "--filter" : models ? NULL : "--no-models", filter, NULL};
    int rc = xpb(&out, &err, "conformance", "--backend", "cuda", "--precision", p, "--fusion",
                 fusion, "--allow-unsupported", "--json", json, last[0], last[1], (char *)NULL);
    snprintf(what, sizeof what, "conformance --backend cuda --precision %s --fusion %s%s%s", p,
             fusion, last[0] ? " " : "",
             filter    ? filter
             : last[0] ? last[0]
                       : "");
    printf("  %s: %s", what, rc == 0 ? "passed\n" : "FAILED\n");
    if (rc != 0)
        fail_msg("%s exited %d:\n%s\n%s", what, rc, out ? out : "", err ? err : "");
    expect_rows(json, what, out);
    expect_ok(rc, out, err, what);
}

static void test_ops_every_policy(void **state)
{
    (void)state;
    for (int k = 0; k < 4; k++)
        conformance(policies[k], "on", NULL, 0);
    conformance("fp32", "off", NULL, 0);
}

static void test_update_cases_fp16(void **state)
{
    (void)state;
    /* the host's gradients are never divided by the loss scale (plan/plan_scaling.c) */
    conformance("fp16", "on", "_UPDATE", 1);
}

static void test_models_light(void **state)
{
    (void)state;
    conformance("fp16", "on", "model conv6", 1);
    /* the op-set-3 models at their conformance sizes (a second each), in every policy */
    for (int k = 0; k < 4; k++) {
        conformance(policies[k], "on", "model lstm", 1);
        conformance(policies[k], "on", "model transformer", 1);
    }
    conformance("fp16", "on", "model alexnet", 1);
    conformance("bf16", "on", "model paradnn", 1);
}

static void test_models_heavy(void **state)
{
    (void)state;
    for (int k = 0; k < 3; k++)
        conformance(policies[k], "on", "model conv6", 1);
    for (int k = 0; k < 4; k++) {
        conformance(policies[k], "on", "model vgg16", 1);
        conformance(policies[k], "on", "model resnet18", 1);
        conformance(policies[k], "on", "model cyclegan", 1);
    }
}

/* A few training steps of `model` on cuda under policy p with verify: true; the run must be ok
 * and its first step verified against cpu_ref. */
static void train_verified(const char *model, const char *variant, int batch, const char *extra,
                           const char *p)
{
    char yaml[300], results[300];
    snprintf(yaml, sizeof yaml, "%s/train.yaml", tmpdir);
    snprintf(results, sizeof results, "%s/train.json", tmpdir);
    FILE *f = fopen(yaml, "w");
    assert_non_null(f);
    fprintf(f,
            "name: standin-train\n"
            "defaults:\n  backend: cuda\n  data: synthetic\n  warmup: 0\n  min_steps: 3\n"
            "  min_time: 0\n  repeats: 1\n  seed: 1\n  verify: true\n"
            "runs:\n  - name: %s\n    model: %s\n    variant: %s\n    mode: train\n"
            "    batch: %d\n    precision: %s\n%s",
            model, model, variant, batch, p, extra);
    fclose(f);
    char *out = NULL, *err = NULL, what[160];
    /* --force: each call replaces the previous call's results file */
    int rc = xpb(&out, &err, "run", yaml, "-o", results, "--force", (char *)NULL);
    snprintf(what, sizeof what, "run %s (%s) with verify: true", model, p);
    json_error_t jerr;
    json_t *doc = rc == 0 ? json_load_file(results, 0, &jerr) : NULL;
    json_t *run = json_array_get(json_object_get(doc, "runs"), 0);
    json_t *v = json_object_get(run, "verification");
    const char *status = json_string_value(json_object_get(run, "status"));
    if (rc != 0 || !status || strcmp(status, "ok") != 0 ||
        !json_is_true(json_object_get(v, "verified")))
        fail_msg("%s: rc %d, status %s, verification %s\n%s\n%s", what, rc, status ? status : "?",
                 json_string_value(json_object_get(v, "message"))
                     ? json_string_value(json_object_get(v, "message"))
                     : "?",
                 out, err);
    printf("  %s: verified (%s)\n", what, json_string_value(json_object_get(v, "message")));
    /* ABI 1.3 device_info: device-to-device copies measured on the opened device, the
     * datasheet's figures of the device the stand-in models (an A100 40GB: 1555 GB/s) */
    json_t *dev = json_object_get(run, "device");
    const char *bw_source = json_string_value(json_object_get(dev, "memory_bandwidth_source"));
    assert_true(json_number_value(json_object_get(dev, "memory_bandwidth")) > 0.0);
    assert_non_null(bw_source);
    assert_non_null(strstr(bw_source, "measured: cudaMemcpyAsync device to device"));
    assert_true(json_number_value(json_object_get(dev, "datasheet_bandwidth")) == 1555e9);
    assert_non_null(strstr(json_string_value(json_object_get(dev, "peak_flops_source")),
                           "datasheet: SMs x peak clock"));
    json_decref(doc);
    expect_ok(rc, out, err, what);
}

/* The sequence models at small sizes (their widths and layer counts are model parameters). */
static const char *const lstm_small = "    params: {seq_len: 6, vocab: 40, hidden: 16}\n";
static const char *const gpt2_small =
    "    params: {seq_len: 8, vocab: 48, d_model: 32, heads: 2, layers: 1, context: 16}\n";
static const char *const base_small =
    "    params: {seq_len: 6, vocab: 40, d_model: 32, heads: 4, layers: 1, d_ff: 48}\n";

static void test_train_light(void **state)
{
    (void)state;
    train_verified("conv6", "cifar", 8, "", "fp32");
    /* op set 3: the LSTM language model and both transformers, mixed precision included */
    for (int k = 0; k < 4; k += 2) {
        train_verified("lstm", "ptb-medium", 3, lstm_small, policies[k]);
        train_verified("transformer", "gpt2-small", 2, gpt2_small, policies[k]);
        train_verified("transformer", "base", 2, base_small, policies[k]);
    }
}

static void test_train_heavy(void **state)
{
    (void)state;
    for (int k = 1; k < 4; k++)
        train_verified("conv6", "cifar", 8, "", policies[k]);
    for (int k = 0; k < 4; k++) {
        train_verified("resnet18", "cifar", 4, "", policies[k]);
        train_verified("cyclegan", "small", 1, "    params: {image_size: 32}\n", policies[k]);
    }
}

int main(int argc, char **argv)
{
    const struct CMUnitTest light[] = {
        cmocka_unit_test(test_list),
        cmocka_unit_test(test_ops_every_policy),
        cmocka_unit_test(test_update_cases_fp16),
        cmocka_unit_test(test_models_light),
        cmocka_unit_test(test_train_light),
    };
    const struct CMUnitTest heavy[] = {
        cmocka_unit_test(test_models_heavy),
        cmocka_unit_test(test_train_heavy),
    };
    if (argc > 1 && strcmp(argv[1], "--heavy") == 0)
        return cmocka_run_group_tests(heavy, setup, teardown);
    return cmocka_run_group_tests(light, setup, teardown);
}
