/* The web pages: the ranked leaderboard (/), the time-to-accuracy board (/tta), one submission
 * (/submissions/ID), two submissions side by side (/compare?a=ID&b=ID), and the shared layout.
 * Pages are complete without JavaScript (sorting and filtering also work through query parameters);
 * the script only makes them instant. Every untrusted text goes through xpb_html / xpb_url. */
#ifndef LB_PAGES_H
#define LB_PAGES_H

#include "render/text.h"
#include "service/lb_app.h"
#include "service/lb_http.h"

void lb_page_board(struct lb_app *app, const struct lb_request *req, struct lb_response *res);
void lb_page_submission(struct lb_app *app, const struct lb_request *req, struct lb_response *res,
                        long long id);
void lb_page_compare(struct lb_app *app, const struct lb_request *req, struct lb_response *res);
/* The time-to-accuracy board (/tta, lb_page_tta.c): its results' own tables, one per model,
 * variant, dataset and target, ranked by time to target; query: page (of tables). */
void lb_page_tta(struct lb_app *app, const struct lb_request *req, struct lb_response *res);

/* A complete error page with `status` and a one-line explanation (plain text, escaped). */
void lb_page_error(struct lb_response *res, int status, const char *message);

/* The error page of an internal failure (500): it says the page cannot be shown now, never
 * why; `what` (a database's error text) is kept for the log only (lb_note_internal). */
void lb_page_internal(struct lb_response *res, const char *what);

/* Layout shared by the pages (lb_page_layout.c): document head, top bar, and the end. */
void lb_page_begin(struct xpb_text *b, const char *title);
void lb_page_end(struct xpb_text *b);
/* Marks res as a finished HTML page with `status`. */
void lb_page_send(struct lb_response *res, int status);

/* The section (id "rules") that says how ranks are decided and states every bound of the
 * service with its reason (lb_page_rules.c). */
void lb_page_rules(struct xpb_text *b, const struct lb_app *app);

/* Appends ` title="..."` naming a machine whole (its device, the host CPU when it differs, the
 * OS; each cut at 256 bytes), for the machine cells and cards (.machine) that the stylesheet
 * keeps to one line per text with an ellipsis: a long name from a submission cannot widen its
 * column, and hovering shows it whole. device may be "" (the CPU is the device). */
void lb_page_machine_title(struct xpb_text *b, const char *device, const char *cpu, const char *os);

/* Appends a link to a submission: <a href="/submissions/ID">#ID</a>. */
void lb_page_submission_link(struct xpb_text *b, long long id);

/* The class that colours a device kind on the pages (lb.css): "cpu", "unk" for unknown, "acc"
 * for any other (a GPU or another accelerator). A static string. */
const char *lb_page_kind_class(const char *device_kind);

/* One bar of lb_page_bars. */
struct lb_page_bar {
    const char *label;       /* left of the bar (shortened when long, whole in a tooltip) */
    const char *tooltip;     /* the row's tooltip, or NULL */
    const char *href;        /* a local link around the row, or NULL */
    const char *device_kind; /* the bar's colour (lb_page_kind_class) */
    double value;            /* samples/s; NAN: no bar, a dash for its value */
};

/* A horizontal bar chart of throughputs, one bar per entry in the given order: core's
 * xpb_svg_bar_chart in a figure with id `id` and caption `title`, coloured by the stylesheet
 * (the <svg> of class "chart bars", each bar "bar cpu", "bar unk" or "bar acc"), with each
 * value in samples/s with an SI prefix (lb_pages' charts: lb_page_chart.c). */
void lb_page_bars(struct xpb_text *b, const char *id, const char *title,
                  const struct lb_page_bar *bars, size_t n);

#endif
