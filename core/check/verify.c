/* First-step verification against the reference backend (see verify.h). */
#include "check/verify.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/names.h"
#include "check/judge.h"
#include "check/kinks.h"
#include "program/init.h"
#include "program/rng.h"
#include "run/session.h"

/* Whether verification compares tensor `d`: losses, outputs, and gradients when training. */
static int compared(const xpb_tensor_desc *d, uint32_t training)
{
    if (d->dtype != XPB_DTYPE_F32)
        return 0;
    return d->role == XPB_ROLE_LOSS || d->role == XPB_ROLE_OUTPUT ||
           (training && d->role == XPB_ROLE_GRAD);
}

/* The floor group of tensor t (judge.h): losses with losses, outputs with outputs, and a
 * parameter's gradient with the gradients of the parameters its layer reads (the first op that
 * reads the parameter: a convolution's weight and bias). A bias gradient that cancels to zero
 * before instance norm is then measured against its own layer's weight gradient, while a layer
 * whose gradients are all small (the first layers of a deep net, 1000 times below the
 * classifier's) is not floored by another layer's scale. */
static uint32_t floor_group(const xpb_model_program *mp, uint32_t t)
{
    const xpb_tensor_desc *d = &mp->tensors[t];
    if (d->role != XPB_ROLE_GRAD)
        return d->role;
    for (uint32_t i = 0; i < mp->n_ops; i++)
        for (uint32_t k = 0; k < mp->ops[i].n_inputs && k < XPB_MAX_OP_INPUTS; k++)
            if (mp->ops[i].inputs[k] == d->grad_of)
                return XPB_ROLE_GRAD + ((i + 1u) << 8);
    return XPB_ROLE_GRAD;
}

/* Whether every op that reads tensor y subtracts the mean of each channel from it (instance
 * norm, batch norm in training, and their backward ops, which read it too). */
static int normalised_only(const xpb_model_program *mp, uint32_t y)
{
    int read = 0;
    for (uint32_t i = 0; i < mp->n_ops; i++) {
        const xpb_op *op = &mp->ops[i];
        for (uint32_t k = 0; k < op->n_inputs && k < XPB_MAX_OP_INPUTS; k++) {
            if (op->inputs[k] != y)
                continue;
            if (op->kind != XPB_OP_INSTANCENORM && op->kind != XPB_OP_INSTANCENORM_BWD &&
                op->kind != XPB_OP_BATCHNORM_TRAIN && op->kind != XPB_OP_BATCHNORM_BWD)
                return 0;
            read = 1;
        }
    }
    return read;
}

/* Whether the gradient of parameter p is zero in exact arithmetic: p is the bias of every
 * convolution or linear op that reads it, and each such op's result goes only into a
 * normalisation (a CycleGAN generator's convolutions before instance norm). Both sides then
 * hold rounding noise there. */
static int zero_gradient(const xpb_model_program *mp, uint32_t p)
{
    int bias = 0;
    for (uint32_t i = 0; i < mp->n_ops; i++) {
        const xpb_op *op = &mp->ops[i];
        if (op->kind == XPB_OP_SGD_UPDATE || op->kind == XPB_OP_ADAM_UPDATE)
            continue;
        for (uint32_t k = 0; k < op->n_inputs && k < XPB_MAX_OP_INPUTS; k++) {
            if (op->inputs[k] != p)
                continue;
            int conv = op->kind == XPB_OP_CONV2D || op->kind == XPB_OP_CONV_T2D ||
                       op->kind == XPB_OP_LINEAR;
            if (k != 2 || !conv || !normalised_only(mp, op->outputs[0]))
                return 0;
            bias = 1;
        }
    }
    return bias;
}

/* Reads every compared tensor from both sessions into `cmp` (tensor ids of `mp`, which the
 * reference's aligned program keeps). */
