/* First-step verification against the reference backend (see verify.h). */
#include "check/verify.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check/judge.h"
#include "check/kinks.h"
#include "base/names.h"
#include "run/session.h"

/* Whether verification compares tensor `d`: losses, outputs, and gradients when training. */
static int compared(const xpb_tensor_desc *d, uint32_t training)
{
    if (d->dtype != XPB_DTYPE_F32)
        return 0;
    return d->role == XPB_ROLE_LOSS || d->role == XPB_ROLE_OUTPUT ||
           (training && d->role == XPB_ROLE_GRAD);
}

/* Reads every compared tensor from both sessions into `cmp`. */
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
        if (xpb_compare_add(cmp, d->name, d->role, kind, a, b, xpb_tensor_numel(d)) != XPB_OK) {
            st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "verification: out of memory");
            goto free_buffers;
        }
    }
free_buffers:
    free(a);
    free(b);
    return st;
}

/* The verdict into *out, with its message. */
static void report(xpb_verify_result *out, const xpb_compare_verdict *v, uint32_t precision)
{
    char flips[64] = "";
    out->passed = v->passed;
    out->max_rel_error = v->error;
    out->tolerance = v->tolerance;
    if (out->kink_flips > 0)
        snprintf(flips, sizeof flips, ", %lld kink flip%s", (long long)out->kink_flips,
                 out->kink_flips == 1 ? "" : "s");
    if (v->together)
        snprintf(out->message, sizeof out->message,
                 "%s: relative error %.3g of all gradients together (worst '%s' %.3g%s) against "
                 "%s (tolerance %.0e for %s)",
                 v->passed ? "verified" : "verification failed", v->error, v->worst, v->worst_error,
                 flips, XPB_REFERENCE_BACKEND, v->tolerance, xpb_precision_name(precision));
    else
        snprintf(out->message, sizeof out->message,
                 "%s: max relative error %.3g on '%s' against %s (tolerance %.0e for %s%s)",
                 v->passed ? "verified" : "verification failed", v->error,
                 v->compared ? v->worst : "(nothing compared)", XPB_REFERENCE_BACKEND, v->tolerance,
                 xpb_precision_name(precision), flips);
}

xpb_status xpb_verify_step(xpb_verify_result *out, const xpb_registry *registry,
                           const xpb_backend_api *backend, const xpb_model_program *mp,
                           const xpb_run_config *cfg, xpb_err *err)
{
    xpb_status st;
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
    xpb_compare cmp;
    xpb_compare_init(&cmp, cfg->precision, 1.0);
    out->kink_flips = 0;
    if ((st = xpb_session_open(&ref, ref_api, 0, mp, &ref_opts, err))) {
        xpb_err_prefix(err, "verification on %s", XPB_REFERENCE_BACKEND);
        return st;
    }
    if ((st = xpb_session_open(&dut, backend, cfg->device, mp, &dut_opts, err)))
        goto close_ref;
    if ((st = xpb_session_step(&ref, NULL, err)) || (st = xpb_session_step(&dut, NULL, err)))
        goto close_dut;
    /* kink flips matter where gradients are judged one by one (fp32) */
    if (mp->training && cmp.tol->gradient > 0 &&
        (st = xpb_kink_flips(&out->kink_flips, &dut, &ref, mp, err)))
        goto close_dut;
    cmp.kink_flips = out->kink_flips;
    if ((st = add_tensors(&cmp, &dut, &ref, mp, err)))
        goto free_compare;
    xpb_compare_verdict v;
    xpb_compare_judge_all(&v, &cmp);
    report(out, &v, cfg->precision);
free_compare:
    xpb_compare_free(&cmp);
close_dut:
    xpb_session_close(&dut);
close_ref:
    xpb_session_close(&ref);
    return st;
}
