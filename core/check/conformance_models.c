/* Model cases of the conformance suite (see conformance_run.h): one training step of every model
 * plugin at reduced size on both sides, forward results and gradients judged by compare.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/conformance_run.h"
#include "check/kinks.h"
#include "plugin/guard.h"
#include "program/model_program.h"
#include "run/session.h"
#include "scenario/run_config.h"

/* The reduced size of a model case: a model with entries runs once per entry (the sequence
 * models once per variant), the others once at their defaults, batch 2. */
#define XPB_CT_MODEL_PARAMS 6
typedef struct model_size {
    const char *model, *variant;
    uint32_t batch;
    const char *brief; /* the reduction as the report's shape column shows it; NULL: none */
    xpb_kv params[XPB_CT_MODEL_PARAMS]; /* model parameters; the list ends at a NULL key */
    int heavy;                          /* skipped in quick mode */
} model_size;

static const model_size model_sizes[] = {
    {"conv6", NULL, 4, NULL, {{NULL, NULL}}, 0},
    {"vgg16", "cifar", 2, NULL, {{NULL, NULL}}, 0},
    {"resnet18", "cifar", 2, NULL, {{NULL, NULL}}, 0},
    /* every layer, 1/16 of the pixels */
    {"cyclegan", "small", 1, "32", {{"image_size", "32"}}, 0},
    /* every layer; the features end at 1x1, which the adaptive pool replicates to 6x6 */
    {"alexnet",
     NULL,
     2,
     "63px fc64 c10",
     {{"image_size", "63"}, {"fc_width", "64"}, {"num_classes", "10"}},
     0},
    /* both layers and their dropouts; a short sequence, a small vocabulary and width */
    {"lstm",
     "ptb-medium",
     3,
     "T8 V50 H16",
     {{"seq_len", "8"}, {"vocab", "50"}, {"hidden", "16"}},
     0},
    {"transformer",
     "base",
     2,
     "T8 V40 d32 L2",
     {{"seq_len", "8"},
      {"vocab", "40"},
      {"d_model", "32"},
      {"heads", "4"},
      {"layers", "2"},
      {"d_ff", "48"}},
     0},
    {"transformer",
     "gpt2-small",
     2,
     "T8 V40 d32 L2",
     {{"seq_len", "8"},
      {"vocab", "40"},
      {"d_model", "32"},
      {"heads", "4"},
      {"layers", "2"},
      {"context", "8"}},
     0},
};

#define N_MODEL_SIZES (sizeof model_sizes / sizeof model_sizes[0])

/* The run configuration of a model case. Its strings point at `model`, `backend` and the
 * static table: valid as long as those are. */
static void model_config(xpb_run_config *cfg, const char *model, const model_size *s,
                         const char *backend, const xpb_conformance_options *o)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->id = (char *)model;
    cfg->model = (char *)model;
    cfg->mode = XPB_MODE_TRAIN;
    cfg->batch = 2;
    cfg->precision = o->precision;
    cfg->backend = (char *)backend;
    cfg->fusion = o->fusion;
    cfg->threads = o->threads;
    cfg->seed = o->seed;
    cfg->data = (char *)"synthetic";
    cfg->transfer = XPB_TRANSFER_RESIDENT;
    cfg->lr = cfg->momentum = cfg->weight_decay = NAN;
    cfg->min_steps = cfg->repeats = 1;
    if (!s)
        return;
    cfg->variant = (char *)s->variant;
    cfg->batch = s->batch;
    cfg->params = (xpb_kv *)s->params;
    while (cfg->n_params < XPB_CT_MODEL_PARAMS && s->params[cfg->n_params].key)
        cfg->n_params++;
}

/* Which tensors a model case compares: losses, outputs and state (batch-norm running
 * statistics, and the optimizer's momentum / Adam moments, which after one step are the
 * gradients scaled), plus every gradient when everything is readable (keep_all). Updated
 * parameters are not compared: their change is a few ulps of the weight, and Adam turns the
 * rounding noise of a gradient that cancels to zero into a full-size step. */
static int model_compared(const xpb_tensor_desc *t, int keep_all)
{
    if (t->dtype != XPB_DTYPE_F32)
        return 0;
    switch (t->role) {
    case XPB_ROLE_LOSS:
    case XPB_ROLE_OUTPUT:
    case XPB_ROLE_STATE:
        return 1;
    case XPB_ROLE_GRAD:
        return keep_all;
    default:
        return 0;
    }
}

/* Per tensor, 1 for optimizer state that holds (scaled) gradients after one step: momentum
 * buffers, Adam's m and v. Owned by the caller (free); NULL when out of memory. */
static uint8_t *gradient_state(const xpb_model_program *mp)
{
    uint8_t *g = calloc(mp->n_tensors + 1u, 1);
    if (!g)
        return NULL;
    for (uint32_t i = 0; i < mp->n_ops; i++) {
        const xpb_op *op = &mp->ops[i];
        if (op->kind == XPB_OP_SGD_UPDATE && op->n_inputs > 2)
            g[op->inputs[2]] = 1;
        if (op->kind == XPB_OP_ADAM_UPDATE && op->n_inputs > 3)
            g[op->inputs[2]] = g[op->inputs[3]] = 1;
    }
    return g;
}

