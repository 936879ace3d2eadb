/* Running one op or chain case of the conformance suite on both sides and judging it (see
 * conformance_run.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/conformance_run.h"
#include "plugin/guard.h"

/* Every call into a backend below is recorded for the crash line (plugin/guard.h). */

/* msg = "backend '<side>': <what>: <the backend's message>", read inside the recorded call: from
 * exe_last_error(exe), or last_error(backend) when exe is NULL. */
static void side_error(char *msg, size_t msg_size, const xpb_ct_side *s, const xpb_executable *exe,
                       const char *what)
{
    xpb_guard_enter(s->api, exe ? "exe_last_error" : "last_error");
    snprintf(msg, msg_size, "backend '%s': %s: %s", s->name, what,
             exe ? s->api->exe_last_error(exe) : s->api->last_error(s->be));
    xpb_guard_leave();
}

/* Writes the inputs, runs phase 0 c->runs times and reads every host-readable tensor of `c`
 * into `res` (XPB_CT_MAX_TENSORS slots, filled with malloc'ed buffers owned by the caller). */
static xpb_status write_run_read(void **res, const xpb_ct_side *s, xpb_executable *exe,
                                 const xpb_ct_case *c, void **in, char *msg, size_t msg_size)
{
    xpb_status st;
    char what[300];
    for (uint32_t t = 0; t < c->n_t; t++) {
        if (!in[t])
            continue;
        xpb_guard_enter(s->api, "write");
        st = s->api->write(exe, t, in[t], xpb_tensor_bytes(&c->t[t]));
        xpb_guard_leave();
        if (st != XPB_OK) {
            snprintf(what, sizeof what, "write '%s'", c->tname[t]);
            side_error(msg, msg_size, s, exe, what);
            return st;
        }
    }
    for (uint32_t r = 0; r < c->runs; r++) {
        xpb_guard_enter(s->api, "run");
        st = s->api->run(exe, 0);
        if (st == XPB_OK) {
            xpb_guard_enter(s->api, "synchronize");
            st = s->api->synchronize(exe);
        }
        xpb_guard_leave();
        if (st != XPB_OK) {
            side_error(msg, msg_size, s, exe, "run");
            return st;
        }
    }
    for (uint32_t t = 0; t < c->n_t; t++) {
        if (!(c->t[t].flags & XPB_TENSOR_HOST_READ))
            continue;
        size_t bytes = xpb_tensor_bytes(&c->t[t]);
        if (!(res[t] = malloc(bytes))) {
            snprintf(msg, msg_size, "out of memory");
            return XPB_OUT_OF_MEMORY;
        }
        xpb_guard_enter(s->api, "read");
        st = s->api->read(exe, t, res[t], bytes);
        xpb_guard_leave();
        if (st != XPB_OK) {
            snprintf(what, sizeof what, "read '%s'", c->tname[t]);
            side_error(msg, msg_size, s, exe, what);
            return st;
        }
    }
    return XPB_OK;
}

/* Compiles and runs case `c` on one side; *out gets XPB_CT_MAX_TENSORS buffers, one per
 * host-readable tensor (NULL for the others), owned by the caller (xpb_ct_buffers_free).
 * XPB_UNSUPPORTED (compile refused) and other failures leave a message in msg. */
static xpb_status exec_case(void ***out, const xpb_ct_side *s, const xpb_ct_case *c,
                            const xpb_compile_options *o, void **in, char *msg, size_t msg_size)
{
    xpb_executable *exe = NULL;
    *out = NULL;
    xpb_guard_enter(s->api, "compile");
    xpb_status st = s->api->compile(&exe, s->be, &c->prog, o);
    xpb_guard_leave();
    if (st != XPB_OK) {
        side_error(msg, msg_size, s, NULL, "compile");
        return st;
    }
    void **res = calloc(XPB_CT_MAX_TENSORS, sizeof *res);
    if (!res) {
        snprintf(msg, msg_size, "out of memory");
        st = XPB_OUT_OF_MEMORY;
        goto destroy;
    }
    if ((st = write_run_read(res, s, exe, c, in, msg, msg_size)) != XPB_OK)
        goto free_results;
    *out = res;
    res = NULL;
free_results:
    xpb_ct_buffers_free(res);
destroy:
    xpb_guard_enter(s->api, "destroy");
    s->api->destroy(exe);
    xpb_guard_leave();
    return st;
}

/* Judges the f32 tensors both sides read, each against the op tolerance (scaled by the case's
 * factor under reduced precision). */
static void judge(xpb_ct_result *r, const xpb_ct_case *c, void **a, void **b,
                  const xpb_conformance_options *opt)
{
    double scale =
        opt->precision != XPB_PRECISION_FP32 && c->bf16_tol_scale > 0 ? c->bf16_tol_scale : 1.0;
    xpb_compare cmp;
    xpb_compare_init(&cmp, opt->precision, scale);
    for (uint32_t t = 0; t < c->n_t; t++)
        if (a[t] && b[t] && c->t[t].dtype == XPB_DTYPE_F32 &&
            xpb_compare_add_shaped(&cmp, c->tname[t], c->t[t].role, XPB_COMPARE_OP, a[t], b[t],
                                   c->t[t].ndim, c->t[t].dims) != XPB_OK) {
            r->verdict = XPB_CONFORMANCE_ERROR;
            snprintf(r->msg, sizeof r->msg, "out of memory");
            goto free_compare;
        }
    xpb_compare_verdict v;
    xpb_compare_judge(&v, &cmp, XPB_COMPARE_OP);
    if (opt->verbose)
        xpb_compare_print(opt->out, &cmp);
    xpb_ct_result_from(r, &v);
free_compare:
    xpb_compare_free(&cmp);
}

void xpb_ct_run_case(xpb_ct_result *r, const xpb_ct_side *test, const xpb_ct_side *ref,
                     const xpb_ct_case *c, const xpb_conformance_options *opt)
{
    memset(r, 0, sizeof *r);
    r->tol = xpb_tolerance_for(opt->precision)->op;
    if (opt->precision != XPB_PRECISION_FP32 && c->bf16_tol_scale > 0)
        r->tol *= c->bf16_tol_scale;
    r->verdict = XPB_CONFORMANCE_ERROR;
    if (c->overflow) {
        snprintf(r->msg, sizeof r->msg, "internal: the case does not fit the suite's arrays");
        return;
    }
    int bf16 = opt->precision == XPB_PRECISION_BF16_MIXED;
    void **in = xpb_ct_inputs(c, opt->seed * 7919u + (uint64_t)c->n_t, bf16);
    void **a = NULL, **b = NULL;
    if (!in) {
        snprintf(r->msg, sizeof r->msg, "out of memory");
        return;
    }
    xpb_ct_masks(c, in);
    xpb_compile_options ot = {.struct_size = sizeof ot,
                              .precision = opt->precision,
                              .fusion = opt->fusion,
                              .threads = opt->threads};
    xpb_compile_options orf = {.struct_size = sizeof orf, .precision = XPB_PRECISION_FP32};
    xpb_status st = exec_case(&a, test, c, &ot, in, r->msg, sizeof r->msg);
    if (st == XPB_UNSUPPORTED)
        r->verdict = XPB_CONFORMANCE_UNSUPPORTED;
    if (st != XPB_OK)
        goto free_inputs;
    if (exec_case(&b, ref, c, &orf, in, r->msg, sizeof r->msg) != XPB_OK)
        goto free_inputs;
    judge(r, c, a, b, opt);
free_inputs:
    xpb_ct_buffers_free(in);
    xpb_ct_buffers_free(a);
    xpb_ct_buffers_free(b);
}
