/* The conformance suite's report (see conformance_run.h): the verdicts' spellings, the table,
 * the JSON document and the counts. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/atomic_file.h"
#include "check/conformance_run.h"
#include "base/names.h"

/* The one table of verdict spellings, in enum order. */
/* Whether the row has numbers: it ran on both sides and was compared. */
static int compared(const xpb_ct_result *r)
{
    return r->verdict == XPB_CONFORMANCE_PASS || r->verdict == XPB_CONFORMANCE_FAIL;
}

void xpb_ct_result_from(xpb_ct_result *r, const xpb_compare_verdict *v)
{
    r->verdict = v->passed ? XPB_CONFORMANCE_PASS : XPB_CONFORMANCE_FAIL;
    r->together = v->together;
    r->max_abs = v->max_abs;
    r->error = v->error;
    r->tol = v->tolerance;
    snprintf(r->worst, sizeof r->worst, "%s", v->worst);
    r->failing = v->failing;
    r->n_located = v->n_located;
    memcpy(r->located, v->located, sizeof r->located);
    if (v->passed)
        return;
    size_t used = (size_t)snprintf(r->msg, sizeof r->msg, "worst tensor '%s' (error %.3g)",
                                   v->worst, v->worst_error);
    for (uint32_t i = 0; i < v->n_located && used < sizeof r->msg; i++) {
        char where[192];
        xpb_compare_format_located(where, sizeof where, &v->located[i]);
        used += (size_t)snprintf(r->msg + used, sizeof r->msg - used, "%s'%s' %s", i ? "; " : ": ",
                                 v->located[i].tensor, where);
    }
}

/* The JSON document (backend, reference, options, rows so far, counts, whether the suite
 * finished) written atomically to opt->json_path; the first failure is kept in the report. */
static void save_json(xpb_ct_report *rep, int complete)
{
    const xpb_conformance_options *opt = rep->opt;
    if (!opt->json_path || rep->json_status != XPB_OK)
        return;
    json_t *doc = json_object();
    json_object_set_new(doc, "backend", json_string(rep->backend));
    json_object_set_new(doc, "reference", json_string(XPB_REFERENCE_BACKEND));
    json_object_set_new(doc, "precision", json_string(xpb_precision_name(opt->precision)));
    json_object_set_new(doc, "fusion", json_boolean(opt->fusion));
    json_object_set_new(doc, "quick", json_boolean(opt->quick));
    json_object_set_new(doc, "cases", rep->rows ? json_incref(rep->rows) : json_array());
    json_object_set_new(doc, "passed", json_integer(rep->summary->passed));
    json_object_set_new(doc, "failed", json_integer(rep->summary->failed));
    json_object_set_new(doc, "unsupported", json_integer(rep->summary->unsupported));
    json_object_set_new(doc, "complete", json_boolean(complete));
    char *text = json_dumps(doc, JSON_INDENT(2));
    json_decref(doc);
    if (!text)
        rep->json_status =
            xpb_err_set(&rep->json_err, XPB_OUT_OF_MEMORY, "conformance: JSON: out of memory");
    else
        rep->json_status = xpb_atomic_write(opt->json_path, text, strlen(text), &rep->json_err);
    free(text);
}

void xpb_ct_report_begin(xpb_ct_report *rep, const char *backend,
                         const xpb_conformance_options *opt, xpb_conformance_summary *summary)
{
    memset(rep, 0, sizeof *rep);
    memset(summary, 0, sizeof *summary);
    rep->backend = backend;
    rep->opt = opt;
    rep->summary = summary;
    rep->rows = opt->json_path ? json_array() : NULL;
    save_json(rep, 0);
    if (!opt->out)
        return;
    fprintf(opt->out, "conformance of %s against %s, precision %s, fusion %s%s\n\n", backend,
            XPB_REFERENCE_BACKEND, xpb_precision_name(opt->precision), opt->fusion ? "on" : "off",
            opt->quick ? ", quick" : "");
    fprintf(opt->out, "%-32s %-40s %10s %10s %8s  %s\n", "case", "shape", "max_abs", "error", "tol",
            "result");
    fflush(opt->out);
}

