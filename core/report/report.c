/* Building, writing and releasing a report (see report.h). */
#include "report/report.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "report/report_model.h"
#include "report/report_runs.h"
#include "report/report_sections.h"
#include "report/report_writers.h"

static xpb_status (*const sections[])(xpb_report *) = {
    xpb_report_env,    xpb_report_speedups, xpb_report_fusion,       xpb_report_precision,
    xpb_report_batch,  xpb_report_threads,  xpb_report_roofline,     xpb_report_surfaces,
    xpb_report_energy, xpb_report_tta,      xpb_report_interference, xpb_report_all_runs,
    xpb_report_method,
};

xpb_status xpb_report_build(xpb_report **out, json_t *const *docs, const char *const *names,
                            size_t n, const xpb_report_opts *opts, xpb_err *err)
{
    *out = NULL;
    if (n == 0)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "a report needs at least one results file");
    for (size_t i = 0; i < n; i++)
        if (!json_is_object(docs[i]))
            return xpb_err_set(err, XPB_INVALID_ARGUMENT, "%s: not a results document", names[i]);
    xpb_report *r = calloc(1, sizeof *r);
    if (!r)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    if (opts)
        r->opts = *opts;
    r->title = xpb_arena_strdup(&r->arena, r->opts.title ? r->opts.title : "xpubench report");
    r->docs = xpb_arena_alloc(&r->arena, n * sizeof *r->docs);
    r->views = xpb_arena_alloc(&r->arena, n * sizeof *r->views);
    r->names = xpb_arena_alloc(&r->arena, n * sizeof *r->names);
    if (!r->title || !r->docs || !r->views || !r->names)
        goto out_of_memory;
    for (size_t i = 0; i < n; i++) {
        if (!(r->names[i] = xpb_arena_strdup(&r->arena, names[i])))
            goto out_of_memory;
        r->docs[i] = json_incref(docs[i]);
        r->n_docs++;
        if (xpb_results_view(&r->views[i], docs[i]) != XPB_OK)
            goto out_of_memory;
    }
    if (xpb_rruns_build(r) != XPB_OK)
        goto out_of_memory;
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
        if (sections[i](r) != XPB_OK || xpb_arena_failed(&r->arena))
            goto out_of_memory;
    *out = r;
    return XPB_OK;
out_of_memory:
    xpb_report_free(r);
    return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory while building the report");
}

xpb_status xpb_report_render(struct xpb_text *out, const xpb_report *r, xpb_report_format format)
{
    switch (format) {
    case XPB_REPORT_HTML:
        xpb_report_write_html(out, r);
        break;
    case XPB_REPORT_MARKDOWN:
        xpb_report_write_markdown(out, r);
        break;
    case XPB_REPORT_CSV:
        xpb_report_write_csv(out, r);
        break;
    default:
        return XPB_INVALID_ARGUMENT;
    }
    return out->failed ? XPB_OUT_OF_MEMORY : XPB_OK;
}

xpb_status xpb_report_write(FILE *f, const xpb_report *r, xpb_report_format format)
{
    struct xpb_text text = {0};
    xpb_status st = xpb_report_render(&text, r, format);
    if (st == XPB_OK)
        st = xpb_text_write(&text, f);
    xpb_text_free(&text);
    if (st == XPB_OK && (fflush(f) != 0 || ferror(f)))
        st = XPB_IO_ERROR;
    return st;
}

void xpb_report_free(xpb_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_docs; i++) {
        xpb_results_view_free(&r->views[i]);
        json_decref(r->docs[i]);
    }
    xpb_arena_free(&r->arena);
    free(r);
}

int xpb_report_parse_bytes(double *bytes, const char *text)
{
    static const struct {
        const char *suffix;
        double factor;
    } units[] = {{"", 1},
                 {"b", 1},
                 {"k", 1024.0},
                 {"kb", 1024.0},
                 {"kib", 1024.0},
                 {"m", 1048576.0},
                 {"mb", 1048576.0},
                 {"mib", 1048576.0},
                 {"g", 1073741824.0},
                 {"gb", 1073741824.0},
                 {"gib", 1073741824.0},
                 {"t", 1099511627776.0},
                 {"tb", 1099511627776.0},
                 {"tib", 1099511627776.0}};
    char *end = NULL;
    if (!text || (!isdigit((unsigned char)text[0]) && text[0] != '.'))
        return -1;
    double v = strtod(text, &end);
    while (end && isspace((unsigned char)*end))
        end++;
    for (size_t i = 0; end && i < sizeof units / sizeof units[0]; i++)
        if (strcasecmp(end, units[i].suffix) == 0) {
            double b = v * units[i].factor;
            if (!isfinite(b) || !(b > 0))
                return -1;
            *bytes = b;
            return 0;
        }
    return -1;
}
