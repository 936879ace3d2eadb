/* First-step verification against cpu_ref (see verify.h). */
#include "verify.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "names.h"
#include "session.h"

double xpb_verify_tolerance(uint32_t precision)
{
    switch (precision) {
    case XPB_PRECISION_FP32:
        return 1e-4;
    case XPB_PRECISION_TF32:
    case XPB_PRECISION_FP16_MIXED:
        return 2e-2;
    default:
        return 5e-2;
    }
}

/* ||x - ref|| / ||ref|| (L2): a single element that takes the other branch of a ReLU or a
 * max-pool tie between two correct implementations barely moves it, a wrong kernel does. */
static double rel_error(const float *x, const float *ref, int64_t n)
{
    double diff = 0, norm = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = (double)x[i] - (double)ref[i];
        diff += d * d;
        norm += (double)ref[i] * (double)ref[i];
    }
    if (isnan(diff))
        return INFINITY;
    return sqrt(diff) / (norm > 0 ? sqrt(norm) : 1e-30);
}

xpb_status xpb_verify_step(xpb_verify_result *out, const xpb_registry *registry,
                           const xpb_backend_api *backend, const xpb_model_program *mp,
                           const xpb_run_config *cfg, xpb_err *err)
{
    xpb_status st;
    const xpb_backend_api *ref_api = xpb_registry_backend(registry, "cpu_ref");
    if (!ref_api)
        return xpb_err_set(err, XPB_NOT_FOUND,
                           "verification needs the cpu_ref backend, which is not loaded");
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
    size_t max = 0;
    for (uint32_t t = 0; t < mp->n_tensors; t++)
        if (xpb_tensor_bytes(&mp->tensors[t]) > max)
            max = xpb_tensor_bytes(&mp->tensors[t]);
    float *a = malloc(max ? max : 4), *b = malloc(max ? max : 4);
    if (!a || !b) {
        st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
        goto free_buffers;
    }
    if ((st = xpb_session_open(&ref, ref_api, 0, mp, &ref_opts, err))) {
        xpb_err_prefix(err, "verification on cpu_ref");
        goto free_buffers;
    }
    if ((st = xpb_session_open(&dut, backend, cfg->device, mp, &dut_opts, err)))
        goto close_ref;
    if ((st = xpb_session_step(&ref, NULL, err)) || (st = xpb_session_step(&dut, NULL, err)))
        goto close_dut;
    out->tolerance = xpb_verify_tolerance(cfg->precision);
    out->max_rel_error = 0;
    double worst_ratio = 0;
    const char *worst = "(nothing compared)";
    for (uint32_t t = 0; t < mp->n_tensors; t++) {
        const xpb_tensor_desc *d = &mp->tensors[t];
        int compare = d->role == XPB_ROLE_LOSS || d->role == XPB_ROLE_OUTPUT ||
                      (mp->training && d->role == XPB_ROLE_GRAD);
        if (!compare || d->dtype != XPB_DTYPE_F32)
            continue;
        if ((st = xpb_session_read(&dut, t, a, err)) || (st = xpb_session_read(&ref, t, b, err)))
            goto close_dut;
        double e = rel_error(a, b, xpb_tensor_numel(d));
        double tol = xpb_verify_tolerance(cfg->precision) *
                     (d->role == XPB_ROLE_GRAD ? XPB_VERIFY_GRAD_FACTOR : 1.0);
        if (e / tol >= worst_ratio) {
            worst_ratio = e / tol;
            out->max_rel_error = e;
            out->tolerance = tol;
            worst = d->name;
        }
    }
    out->passed = worst_ratio <= 1.0;
    snprintf(out->message, sizeof out->message,
             "%s: max relative error %.3g on '%s' against cpu_ref (tolerance %.0e for %s)",
             out->passed ? "verified" : "verification failed", out->max_rel_error, worst,
             out->tolerance, xpb_precision_name(cfg->precision));
    st = XPB_OK;
close_dut:
    xpb_session_close(&dut);
close_ref:
    xpb_session_close(&ref);
free_buffers:
    free(a);
    free(b);
    return st;
}