/* Reads the compared tensors of both sessions into `cmp`: gradients and the optimizer state
 * holding them as gradients (one group: they share one scale), the rest as forward results. */
static xpb_status add_tensors(xpb_compare *cmp, xpb_session *a, xpb_session *b,
                              const xpb_model_program *mp, int keep_all, xpb_err *err)
{
    xpb_status st = XPB_OK;
    size_t max = 4;
    for (uint32_t t = 0; t < mp->n_tensors; t++)
        if (xpb_tensor_bytes(&mp->tensors[t]) > max)
            max = xpb_tensor_bytes(&mp->tensors[t]);
    uint8_t *gstate = gradient_state(mp);
    float *x = malloc(max), *y = malloc(max);
    if (!gstate || !x || !y) {
        st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
        goto free_buffers;
    }
    for (uint32_t t = 0; t < mp->n_tensors; t++) {
        const xpb_tensor_desc *d = &mp->tensors[t];
        if (!model_compared(d, keep_all))
            continue;
        if ((st = xpb_session_read(a, t, x, err)) != XPB_OK ||
            (st = xpb_session_read(b, t, y, err)) != XPB_OK) {
            xpb_err_prefix(err, "read '%s'", d->name);
            goto free_buffers;
        }
        int grad = d->role == XPB_ROLE_GRAD || gstate[t];
        if (xpb_compare_add_shaped(cmp, d->name, grad ? XPB_ROLE_GRAD : d->role,
                                   grad ? XPB_COMPARE_GRADIENT : XPB_COMPARE_FORWARD, x, y, d->ndim,
                                   d->dims) != XPB_OK) {
            st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
            goto free_buffers;
        }
    }
free_buffers:
    free(gstate);
    free(x);
    free(y);
    return st;
}

/* Both rows of a model case set to one verdict with one message. */
static void both(xpb_ct_result r[2], uint32_t verdict, const char *msg)
{
    for (int i = 0; i < 2; i++) {
        r[i].verdict = verdict;
        snprintf(r[i].msg, sizeof r[i].msg, "%s", msg);
    }
}

/* One training step of `mp` on both sides (sessions opened with keep_all as given), counting
 * kink flips into *kinks when everything is readable, and the comparison into `cmp`.
 * r gets UNSUPPORTED or ERROR rows when a side fails. */
static void step_and_compare(xpb_ct_result r[2], xpb_compare *cmp, const xpb_ct_side *test,
                             const xpb_ct_side *ref, const xpb_model_program *mp, int keep_all,
                             const xpb_conformance_options *opt, int64_t *kinks)
{
    xpb_err err = {{0}};
    xpb_session sa, sb;
    memset(&sa, 0, sizeof sa);
    memset(&sb, 0, sizeof sb);
    xpb_compile_options ot = {.struct_size = sizeof ot,
                              .precision = opt->precision,
                              .fusion = opt->fusion,
                              .threads = opt->threads,
                              .keep_all = (uint32_t)keep_all};
    xpb_compile_options orf = {
        .struct_size = sizeof orf, .precision = XPB_PRECISION_FP32, .keep_all = (uint32_t)keep_all};
    xpb_status st = xpb_session_open(&sa, test->api, 0, mp, &ot, &err);
    if (st != XPB_OK) {
        xpb_err_prefix(&err, "%s", test->name);
        both(r, st == XPB_UNSUPPORTED ? XPB_CONFORMANCE_UNSUPPORTED : XPB_CONFORMANCE_ERROR,
             err.msg);
        return;
    }
    if ((st = xpb_session_open(&sb, ref->api, 0, mp, &orf, &err)) != XPB_OK) {
        xpb_err_prefix(&err, "%s", ref->name);
        goto fail;
    }
    if ((st = xpb_session_step(&sa, NULL, &err)) != XPB_OK ||
        (st = xpb_session_step(&sb, NULL, &err)) != XPB_OK) {
        xpb_err_prefix(&err, "step");
        goto fail;
    }
    /* kink flips matter where gradients are judged one by one (fp32); only keep_all can see
     * them, and the run as compiled for a benchmark inherits the count */
    if (keep_all && cmp->tol->gradient > 0 &&
        (st = xpb_kink_flips(kinks, &sa, &sb, mp, &err)) != XPB_OK)
        goto fail;
    cmp->kink_flips = *kinks;
    if ((st = add_tensors(cmp, &sa, &sb, mp, keep_all, &err)) != XPB_OK)
        goto fail;
    goto close_sessions;
fail:
    both(r, XPB_CONFORMANCE_ERROR, err.msg);
close_sessions:
    xpb_session_close(&sa);
    xpb_session_close(&sb);
}

/* One model case: r[0] the forward results (losses, outputs, running statistics), r[1] the
 * gradients (or the optimizer state holding them). *kinks: counted by the keep_all run, used
 * by the run after it. */