static xpb_status add_tensors(xpb_compare *cmp, xpb_session *dut, xpb_session *ref,
                              const xpb_model_program *mp, xpb_err *err)
{
    size_t max = 4;
    for (uint32_t t = 0; t < mp->n_tensors; t++)
        if (xpb_tensor_bytes(&mp->tensors[t]) > max)
            max = xpb_tensor_bytes(&mp->tensors[t]);
    xpb_status st = XPB_OK;
    float *a = malloc(max), *b = malloc(max);
    if (!a || !b) {
        st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "verification: out of memory");
        goto free_buffers;
    }
    for (uint32_t t = 0; t < mp->n_tensors; t++) {
        const xpb_tensor_desc *d = &mp->tensors[t];
        if (!compared(d, mp->training))
            continue;
        if ((st = xpb_session_read(dut, t, a, err)) || (st = xpb_session_read(ref, t, b, err)))
            goto free_buffers;
        uint32_t kind = d->role == XPB_ROLE_GRAD ? XPB_COMPARE_GRADIENT : XPB_COMPARE_FORWARD;
        if (xpb_compare_add_shaped(cmp, d->name, floor_group(mp, t), kind, a, b, d->ndim,
                                   d->dims) != XPB_OK) {
            st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "verification: out of memory");
            goto free_buffers;
        }
        if (d->role == XPB_ROLE_GRAD && zero_gradient(mp, d->grad_of))
            cmp->v[cmp->n - 1].zero = 1;
    }
free_buffers:
    free(a);
    free(b);
    return st;
}

/* Appends to out->message (printf-style), truncating. */
static void say(xpb_verify_result *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(xpb_verify_result *out, const char *fmt, ...)
{
    size_t used = strlen(out->message);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->message + used, sizeof out->message - used, fmt, ap);
    va_end(ap);
}

/* The near-ties aligned, for the message: ", 2 kink flips and 1 max-pool tie aligned". */
static void say_aligned(xpb_verify_result *out)
{
    if (out->kink_flips == 0 && out->pool_flips == 0)
        return;
    say(out, ", ");
    if (out->kink_flips > 0)
        say(out, "%lld kink flip%s%s", (long long)out->kink_flips, out->kink_flips == 1 ? "" : "s",
            out->pool_flips > 0 ? " and " : "");
    if (out->pool_flips > 0)
        say(out, "%lld max-pool tie%s", (long long)out->pool_flips,
            out->pool_flips == 1 ? "" : "s");
    say(out, " aligned");
}

/* What one compared step found: the verdict, and the near-ties of the aligned reference. */
struct step_result {
    xpb_compare_verdict v;
    struct xpb_kink_count kinks;
};

/* The deciding step's verdict into *out, with its message: the deciding error, then what
 * failed and where. `probe`: the number of parameters the probe step moved when it decides (0:
 * the run's own first step). */
static void report(xpb_verify_result *out, const struct step_result *r, uint32_t precision,
                   uint32_t probe)
{
    char where[256];
    const xpb_compare_verdict *v = &r->v;
    out->passed = v->passed && r->kinks.far == 0;
    out->max_rel_error = v->error;
    out->tolerance = v->tolerance;
    snprintf(out->worst_tensor, sizeof out->worst_tensor, "%s", v->worst);
    out->failing = v->failing;
    out->n_located = 0;
    for (uint32_t i = 0; i < v->n_located && i < XPB_VERIFY_LOCATED_MAX; i++)
        out->located[out->n_located++] = v->located[i];
    out->far = r->kinks.first_far;
    out->message[0] = '\0';
    say(out, "%s: ", out->passed ? "verified" : "verification failed");
    if (probe)
        say(out, "in the probe step (%u parameter%s initialised to a constant moved): ", probe,
            probe == 1 ? "" : "s");
    if (v->together)
        say(out, "relative error %.3g of all gradients together (worst '%s' %.3g)", v->error,
            v->worst, v->worst_error);
    else
        say(out, "max relative error %.3g on '%s'", v->error,
            v->compared ? v->worst : "(nothing compared)");
    say(out, " against %s (tolerance %.0e for %s", XPB_REFERENCE_BACKEND, v->tolerance,
        xpb_precision_name(precision));
    say_aligned(out);
    say(out, ")");
    if (!v->passed && v->n_located > 0) {
        xpb_compare_format_located(where, sizeof where, &v->located[0]);
        say(out, "; '%s' %s", v->located[0].tensor, where);
        if (v->failing > 1)
            say(out, "; %u tensors outside their tolerance", v->failing);
    }
    if (r->kinks.far > 0) {
        xpb_compare_format_located(where, sizeof where, &out->far);
        say(out,
            "; %lld element%s on the other side of a kink or max-pool tie than %s beyond "
            "rounding, first '%s' %s",
            (long long)r->kinks.far, r->kinks.far == 1 ? "" : "s", XPB_REFERENCE_BACKEND,
            out->far.tensor, where);
    }
    if (!probe && out->probe_params)
        say(out, "; probe step with %u parameter%s initialised to a constant moved: passed",
            out->probe_params, out->probe_params == 1 ? "" : "s");
}

