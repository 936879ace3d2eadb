/* The cuda backend's planner on op set 3 (plain C, no device): every op-set-3 conformance case
 * and the sequence models plan in every precision policy and keep the invariants of every plan
 * (cuda_plan_harness.h, which also checks that every matrix product's cuBLASLt form chains);
 * batched products read a broadcast operand through a copy to y's batch shape and sum its
 * gradient back down; the operands of op-set-3 ops stay row-major under the channels-last policies;
 * and under fp16-mixed gradient clipping runs after the unscaling, so that it clips the true
 * gradients. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "check/conformance_case.h"
#include "plan/plan.h"
#include "plan/plan_tensor.h"

#include "cuda_plan_harness.h"

static const uint32_t policies[4] = {XPB_PRECISION_FP32, XPB_PRECISION_TF32,
                                     XPB_PRECISION_BF16_MIXED, XPB_PRECISION_FP16_MIXED};

/* The operands of op-set-3 ops are stored row-major in every policy. */
static void check_row_major(const cux_plan *plan, const char *what)
{
    const xpb_program *p = plan->prog;
    for (uint32_t i = 0; i < p->n_ops; i++) {
        const xpb_op *op = xpb_program_op(p, i);
        if (xpb_op_opset(op->kind) < 3)
            continue;
        for (uint32_t k = 0; k < op->n_inputs + op->n_outputs; k++) {
            uint32_t t =
                k < op->n_inputs ? xpb_op_input(p, op, k) : xpb_op_output(p, op, k - op->n_inputs);
            if (t != XPB_NO_TENSOR && plan->store[t].layout != CUX_PLAIN)
                fail_msg("%s: tensor '%s' of op %u (%s) is not row-major", what,
                         xpb_program_tensor(p, t)->name, i, xpb_op_name(op->kind));
        }
    }
}

static int steps_of_op(const cux_plan *plan, uint32_t op, int engine, int kernel)
{
    int n = 0;
    for (uint32_t g = 0; g < plan->n_steps; g++)
        n += plan->steps[g].op == op && plan->steps[g].engine == engine &&
             (engine != CUX_ENG_KERNEL || plan->steps[g].kernel == kernel);
    return n;
}

/* Every op-set-3 conformance case plans in every policy; the broadcast batched products copy
 * their operand and sum its gradient. */
static void test_conformance_cases(void **state)
{
    (void)state;
    xpb_ct_list cases = {0};
    xpb_ct_catalogue(&cases, 0);
    assert_false(cases.oom);
    int planned = 0, expanded = 0, summed = 0, clipped = 0;
    for (size_t i = 0; i < cases.n; i++) {
        xpb_ct_case *c = &cases.v[i];
        xpb_ct_bind(c);
        if (c->prog.opset < 3)
            continue;
        for (int k = 0; k < 4; k++)
            for (uint32_t fusion = 0; fusion < 2; fusion++) {
                char what[200];
                snprintf(what, sizeof what, "case %s (%s), policy %u, fusion %u", c->name, c->shape,
                         policies[k], fusion);
                cux_plan *plan = make_plan(&c->prog, policies[k], fusion, 0);
                check_plan(plan, what);
                check_row_major(plan, what);
                planned++;
                if (k != 0 || fusion != 1)
                    goto next;
                /* one BATCHED_MATMUL(_BWD) op in the broadcast cases */
                if (strncmp(c->name, "BATCHED_MATMUL", 14) == 0 && c->n_ops == 1) {
                    const xpb_op *op = xpb_program_op(&c->prog, 0);
                    const xpb_tensor_desc *a = xpb_program_tensor(&c->prog, op->inputs[0]);
                    const xpb_tensor_desc *b = xpb_program_tensor(&c->prog, op->inputs[1]);
                    int fwd = op->kind == XPB_OP_BATCHED_MATMUL;
                    const xpb_tensor_desc *y =
                        fwd ? xpb_program_tensor(&c->prog, op->outputs[0]) : a; /* dy */
                    const xpb_tensor_desc *pa =
                        fwd ? a : xpb_program_tensor(&c->prog, op->inputs[1]);
                    const xpb_tensor_desc *pb =
                        fwd ? b : xpb_program_tensor(&c->prog, op->inputs[2]);
                    int64_t ny =
                        xpb_tensor_numel(y) / (y->dims[y->ndim - 2] * y->dims[y->ndim - 1]);
                    int64_t na =
                        xpb_tensor_numel(pa) / (pa->dims[pa->ndim - 2] * pa->dims[pa->ndim - 1]);
                    int64_t nb =
                        xpb_tensor_numel(pb) / (pb->dims[pb->ndim - 2] * pb->dims[pb->ndim - 1]);
                    int partial = (na != ny && na != 1) || (nb != ny && nb != 1);
                    int copies = steps_of_op(plan, 0, CUX_ENG_KERNEL, CUX_K_EXPAND);
                    if (partial != (copies > 0))
                        fail_msg("%s: %d broadcast copies for a%s", what, copies,
                                 partial ? " partly broadcast operand" : "n operand without");
                    expanded += copies > 0;
                    if (!fwd) {
                        int sums = steps_of_op(plan, 0, CUX_ENG_KERNEL, CUX_K_SUM_TO);
                        if ((na != ny || nb != ny) != (sums > 0))
                            fail_msg("%s: %d batch sums of the broadcast gradients", what, sums);
                        summed += sums > 0;
                    }
                }
                for (uint32_t o = 0; o < c->n_ops; o++) {
                    const xpb_op *op = xpb_program_op(&c->prog, o);
                    if (op->kind != XPB_OP_CLIP_GRAD_NORM)
                        continue;
                    /* N sums of squares, the norm, N scalings */
                    int n = (int)op->n_inputs;
                    assert_int_equal(steps_of_op(plan, o, CUX_ENG_KERNEL, CUX_K_CLIP_SUMSQ), n);
                    assert_int_equal(steps_of_op(plan, o, CUX_ENG_KERNEL, CUX_K_CLIP_NORM), 1);
                    assert_int_equal(steps_of_op(plan, o, CUX_ENG_KERNEL, CUX_K_CLIP_APPLY), n);
                    clipped++;
                }
            next:
                cux_plan_free(plan);
            }
    }
    printf("  %d plans of op-set-3 cases; %d with broadcast copies, %d with batch sums, %d "
           "clipping\n",
           planned, expanded, summed, clipped);
    assert_true(planned > 0);
    assert_true(expanded > 0);
    assert_true(summed > 0);
    assert_true(clipped > 0);
    xpb_ct_list_free(&cases);
}

