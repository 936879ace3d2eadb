/* The web pages: the ranked leaderboard (/), one submission (/submissions/ID), two
 * submissions side by side (/compare?a=ID&b=ID), and the shared layout. Pages are complete
 * without JavaScript (sorting and filtering also work through query parameters); the script
 * only makes them instant. Every untrusted text goes through lb_buf_html / lb_buf_url. */
#ifndef LB_PAGES_H
#define LB_PAGES_H

#include "service/lb_app.h"
#include "service/lb_http.h"
#include "text/lb_buf.h"

void lb_page_board(struct lb_app *app, const struct lb_request *req, struct lb_response *res);
void lb_page_submission(struct lb_app *app, const struct lb_request *req, struct lb_response *res,
                        long long id);
void lb_page_compare(struct lb_app *app, const struct lb_request *req, struct lb_response *res);

/* A complete error page with `status` and a one-line explanation (plain text, escaped). */
void lb_page_error(struct lb_response *res, int status, const char *message);

/* The error page of an internal failure (500): it says the page cannot be shown now, never
 * why; `what` (a database's error text) is kept for the log only (lb_note_internal). */
void lb_page_internal(struct lb_response *res, const char *what);

/* Layout shared by the pages (lb_page_layout.c): document head, top bar, and the end. */
void lb_page_begin(struct lb_buf *b, const char *title);
void lb_page_end(struct lb_buf *b);
/* Marks res as a finished HTML page with `status`. */
void lb_page_send(struct lb_response *res, int status);

/* The section (id "rules") that says how ranks are decided and states every bound of the
 * service with its reason (lb_page_rules.c). */
void lb_page_rules(struct lb_buf *b, const struct lb_app *app);

/* Appends ` title="..."` naming a machine whole (its device, the host CPU when it differs, the
 * OS; each cut at 256 bytes), for the machine cells and cards (.machine) that the stylesheet
 * keeps to one line per text with an ellipsis: a long name from a submission cannot widen its
 * column, and hovering shows it whole. device may be "" (the CPU is the device). */
void lb_page_machine_title(struct lb_buf *b, const char *device, const char *cpu, const char *os);

/* Appends a link to a submission: <a href="/submissions/ID">#ID</a>. */
void lb_page_submission_link(struct lb_buf *b, long long id);

/* The class that colours a device kind on the pages (lb.css): "cpu", "unk" for unknown, "acc"
 * for any other (a GPU or another accelerator). A static string. */
const char *lb_page_kind_class(const char *device_kind);

#endif