/* One step on both sides from what they hold, judged into *r: the backend's step, then (with
 * the aligned reference k) its decisions written into the reference, the reference's step,
 * the near-ties counted; every compared tensor judged. */
static xpb_status compare_step(struct step_result *r, xpb_session *dut, xpb_session *ref,
                               xpb_kink_reference *k, const xpb_model_program *mp,
                               uint32_t precision, xpb_err *err)
{
    xpb_status st;
    xpb_compare cmp;
    memset(r, 0, sizeof *r);
    xpb_compare_init(&cmp, precision, 1.0);
    cmp.aligned = k != NULL;
    if ((st = xpb_session_step(dut, NULL, err)) ||
        (k && (st = xpb_kink_reference_write(k, ref, dut, err))) ||
        (st = xpb_session_step(ref, NULL, err)) ||
        (k && (st = xpb_kink_reference_count(&r->kinks, k, ref, err))) ||
        (st = add_tensors(&cmp, dut, ref, mp, err)))
        goto free_compare;
    xpb_compare_judge_all(&r->v, &cmp);
free_compare:
    xpb_compare_free(&cmp);
    return st;
}

/* Whether PARAM tensor t is initialised to a constant (a bias to 0, a norm's scale to 1). */
static int constant_param(const xpb_model_program *mp, uint32_t t)
{
    if (mp->tensors[t].role != XPB_ROLE_PARAM || mp->tensors[t].dtype != XPB_DTYPE_F32 ||
        mp->tensor_value[t] == 0)
        return 0;
    uint32_t kind = mp->graph->values[mp->tensor_value[t]].init.kind;
    return kind == XPB_INIT_ZEROS || kind == XPB_INIT_ONES || kind == XPB_INIT_CONST;
}

/* The number of parameters of mp initialised to a constant. */
static uint32_t constant_params(const xpb_model_program *mp)
{
    uint32_t n = 0;
    for (uint32_t t = 0; t < mp->n_tensors; t++)
        n += (uint32_t)constant_param(mp, t);
    return n;
}

/* Writes the probe step's state into session s (opened on mp, or on the aligned copy of mp):
 * every parameter and state as at the start of the run, then each parameter initialised to a
 * constant c moved to c + 0.1 u, u uniform in [-1, 1) from a stream keyed by its name: the same
 * numbers on both sides. */
static xpb_status write_probe(xpb_session *s, const xpb_model_program *mp, xpb_err *err)
{
    xpb_status st = xpb_model_program_write_initial(s->mp, s->api, s->exe, err);
    float *buf = NULL;
    for (uint32_t t = 0; t < mp->n_tensors && st == XPB_OK; t++) {
        if (!constant_param(mp, t))
            continue;
        size_t bytes = xpb_tensor_bytes(&mp->tensors[t]);
        float *grown = realloc(buf, bytes);
        if (!grown) {
            st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "verification: out of memory");
            break;
        }
        buf = grown;
        if ((st = xpb_model_program_initial_value(mp, t, buf)))
            break;
        xpb_rng r;
        xpb_rng_init(&r, mp->seed ^ 0x9e0be5eedull, mp->tensors[t].name, 0);
        for (size_t i = 0; i < bytes / sizeof *buf; i++)
            buf[i] += (float)(0.1 * (2.0 * xpb_rng_uniform(&r) - 1.0));
        if ((st = s->api->write(s->exe, t, buf, bytes)))
            xpb_err_set(err, st, "verification: writing the probe value of '%s': %s",
                        mp->tensors[t].name, s->api->exe_last_error(s->exe));
    }
    free(buf);
    return st;
}

