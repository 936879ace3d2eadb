/* The conformance suite's driver (see conformance.h): opens both sides, runs the catalogue's
 * op and chain cases and the model cases, and reports. */
#include "check/conformance.h"

#include <string.h>

#include "check/conformance_run.h"
#include "base/names.h"
#include "plugin/guard.h"

void xpb_conformance_defaults(xpb_conformance_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->precision = XPB_PRECISION_FP32;
    opt->fusion = 1;
    opt->models = 1;
    opt->seed = 1;
    opt->out = stdout;
}

static xpb_status open_side(xpb_ct_side *s, const xpb_registry *reg, const char *name, xpb_err *err)
{
    s->name = name;
    s->api = xpb_registry_backend(reg, name);
    if (!s->api)
        return xpb_err_set(err, XPB_NOT_FOUND, "backend '%s' is not loaded (see `xpubench list`)",
                           name);
    xpb_guard_enter(s->api, "open");
    xpb_status st = s->api->open(&s->be, 0);
    xpb_guard_leave();
    if (st != XPB_OK) {
        xpb_guard_enter(s->api, "last_error");
        xpb_err_set(err, st, "backend '%s': open: %s", name, s->api->last_error(NULL));
        xpb_guard_leave();
    }
    return st;
}

static void close_side(xpb_ct_side *s)
{
    if (s->be) {
        xpb_guard_enter(s->api, "close");
        s->api->close(s->be);
        xpb_guard_leave();
    }
    s->be = NULL;
}

static int selected(const xpb_conformance_options *o, const char *name)
{
    return !o->filter || !o->filter[0] || strstr(name, o->filter) != NULL;
}

/* Every op and chain case of the catalogue that the filter selects. */
static xpb_status op_cases(xpb_ct_report *rep, const xpb_ct_side *test, const xpb_ct_side *ref,
                           const xpb_conformance_options *opt, xpb_err *err)
{
    xpb_ct_list cases = {0};
    xpb_ct_catalogue(&cases, opt->quick);
    if (cases.oom) {
        xpb_ct_list_free(&cases);
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "conformance: out of memory");
    }
    for (size_t i = 0; i < cases.n; i++) {
        xpb_ct_case *c = &cases.v[i];
        if (!selected(opt, c->name))
            continue;
        xpb_ct_bind(c);
        xpb_ct_result r;
        xpb_guard_activity("during conformance case '%s' (%s)", c->name, c->shape);
        xpb_ct_run_case(&r, test, ref, c, opt);
        xpb_guard_activity(NULL);
        xpb_ct_report_row(rep, c->name, c->shape, &r);
    }
    xpb_ct_list_free(&cases);
    return XPB_OK;
}

xpb_status xpb_conformance_run(xpb_conformance_summary *summary, const xpb_registry *registry,
                               const char *backend, const xpb_conformance_options *opt,
                               xpb_err *err)
{
    memset(summary, 0, sizeof *summary);
    xpb_ct_side test = {0}, ref = {0};
    xpb_ct_report rep = {0};
    xpb_status st;
    xpb_guard_activity("during conformance (opening the backends)");
    if ((st = open_side(&test, registry, backend, err)) != XPB_OK ||
        (st = open_side(&ref, registry, XPB_REFERENCE_BACKEND, err)) != XPB_OK)
        goto close_sides;
    xpb_ct_report_begin(&rep, backend, opt, summary);
    if ((st = op_cases(&rep, &test, &ref, opt, err)) != XPB_OK)
        goto close_sides;
    if (opt->models)
        xpb_ct_model_cases(&rep, registry, &test, &ref, opt);
    st = xpb_ct_report_end(&rep, err);
close_sides:
    xpb_guard_activity("during conformance (closing the backends)");
    close_side(&test);
    close_side(&ref);
    xpb_guard_activity(NULL);
    xpb_ct_report_free(&rep);
    return st;
}
