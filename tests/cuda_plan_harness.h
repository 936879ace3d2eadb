/* What the planner tests of the cuda backend share (tests/test_cuda_plan.c,
 * test_cuda_plan_seq.c): the registry of model plugins, programs and plans built from them, and
 * check_plan, the invariants every plan keeps (every op done, phases framed, engines fed in their
 * types and layouts, live buffers apart, lifetimes that end, storage for what the host sees,
 * shadows refreshed). */
#ifndef XPB_TESTS_CUDA_PLAN_HARNESS_H
#define XPB_TESTS_CUDA_PLAN_HARNESS_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plan/plan.h"
#include "plan/plan_tensor.h"
#include "plugin/loader.h"
#include "program/model_program.h"

static xpb_registry *registry;

__attribute__((unused)) static int setup(void **state)
{
    (void)state;
    const char *dirs[1] = {XPB_TEST_PLUGIN_DIR};
    xpb_err err = {{0}};
    if (xpb_registry_load(&registry, dirs, 1, &err) != XPB_OK)
        return -1;
    static const char *const models[4] = {"conv6", "vgg16", "resnet18", "cyclegan"};
    for (int i = 0; i < 4; i++)
        if (!xpb_registry_model(registry, models[i])) {
            fprintf(stderr, "model plugin '%s' not found in %s\n", models[i], XPB_TEST_PLUGIN_DIR);
            return -1;
        }
    return 0;
}

__attribute__((unused)) static int teardown(void **state)
{
    (void)state;
    xpb_registry_free(registry);
    return 0;
}

/* ---- programs and plans ---- */

__attribute__((unused)) static xpb_model_program *create(const char *model, const char *variant,
                                                         uint32_t batch, uint32_t mode)
{
    xpb_program_options c;
    memset(&c, 0, sizeof c);
    c.model = model;
    c.variant = variant;
    c.batch = batch;
    c.mode = mode;
    c.seed = 42;
    c.lr = c.momentum = c.weight_decay = NAN;
    xpb_model_program *mp = NULL;
    xpb_err err = {{0}};
    if (xpb_model_program_create(&mp, xpb_registry_model(registry, model), &c, &err) != XPB_OK)
        fail_msg("%s/%s: %s", model, variant, err.msg);
    return mp;
}

__attribute__((unused)) static const cux_target SM75 = {7, 5}, SM80 = {8, 0};

__attribute__((unused)) static const cux_target *target_for(uint32_t precision)
{
    return precision == XPB_PRECISION_BF16_MIXED || precision == XPB_PRECISION_TF32 ? &SM80 : &SM75;
}

__attribute__((unused)) static cux_plan *make_plan(const xpb_program *p, uint32_t precision,
                                                   uint32_t fusion, uint32_t keep_all)
{
    cux_options o = {precision, fusion, 0, keep_all, XPB_TRANSFER_RESIDENT, 1, 0};
    cux_plan *plan = NULL;
    char err[CUX_ERR_SIZE] = "";
    xpb_status st = cux_plan_build(&plan, p, &o, target_for(precision), err, sizeof err);
    if (st != XPB_OK)
        fail_msg("plan (precision %u, fusion %u, keep_all %u): %s", precision, fusion, keep_all,
                 err);
    return plan;
}

__attribute__((unused)) static const xpb_op *OP(const cux_plan *plan, uint32_t i)
{
    return xpb_program_op(plan->prog, i);
}

__attribute__((unused)) static int count_steps(const cux_plan *plan, int engine, int kernel)
{
    int n = 0;
    for (uint32_t g = 0; g < plan->n_steps; g++)
        n += plan->steps[g].engine == engine &&
             (engine != CUX_ENG_KERNEL || plan->steps[g].kernel == kernel);
    return n;
}

/* Is buffer b written by step s (an output, or the shadow an update refreshes)? */
__attribute__((unused)) static int writes(const cux_step *s, uint32_t b)
{
    for (int k = 0; k < CUX_MAX_OUT; k++)
        if (s->out[k].buf == b)
            return 1;
    return s->extra.buf == b;
}

__attribute__((unused)) static int has_step_for(const cux_plan *plan, uint32_t op)
{
    for (uint32_t g = 0; g < plan->n_steps; g++)
        if (plan->steps[g].op == op)
            return 1;
    return 0;
}

/* ---- the invariants every plan keeps ---- */

/* Every matrix-product step's form chains: op(A) [m,k] times op(B) [k,n] into D [m,n], each
 * operand's last matrix inside its buffer. */