xpb_status xpb_verify_step(xpb_verify_result *out, const xpb_registry *registry,
                           const xpb_backend_api *backend, const xpb_model_program *mp,
                           const xpb_run_config *cfg, xpb_err *err)
{
    xpb_status st;
    memset(out, 0, sizeof *out);
    const xpb_backend_api *ref_api = xpb_registry_backend(registry, XPB_REFERENCE_BACKEND);
    if (!ref_api)
        return xpb_err_set(err, XPB_NOT_FOUND,
                           "verification needs the %s backend, which is not loaded",
                           XPB_REFERENCE_BACKEND);
    xpb_session ref, dut;
    xpb_compile_options ref_opts = {.struct_size = sizeof ref_opts,
                                    .precision = XPB_PRECISION_FP32,
                                    .fusion = 0,
                                    .keep_all = 1};
    xpb_compile_options dut_opts = {.struct_size = sizeof dut_opts,
                                    .precision = cfg->precision,
                                    .fusion = cfg->fusion,
                                    .threads = cfg->threads,
                                    .keep_all = 1};
    /* Gradients judged one by one (fp32) are judged against the aligned reference: the
     * reference takes the backend's side of every near-tie (kinks.h). */
    xpb_kink_reference *aligned = NULL;
    if (mp->training && xpb_tolerance_for(cfg->precision)->aligned > 0 &&
        (st = xpb_kink_reference_create(&aligned, mp, err)))
        return st;
    const xpb_model_program *ref_mp = aligned ? xpb_kink_reference_program(aligned) : mp;
    if ((st = xpb_session_open(&dut, backend, cfg->device, mp, &dut_opts, err)))
        goto free_aligned;
    if ((st = xpb_session_open(&ref, ref_api, 0, ref_mp, &ref_opts, err))) {
        xpb_err_prefix(err, "verification on %s", XPB_REFERENCE_BACKEND);
        goto close_dut;
    }
    struct step_result first, probe;
    if ((st = compare_step(&first, &dut, &ref, aligned, mp, cfg->precision, err)))
        goto close_ref;
    out->kink_flips = first.kinks.flips;
    out->pool_flips = first.kinks.pool_flips;
    out->far_flips = first.kinks.far;
    /* The probe step: a kernel that ignores a term the run starts at 0 or 1 (a bias, a norm's
     * scale) computes the right first step; moved, the term shows. */
    out->probe_params = constant_params(mp);
    if (!first.v.passed || first.kinks.far > 0 || out->probe_params == 0) {
        out->probe_params = 0;
        report(out, &first, cfg->precision, 0);
        goto close_ref;
    }
    if ((st = write_probe(&dut, mp, err)) || (st = write_probe(&ref, mp, err)) ||
        (st = compare_step(&probe, &dut, &ref, aligned, mp, cfg->precision, err)))
        goto close_ref;
    out->kink_flips += probe.kinks.flips;
    out->pool_flips += probe.kinks.pool_flips;
    out->far_flips += probe.kinks.far;
    out->probe_failed = !probe.v.passed || probe.kinks.far > 0;
    if (out->probe_failed)
        report(out, &probe, cfg->precision, out->probe_params);
    else
        report(out, &first, cfg->precision, 0);
close_ref:
    xpb_session_close(&ref);
close_dut:
    xpb_session_close(&dut);
free_aligned:
    xpb_kink_reference_free(aligned);
    return st;
}