static void print_row(FILE *f, const char *name, const char *shape, const xpb_ct_result *r)
{
    if (!f)
        return;
    const char *word = xpb_conformance_verdict_name(r->verdict);
    if (compared(r))
        fprintf(f, "%-32s %-40s %10.2e %10.2e %8.0e  %s\n", name, shape, r->max_abs, r->error,
                r->tol, word);
    else
        fprintf(f, "%-32s %-40s %10s %10s %8.0e  %s\n", name, shape, "-", "-", r->tol, word);
    if (r->verdict != XPB_CONFORMANCE_PASS && r->msg[0])
        fprintf(f, "    %s\n", r->msg);
    fflush(f);
}

/* JSON has no infinity: a non-finite error is written as the largest double. */
static json_t *finite_real(double x)
{
    return json_real(isfinite(x) ? x : 1e308);
}

/* An element's value: a number, or "NaN", "Infinity", "-Infinity" (JSON has none of them). */
static json_t *element_value(double x)
{
    if (isfinite(x))
        return json_real(x);
    return json_string(isnan(x) ? "NaN" : x > 0 ? "Infinity" : "-Infinity");
}

/* The located failures of a row: [{"tensor", "error", "tolerance", "index", "coords",
 * "value", "reference"}], the furthest from tolerance first. */
static json_t *json_failures(const xpb_ct_result *r)
{
    json_t *list = json_array();
    for (uint32_t i = 0; i < r->n_located; i++) {
        const struct xpb_located *l = &r->located[i];
        json_t *o = json_object(), *coords = json_array();
        for (uint32_t d = 0; d < l->ndim && d < 4; d++)
            json_array_append_new(coords, json_integer(l->coords[d]));
        json_object_set_new(o, "tensor", json_string(l->tensor));
        json_object_set_new(o, "error", finite_real(l->error));
        json_object_set_new(o, "tolerance", json_real(l->tolerance));
        json_object_set_new(o, "index", json_integer(l->index));
        json_object_set_new(o, "coords", coords);
        json_object_set_new(o, "value", element_value(l->value));
        json_object_set_new(o, "reference", element_value(l->reference));
        json_array_append_new(list, o);
    }
    return list;
}

static void json_row(json_t *rows, const char *name, const char *shape, const xpb_ct_result *r)
{
    if (!rows)
        return;
    json_t *o = json_object();
    json_object_set_new(o, "case", json_string(name));
    json_object_set_new(o, "shape", json_string(shape));
    json_object_set_new(o, "status", json_string(xpb_conformance_verdict_name(r->verdict)));
    if (compared(r)) {
        json_object_set_new(o, "max_abs", finite_real(r->max_abs));
        json_object_set_new(o, "error", finite_real(r->error));
        json_object_set_new(o, "worst_tensor", json_string(r->worst));
        if (r->verdict == XPB_CONFORMANCE_FAIL) {
            json_object_set_new(o, "failing_tensors", json_integer(r->failing));
            json_object_set_new(o, "failures", json_failures(r));
        }
    }
    json_object_set_new(o, "tolerance", json_real(r->tol));
    if (r->verdict != XPB_CONFORMANCE_PASS && r->msg[0])
        json_object_set_new(o, "message", json_string(r->msg));
    json_array_append_new(rows, o);
}

void xpb_ct_report_row(xpb_ct_report *rep, const char *name, const char *shape,
                       const xpb_ct_result *r)
{
    print_row(rep->opt->out, name, shape, r);
    json_row(rep->rows, name, shape, r);
    if (r->verdict == XPB_CONFORMANCE_PASS)
        rep->summary->passed++;
    else if (r->verdict == XPB_CONFORMANCE_UNSUPPORTED)
        rep->summary->unsupported++;
    else
        rep->summary->failed++;
    save_json(rep, 0);
}

xpb_status xpb_ct_report_end(xpb_ct_report *rep, xpb_err *err)
{
    if (rep->opt->out)
        fprintf(rep->opt->out, "\n%u passed, %u failed, %u unsupported\n", rep->summary->passed,
                rep->summary->failed, rep->summary->unsupported);
    save_json(rep, 1);
    if (rep->json_status != XPB_OK && err)
        *err = rep->json_err;
    return rep->json_status;
}

void xpb_ct_report_free(xpb_ct_report *rep)
{
    json_decref(rep->rows);
    rep->rows = NULL;
}