__attribute__((unused)) static void check_forms(const cux_plan *plan, const char *what)
{
    for (uint32_t g = 0; g < plan->n_steps; g++) {
        const cux_step *s = &plan->steps[g];
        if (s->engine != CUX_ENG_MATMUL)
            continue;
        const cux_mm_form *f = &s->mm;
        struct {
            const cux_view *v;
            int64_t rows, cols, ld, off, stride;
        } ops[3] = {
            {&s->in[0], f->ta ? f->k : f->m, f->ta ? f->m : f->k, f->lda, f->off_a, f->stride_a},
            {&s->in[1], f->tb ? f->n : f->k, f->tb ? f->k : f->n, f->ldb, f->off_b, f->stride_b},
            {&s->out[0], f->m, f->n, f->ldd, f->off_d, f->stride_d},
        };
        assert_true(f->batch >= 1 && f->m >= 1 && f->n >= 1 && f->k >= 1);
        for (int k = 0; k < 3; k++) {
            int64_t numel = 1;
            for (uint32_t d = 0; d < ops[k].v->ndim; d++)
                numel *= ops[k].v->dims[d];
            int64_t last = ops[k].off + (f->batch - 1) * ops[k].stride +
                           (ops[k].rows - 1) * ops[k].ld + ops[k].cols;
            if (ops[k].ld < ops[k].cols || last > numel)
                fail_msg("%s: step %u operand %d: rows %lld x cols %lld, ld %lld, off %lld, "
                         "batch %lld x stride %lld end at %lld past %lld elements",
                         what, g, k, (long long)ops[k].rows, (long long)ops[k].cols,
                         (long long)ops[k].ld, (long long)ops[k].off, (long long)f->batch,
                         (long long)ops[k].stride, (long long)last, (long long)numel);
        }
        if (f->batch > 1 && f->stride_d == 0)
            fail_msg("%s: step %u writes %lld products into one matrix", what, g,
                     (long long)f->batch);
    }
}