static void run_model_case(xpb_ct_result r[2], const xpb_ct_side *test, const xpb_ct_side *ref,
                           const xpb_model_api *model, const xpb_run_config *cfg, int keep_all,
                           const xpb_conformance_options *opt, int64_t *kinks)
{
    memset(r, 0, 2 * sizeof *r);
    const xpb_tolerance *tol = xpb_tolerance_for(opt->precision);
    r[0].tol = tol->forward;
    r[1].tol = tol->gradient > 0 ? tol->gradient : tol->together;
    r[0].verdict = r[1].verdict = XPB_CONFORMANCE_PASS;
    xpb_err err = {{0}};
    xpb_model_program *mp = NULL;
    xpb_program_options popt = xpb_run_config_program(cfg);
    if (xpb_model_program_create(&mp, model, &popt, &err) != XPB_OK) {
        xpb_err_prefix(&err, "model");
        both(r, XPB_CONFORMANCE_ERROR, err.msg);
        return;
    }
    xpb_compare cmp;
    xpb_compare_init(&cmp, opt->precision, 1.0);
    step_and_compare(r, &cmp, test, ref, mp, keep_all, opt, kinks);
    if (r[0].verdict == XPB_CONFORMANCE_PASS) {
        xpb_compare_verdict v[2];
        xpb_compare_judge(&v[0], &cmp, XPB_COMPARE_FORWARD);
        xpb_compare_judge(&v[1], &cmp, XPB_COMPARE_GRADIENT);
        if (opt->verbose)
            xpb_compare_print(opt->out, &cmp);
        xpb_ct_result_from(&r[0], &v[0]);
        xpb_ct_result_from(&r[1], &v[1]);
    }
    xpb_compare_free(&cmp);
    xpb_model_program_free(mp);
}

static int selected(const xpb_conformance_options *o, const char *name)
{
    return !o->filter || !o->filter[0] || strstr(name, o->filter) != NULL;
}

/* Both rows of model `name` at size `s` (NULL: its defaults) compiled with keep_all or as run. */
static void model_rows(xpb_ct_report *rep, const xpb_ct_side *test, const xpb_ct_side *ref,
                       const xpb_model_api *m, const char *name, const model_size *s, int keep_all,
                       const xpb_conformance_options *opt, int64_t *kinks)
{
    char row[2][64], shape[96];
    snprintf(row[0], sizeof row[0], "model %s forward", name);
    snprintf(row[1], sizeof row[1], "model %s gradients", name);
    if (!selected(opt, row[0]) && !selected(opt, row[1]))
        return;
    xpb_run_config cfg;
    model_config(&cfg, name, s, test->name, opt);
    const char *brief = s && s->brief ? s->brief : "";
    snprintf(shape, sizeof shape, "%s%s%s b%u, %s", cfg.variant ? cfg.variant : "default",
             brief[0] ? " " : "", brief, cfg.batch, keep_all ? "keep_all" : "as run");
    xpb_ct_result r[2];
    xpb_guard_activity("during conformance case 'model %s' (%s)", name, shape);
    run_model_case(r, test, ref, m, &cfg, keep_all, opt, kinks);
    xpb_guard_activity(NULL);
    for (int k = 0; k < 2; k++) {
        char sh[160], note[48] = "";
        if (k && r[k].together && *kinks > 0)
            snprintf(note, sizeof note, ", together/%lld kinks", (long long)*kinks);
        else if (k && r[k].together)
            snprintf(note, sizeof note, ", together");
        snprintf(sh, sizeof sh, "%s%s", shape, note);
        xpb_ct_report_row(rep, row[k], sh, &r[k]);
    }
}

/* Both rows, with keep_all and as run, of model `name` at size `s` (NULL: its defaults). */
static void model_case(xpb_ct_report *rep, const xpb_ct_side *test, const xpb_ct_side *ref,
                       const xpb_model_api *m, const char *name, const model_size *s,
                       const xpb_conformance_options *opt)
{
    if (opt->quick && s && s->heavy)
        return;
    int64_t kinks = 0;
    for (int keep_all = 1; keep_all >= 0; keep_all--)
        model_rows(rep, test, ref, m, name, s, keep_all, opt, &kinks);
}

void xpb_ct_model_cases(xpb_ct_report *rep, const xpb_registry *registry, const xpb_ct_side *test,
                        const xpb_ct_side *ref, const xpb_conformance_options *opt)
{
    for (size_t i = 0; i < xpb_registry_count(registry); i++) {
        const xpb_plugin_descriptor *d = xpb_registry_at(registry, i, NULL);
        if (!d || d->kind != XPB_PLUGIN_MODEL)
            continue;
        const xpb_model_api *m = xpb_registry_model(registry, d->name);
        int sized = 0;
        for (size_t k = 0; k < N_MODEL_SIZES; k++)
            if (strcmp(model_sizes[k].model, d->name) == 0) {
                model_case(rep, test, ref, m, d->name, &model_sizes[k], opt);
                sized = 1;
            }
        if (!sized)
            model_case(rep, test, ref, m, d->name, NULL, opt);
    }
}