/* First step index of op `op` with `kernel` (engine KERNEL), or CUX_NONE. */
static uint32_t first_step(const cux_plan *plan, uint32_t op, int kernel)
{
    for (uint32_t g = 0; g < plan->n_steps; g++)
        if (plan->steps[g].op == op && plan->steps[g].engine == CUX_ENG_KERNEL &&
            plan->steps[g].kernel == kernel)
            return g;
    return CUX_NONE;
}

/* The sequence models plan in every policy; under fp16-mixed their phases scale the loss, and
 * a model that clips its gradients (the LSTMs, GPT-2) clips after every UNSCALE and before the
 * first update. */
static void test_models(void **state)
{
    (void)state;
    static const struct {
        const char *model, *variant;
        uint32_t batch;
    } m[] = {
        {"lstm", "ptb-medium", 2}, {"transformer", "base", 1}, {"transformer", "gpt2-small", 1}};
    for (size_t j = 0; j < sizeof m / sizeof m[0]; j++) {
        if (!xpb_registry_model(registry, m[j].model))
            fail_msg("model plugin '%s' not found in %s", m[j].model, XPB_TEST_PLUGIN_DIR);
        for (uint32_t mode = XPB_MODE_TRAIN; mode <= XPB_MODE_INFERENCE; mode++) {
            xpb_model_program *mp = create(m[j].model, m[j].variant, m[j].batch, mode);
            for (int k = 0; k < 4; k++) {
                char what[160];
                snprintf(what, sizeof what, "%s/%s %s, policy %u", m[j].model, m[j].variant,
                         mode == XPB_MODE_TRAIN ? "train" : "infer", policies[k]);
                cux_plan *plan = make_plan(&mp->program, policies[k], 1, 0);
                check_plan(plan, what);
                check_row_major(plan, what);
                int fp16_train = mode == XPB_MODE_TRAIN && policies[k] == XPB_PRECISION_FP16_MIXED;
                for (uint32_t ph = 0; ph < plan->prog->n_phases; ph++)
                    if (plan->phase_scaled[ph] != fp16_train)
                        fail_msg("%s: phase %u scaled %d", what, ph, plan->phase_scaled[ph]);
                const xpb_program *p = plan->prog;
                for (uint32_t i = 0; fp16_train && i < p->n_ops; i++) {
                    if (xpb_program_op(p, i)->kind != XPB_OP_CLIP_GRAD_NORM)
                        continue;
                    assert_int_equal(plan->op_scaled[i], 1);
                    uint32_t clip = first_step(plan, i, CUX_K_CLIP_SUMSQ);
                    assert_true(clip != CUX_NONE);
                    for (uint32_t g = 0; g < plan->n_steps; g++) {
                        const cux_step *s = &plan->steps[g];
                        if (s->engine == CUX_ENG_KERNEL && s->kernel == CUX_K_UNSCALE && g > clip)
                            fail_msg("%s: gradient clipping (step %u) before the UNSCALE of "
                                     "step %u",
                                     what, clip, g);
                        if (s->engine == CUX_ENG_KERNEL &&
                            cux_is_update(p->n_ops > s->op ? xpb_program_op(p, s->op)->kind : 0) &&
                            s->kernel != CUX_K_UNSCALE && g < clip)
                            fail_msg("%s: update step %u before gradient clipping (step %u)", what,
                                     g, clip);
                    }
                    printf("  %s: clipping at step %u, after the unscaling\n", what, clip);
                }
                cux_plan_free(plan);
            }
            xpb_model_program_free(mp);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conformance_cases),
        cmocka_unit_test(test_models),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