__attribute__((unused)) static void check_plan(const cux_plan *plan, const char *what)
{
    const xpb_program *p = plan->prog;
    /* every op of a phase is done: a step, a fused chain's head, or a shared RESHAPE */
    for (uint32_t i = 0; i < p->n_ops; i++) {
        if (plan->op_phase[i] == CUX_NONE)
            continue;
        const xpb_op *op = OP(plan, i);
        uint32_t into = plan->fuse[i].into;
        if (into != CUX_NONE) {
            if (!plan->opt.fusion || plan->opt.keep_all)
                fail_msg("%s: op %u fused without fusion", what, i);
            if (plan->fuse[into].into != CUX_NONE || !has_step_for(plan, into))
                fail_msg("%s: op %u fused into op %u, which has no step", what, i, into);
            continue;
        }
        if (op->kind == XPB_OP_RESHAPE && plan->store[op->outputs[0]].alias == op->inputs[0])
            continue;
        if (op->kind == XPB_OP_ALL_REDUCE && plan->opt.ranks <= 1)
            continue; /* the mean over one rank: the identity, no step */
        if (!has_step_for(plan, i))
            fail_msg("%s: op %u (%s) has no step", what, i, xpb_op_name(op->kind));
    }
    /* phases: PHASE_BEGIN .. PHASE_END, every step tagged with its phase */
    for (uint32_t k = 0; k < p->n_phases; k++) {
        uint32_t b = plan->phase_begin[k], e = plan->phase_end[k];
        assert_true(b < e);
        assert_int_equal(plan->steps[b].kernel, CUX_K_PHASE_BEGIN);
        assert_int_equal(plan->steps[e - 1].kernel, CUX_K_PHASE_END);
        for (uint32_t g = b; g < e; g++)
            if (plan->steps[g].phase != k)
                fail_msg("%s: step %u of phase %u says phase %u", what, g, k, plan->steps[g].phase);
    }
    /* engines get what they read in their type and layout */
    for (uint32_t g = 0; g < plan->n_steps; g++) {
        const cux_step *s = &plan->steps[g];
        if (s->engine == CUX_ENG_CONV) {
            const cux_view *v[3] = {&s->in[0], &s->in[1], &s->out[0]};
            for (int k = 0; k < 3; k++) {
                if (v[k]->type != plan->act_type)
                    fail_msg("%s: conv step %u operand %d is type %d, not %d", what, g, k,
                             v[k]->type, plan->act_type);
                if (v[k]->ndim != 4 ||
                    (v[k]->layout != plan->layout4d &&
                     !cux_layouts_agree(v[k]->dims[1], v[k]->dims[2], v[k]->dims[3])))
                    fail_msg("%s: conv step %u operand %d is layout %d", what, g, k, v[k]->layout);
            }
            if (s->bias.buf != CUX_NONE)
                assert_int_equal(s->bias.type, plan->act_type);
        } else if (s->engine == CUX_ENG_MATMUL) {
            /* the policy's type, or fp32 throughout (the LSTM's backward products) */
            assert_int_equal(s->in[0].type, s->in[1].type);
            assert_true(s->in[0].type == plan->act_type || s->in[0].type == CUX_F32);
            assert_true(s->out[0].type == CUX_F32 || s->out[0].type == s->in[0].type);
            if (s->bias.buf != CUX_NONE)
                assert_int_equal(s->bias.type, s->out[0].type);
        }
    }
    check_forms(plan, what);
    /* memory: a buffer that does not live throughout is written by the first step using it;
     * live buffers never share bytes; the arena ends at the highest buffer */
    uint64_t end = 0;
    for (uint32_t b = 0; b < plan->n_bufs; b++) {
        const cux_buf *x = &plan->bufs[b];
        if (x->first > x->last)
            continue;
        uint64_t xe = x->offset + (x->bytes + CUX_ALIGN - 1) / CUX_ALIGN * CUX_ALIGN;
        assert_int_equal(x->offset % CUX_ALIGN, 0);
        if (xe > end)
            end = xe;
        if (plan->opt.keep_all && x->kind == CUX_BUF_TENSOR && !x->pinned)
            fail_msg("%s: tensor %u's buffer is not pinned under keep_all", what, x->tensor);
        if (!x->pinned && !writes(&plan->steps[x->first], b))
            fail_msg("%s: buffer %u (tensor %u) is read by step %u before anything writes it", what,
                     b, x->tensor, x->first);
        for (uint32_t c = b + 1; c < plan->n_bufs; c++) {
            const cux_buf *y = &plan->bufs[c];
            if (y->first > y->last || y->first > x->last || x->first > y->last)
                continue;
            uint64_t ye = y->offset + (y->bytes + CUX_ALIGN - 1) / CUX_ALIGN * CUX_ALIGN;
            if (x->offset < ye && y->offset < xe)
                fail_msg("%s: buffers %u [%llu, %llu) and %u [%llu, %llu) are live together at "
                         "steps %u..%u and overlap",
                         what, b, (unsigned long long)x->offset, (unsigned long long)xe, c,
                         (unsigned long long)y->offset, (unsigned long long)ye,
                         x->first > y->first ? x->first : y->first,
                         x->last < y->last ? x->last : y->last);
        }
    }
    assert_int_equal(plan->arena_bytes, end);
    assert_true(plan->arena_bytes >= plan->peak_bytes);
    /* lifetimes end (the stand-in poisons the bytes) exactly after the last use of every buffer
     * that does not live throughout, and of no other */
    uint8_t *seen = calloc(plan->n_bufs + 1u, 1);
    assert_non_null(seen);
    assert_int_equal(plan->end_first[0], 0);
    for (uint32_t g = 0; g < plan->n_steps; g++) {
        assert_true(plan->end_first[g] <= plan->end_first[g + 1]);
        for (uint32_t k = plan->end_first[g]; k < plan->end_first[g + 1]; k++) {
            uint32_t b = plan->end_bufs[k];
            if (plan->bufs[b].pinned || plan->bufs[b].last != g || seen[b])
                fail_msg("%s: buffer %u ends after step %u (pinned %d, last use %u, seen %d)", what,
                         b, g, plan->bufs[b].pinned, plan->bufs[b].last, seen[b]);
            seen[b] = 1;
        }
    }
    for (uint32_t b = 0; b < plan->n_bufs; b++)
        if (!plan->bufs[b].pinned && plan->bufs[b].first <= plan->bufs[b].last && !seen[b])
            fail_msg("%s: buffer %u (last use %u) never ends", what, b, plan->bufs[b].last);
    free(seen);
    /* every host-visible tensor (every tensor under keep_all) has storage */
    for (uint32_t t = 0; t < p->n_tensors; t++)
        if ((plan->opt.keep_all || cux_host_visible(xpb_program_tensor(p, t))) &&
            plan->store[t].buf == CUX_NONE)
            fail_msg("%s: host-visible tensor %u '%s' has no storage", what, t,
                     xpb_program_tensor(p, t)->name);
    /* mixed policies: fp32 masters, shadows read by the engines and refreshed by the updates */
    for (uint32_t t = 0; t < p->n_tensors; t++) {
        const xpb_tensor_desc *d = xpb_program_tensor(p, t);
        if (d->role == XPB_ROLE_PARAM || d->role == XPB_ROLE_GRAD || d->role == XPB_ROLE_STATE)
            assert_true(plan->store[t].type == CUX_F32 || plan->store[t].type == CUX_I32);
        if (plan->store[t].shadow != CUX_NONE)
            assert_int_equal(plan->store[t].shadow_type, plan->act_type);
    }
    for (uint32_t g = 0; g < plan->n_steps; g++) {
        const cux_step *s = &plan->steps[g];
        if (s->engine == CUX_ENG_KERNEL &&
            (s->kernel == CUX_K_SGD || s->kernel == CUX_K_ADAM || s->kernel == CUX_K_ADAMW)) {
            uint32_t param = s->in[0].tensor;
            assert_int_equal(s->extra.buf, plan->store[param].shadow);
        }
    }
}

#endif
