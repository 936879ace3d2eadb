/* Page layout shared by every page (see lb_pages.h). */
#include <stdio.h>
#include <string.h>

#include "pages/lb_assets.h"
#include "pages/lb_pages.h"
#include "render/escape.h"
#include "store/lb_store.h"

void lb_page_begin(struct xpb_text *b, const char *title)
{
    const char *v = lb_asset_version();
    xpb_text_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                     "<title>");
    xpb_html(b, title);
    xpb_text_puts(b, " \xC2\xB7 xpubench leaderboard</title>");
    /* an empty icon: browsers then do not ask for /favicon.ico */
    xpb_text_puts(b, "<link rel=\"icon\" href=\"data:,\">");
    xpb_text_printf(b, "<link rel=\"stylesheet\" href=\"/static/lb.css?v=%s\">", v);
    xpb_text_printf(b, "<script defer src=\"/static/lb.js?v=%s\"></script>", v);
    xpb_text_puts(b, "</head><body><header class=\"top\"><div class=\"inner\">"
                     "<a class=\"brand\" href=\"/\">xpubench <span>leaderboard</span></a>"
                     "<nav><a href=\"/\">Rankings</a><a href=\"/tta\">Time to accuracy</a>"
                     "<a href=\"/#recent\">Recent</a>"
                     "<a href=\"/api/v1/results\">API</a></nav></div></header><main>");
}

void lb_page_end(struct xpb_text *b)
{
    xpb_text_puts(b, "</main><footer class=\"bottom\">Results uploaded with "
                     "<code>xpubench upload</code>. Same model, same maths, same starting weights "
                     "on every backend. Throughput is the median over repeats, ranked with its 95% "
                     "interval; speedups are against the best result on a CPU device of the same "
                     "model, variant, mode, precision, batch and world size.</footer></body>"
                     "</html>\n");
}

void lb_page_send(struct lb_response *res, int status)
{
    res->status = status;
    res->content_type = "text/html; charset=utf-8";
}

void lb_page_error(struct lb_response *res, int status, const char *message)
{
    xpb_text_free(&res->body);
    struct xpb_text *b = &res->body;
    char title[64];
    snprintf(title, sizeof title, "%d %s", status, lb_status_text(status));
    lb_page_begin(b, title);
    xpb_text_puts(b, "<h1>");
    xpb_html(b, title);
    xpb_text_puts(b, "</h1><div class=\"card error-box\"><p>");
    xpb_html(b, message);
    xpb_text_puts(b, "</p><p><a href=\"/\">Back to the rankings</a></p></div>");
    lb_page_end(b);
    lb_page_send(res, status);
}

void lb_page_internal(struct lb_response *res, const char *what)
{
    lb_page_error(res, 500, "This page cannot be shown now: try again in a moment.");
    lb_note_internal(res, what);
}

void lb_page_machine_title(struct xpb_text *b, const char *device, const char *cpu, const char *os)
{
    xpb_text_puts(b, " title=\"");
    xpb_html_cut(b, device[0] ? device : cpu, LB_TEXT_MAX);
    if (device[0] && strcmp(device, cpu) != 0) {
        xpb_text_puts(b, " \xC2\xB7 host ");
        xpb_html_cut(b, cpu, LB_TEXT_MAX);
    }
    xpb_text_puts(b, " \xC2\xB7 ");
    xpb_html_cut(b, os, LB_TEXT_MAX);
    xpb_text_puts(b, "\"");
}

void lb_page_submission_link(struct xpb_text *b, long long id)
{
    xpb_text_printf(b, "<a href=\"/submissions/%lld\">#%lld</a>", id, id);
}

const char *lb_page_kind_class(const char *device_kind)
{
    return !strcmp(device_kind, "cpu") ? "cpu" : !strcmp(device_kind, "unknown") ? "unk" : "acc";
}
