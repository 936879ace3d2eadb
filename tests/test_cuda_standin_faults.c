/* Proof that the CPU stand-in can fail (issue 20, section 3): the cuda plugin's stand-in build
 * (tests/cuda_standin/plugin) has deliberate faults, each switched on at run time by
 * XPB_CUDA_STANDIN_FAULT=<name> (plugins/backend_cuda/kernels/fault.h; the GPU build has no
 * switch). For each fault this test runs
 *     xpubench conformance --backend cuda --quick --no-models --filter <case> --precision <p>
 * (without --no-models when the filter names a model's cases)
 * through the copy of xpubench beside the stand-in build, once without the fault (it must pass:
 * the filter selects a case that works, so the fault's failure is not vacuous) and once with it
 * (exit 1, and a row of the case named FAIL or ERROR). --allow-unsupported is given to both
 * runs so that a refusal never counts as the fault's failure. Each run takes about a second on
 * the stand-in. Every run's output is printed when it fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* cli_harness.h runs XPB_TEST_BINARY_DIR/xpubench: here the copy beside the stand-in build */
#undef XPB_TEST_BINARY_DIR
#define XPB_TEST_BINARY_DIR XPB_TEST_STANDIN_DIR
#include "cli_harness.h"

/* One fault: the test's name, the fault's name, the conformance filter and policy that show it,
 * and the case whose row must then fail (the name a row starts with). */
struct fault {
    const char *test, *name, *filter, *precision, *failing;
};

static const struct fault faults[] = {
    /* (1) the variant pack's x and y pointers swapped: backward data reads dx, writes dy */
    {"conv_operand_swap", "conv_operand_swap", "CONV2D_BWD_DATA", "fp32", "CONV2D_BWD_DATA "},
    /* (2) the convolution descriptor's vertical stride one too large: cuDNN's finalize refuses
     * the operation (Y's dims do not follow), compile fails naming the op */
    {"conv_stride", "conv_stride", "CONV2D", "fp32", "CONV2D "},
    /* (3) the cuBLASLt epilogue without its ReLU (the fused linear + relu of the MLP chain) */
    {"matmul_relu_dropped", "matmul_relu_dropped", "mlp-xent-sgd", "fp32", "chain mlp-xent-sgd"},
    /* (4) k_add never writes the last element */
    {"add_off_by_one", "add_off_by_one", "ADD", "fp32", "ADD "},
    /* (5) cux_block_sum without the barrier between the warps' partials and their sum */
    {"block_sum_no_barrier", "block_sum_no_barrier", "INSTANCENORM", "fp32", "INSTANCENORM"},
    /* (6) the largest arena buffer shares its bytes with a buffer live at the same time */
    {"arena_alias", "arena_alias", "CONV2D", "fp32", "CONV2D"},
    /* (7) fp16-mixed: every update unscaled, also when its gradient was never scaled */
    {"loss_scaling_every_update (SGD)", "loss_scaling_every_update", "SGD_UPDATE", "fp16",
     "SGD_UPDATE "},
    {"loss_scaling_every_update (Adam)", "loss_scaling_every_update", "ADAM_UPDATE", "fp16",
     "ADAM_UPDATE "},
    /* (8) op set 3: a batched product whose every matrix product reads A's first matrix */
    {"mm_batch_stride", "mm_batch_stride", "BATCHED_MATMUL", "fp32", "BATCHED_MATMUL"},
    /* (9) the LSTM without its recurrence: h_{t-1} never reaches step t > 0 */
    {"lstm_no_recurrence", "lstm_no_recurrence", "LSTM", "fp32", "LSTM"},
    /* (10) fp16-mixed: gradient clipping of the still scaled gradients, in program order; the
     * model case "as run" scales its loss (the op cases' gradients are the host's and do not) */
    {"clip_before_unscale", "clip_before_unscale", "model lstm", "fp16", "model lstm gradients"},
};

static int setup(void **state)
{
    (void)state;
    return make_tmpdir("xpb_cuda_faults_");
}

static int teardown(void **state)
{
    (void)state;
    return remove_tmpdir();
}

/* True when `out` has a row that starts with `name` and whose result is FAIL or ERROR. */
static int names_failure(const char *out, const char *name)
{
    size_t n = strlen(name);
    for (const char *line = out; line && *line;
         line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (len < n || strncmp(line, name, n) != 0)
            continue;
        if ((len >= 5 && strncmp(line + len - 5, " FAIL", 5) == 0) ||
            (len >= 6 && strncmp(line + len - 6, " ERROR", 6) == 0))
            return 1;
    }
    return 0;
}

/* The conformance run of fault f, with the fault on (`on` 1) or off; its exit code, with the
 * output in *out and *err (owned by the caller, who frees them). */
static int run(const struct fault *f, int on, char **out, char **err)
{
    if (on)
        setenv("XPB_CUDA_STANDIN_FAULT", f->name, 1);
    else
        unsetenv("XPB_CUDA_STANDIN_FAULT");
    /* a filter that names a model ("model lstm") selects model cases: they must run */
    const char *models = strncmp(f->filter, "model ", 6) == 0 ? NULL : "--no-models";
    int rc = xpb(out, err, "conformance", "--backend", "cuda", "--quick", "--allow-unsupported",
                 "--filter", f->filter, "--precision", f->precision, models, (char *)NULL);
    unsetenv("XPB_CUDA_STANDIN_FAULT");
    return rc;
}

static void test_fault(void **state)
{
    const struct fault *f = *state;
    char *out = NULL, *err = NULL;
    int rc = run(f, 0, &out, &err);
    if (rc != 0)
        fail_msg("without the fault, conformance --filter %s --precision %s exited %d:\n%s\n%s",
                 f->filter, f->precision, rc, out ? out : "", err ? err : "");
    free(out);
    free(err);
    rc = run(f, 1, &out, &err);
    if (rc != 1 || !out || !names_failure(out, f->failing))
        fail_msg("fault %s: conformance --filter %s --precision %s exited %d (want 1) and "
                 "must name the failing case '%s':\n%s\n%s",
                 f->name, f->filter, f->precision, rc, f->failing, out ? out : "", err ? err : "");
    printf("  fault %s: case %s fails (--filter %s --precision %s)\n", f->name, f->failing,
           f->filter, f->precision);
    free(out);
    free(err);
}

int main(void)
{
    struct CMUnitTest tests[sizeof faults / sizeof faults[0]];
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
        tests[i] = (struct CMUnitTest){faults[i].test, test_fault, NULL, NULL, (void *)&faults[i]};
    return _cmocka_run_group_tests("test_cuda_standin_faults", tests,
                                   sizeof faults / sizeof faults[0], setup, teardown);
}
