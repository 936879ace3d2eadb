/* How the rankings are made and what the service accepts, stated on the page (see lb_pages.h).
 * docs/leaderboard.md ("Rankings" and "Bounds") says the same at more length. */
#include "pages/lb_page_table.h"
#include "pages/lb_pages.h"

/* "64 MiB", "4 MiB", "512 KiB" */
static void bytes(struct xpb_text *b, size_t n)
{
    if (n >= (1u << 20) && n % (1u << 20) == 0)
        xpb_text_printf(b, "%zu MiB", n >> 20);
    else if (n >= 1024 && n % 1024 == 0)
        xpb_text_printf(b, "%zu KiB", n >> 10);
    else
        xpb_text_printf(b, "%zu bytes", n);
}

static void ranks(struct xpb_text *b)
{
    xpb_text_puts(
        b, "<h3>How ranks are decided</h3><ul>"
           "<li>A table holds one model, variant, mode, precision and <b>world size</b>: results "
           "that used a different number of ranks are never ranked together.</li>"
           "<li>Rows are ordered by median throughput. A result's rank is 1 + the number of "
           "results above it whose <b>95% confidence interval</b> lies entirely above its own. "
           "Results whose intervals overlap cannot be told apart, so they share a rank (shown "
           "as =2). The interval is the one the results file carries (the geometric mean of the "
           "repeats' throughputs, Student's t); a result without one (a single repeat, or a "
           "version-1 file) counts as the point of its median and is marked <i>no "
           "interval</i>.</li>"
           "<li><b>vs best CPU</b> is the throughput divided by the best result on a device of "
           "kind <i>cpu</i> with the same model, variant, mode, precision, batch and world "
           "size. The kind is what the results file says (<code>device.kind</code>, version 2); "
           "version-1 files do not say, so their kind shows as <i>unknown</i>: they are ranked "
           "like any other result but are never the CPU baseline. Nothing is inferred from a "
           "backend's name.</li>"
           "<li><b>Time to accuracy</b> (results files of version 3, mode <i>tta</i>) is never "
           "ranked here, a step rate not being what it measures: it has a <a href=\"/tta\">"
           "board of its own</a>, one table per model, variant, dataset and target accuracy, "
           "ranked by the Olympic mean of the time to the target (lower first), the results "
           "that did not reach it last.</li></ul>");
}

static void shown(struct xpb_text *b)
{
    xpb_text_printf(
        b,
        "<h3>What the page shows</h3><ul>"
        "<li>Tables with the most submitters first; among as many, each submitter's first "
        "table before anyone's second, then the latest: one submission of many new models "
        "takes no more of the first page than another submitter's table. %d tables per "
        "page; each shows %d rows at a time, "
        "down to row %d (the API lists every result). A submitter's results count at most %d "
        "times in a table (the fastest): one submitter cannot flood a ranking; filter by "
        "submitter to see all of theirs.</li>"
        "<li>Menus list at most 200 values. Whenever something is left out, the page says "
        "so.</li></ul>",
        LB_TABLES_PER_PAGE, LB_TABLE_ROWS, LB_TABLE_MAX_OFFSET + LB_TABLE_ROWS,
        LB_TABLE_PER_SUBMITTER);
}

static void accepted(struct xpb_text *b, const struct lb_app *app)
{
    xpb_text_puts(b, "<h3>What the service accepts, and why</h3><ul><li>Uploads of at most ");
    bytes(b, app->max_body);
    xpb_text_printf(b,
                    ", with a known bearer token, checked before the body is read. A document "
                    "nests at most %d levels and holds at most %d values and keys (a results file "
                    "nests 7 deep, 8 with a time-to-accuracy curve, and holds a few thousand; "
                    "these bound the memory a parse takes), "
                    "and at most %zu runs.</li>",
                    LB_MAX_DEPTH, LB_MAX_NODES, app->submit.max_runs);
    if (app->submit.max_per_day > 0)
        xpb_text_printf(b, "<li>At most %lld new submissions per token in any 24 hours",
                        app->submit.max_per_day);
    else
        xpb_text_puts(b, "<li>No daily limit of submissions per token");
    if (app->bounds.rate_per_minute > 0)
        xpb_text_printf(b, ", and %g uploads a minute (%g at once)", app->bounds.rate_per_minute,
                        app->bounds.rate_burst);
    xpb_text_puts(b, ": one token cannot fill the board.</li>"
                     "<li>Plausible numbers only: throughput at most 1e9 samples/s, 1e19 FLOP/s, "
                     "1e9 samples/J, batch 2<sup>24</sup>, 65,536 threads or ranks; for time to "
                     "accuracy, accuracies from 0 to 1, times to 1e7 s, energies to 1e14 J, "
                     "epochs to 1e6, and scores that agree with their runs. No machine comes "
                     "near; a value beyond is not a measurement and would top every table.</li>"
                     "<li>Answers of at most ");
    bytes(b, lb_answer_limit(app));
    xpb_text_printf(b,
                    "; submitted documents are served as stored, compact. Rankings pages are kept "
                    "a moment once built; a page filtered by backend, batch or submitter is built "
                    "apart from every other request, at most %d at once per service process and "
                    "%d more waiting up to %g s (beyond, 503): whatever pages a crowd asks for, "
                    "the service keeps answering everything else.",
                    LB_RENDERS, LB_RENDER_QUEUE, LB_RENDER_WAIT);
    if (app->bounds.upload_memory) {
        xpb_text_puts(b, " Upload bodies being received hold at most ");
        bytes(b, app->bounds.upload_memory);
        xpb_text_puts(b, " together (more waits: 503 with Retry-After).");
    }
    if (app->bounds.answer_memory) {
        xpb_text_puts(b, " Answers being sent hold at most ");
        bytes(b, app->bounds.answer_memory);
        xpb_text_puts(b, " together, large ones three quarters of it (more waits: 503 with "
                         "Retry-After): clients that do not read cannot grow the service.");
    }
    xpb_text_puts(b, "</li>");
    if (app->bounds.max_connections)
        xpb_text_printf(b,
                        "<li>At most %u connections at once (%u per address); when full, the "
                        "oldest idle connection makes room for a new client. A request's head "
                        "must arrive within %g s of its connection (or of the previous answer), "
                        "head and body within %g s: slow clients cannot hold the service.</li>",
                        app->bounds.max_connections, app->bounds.max_per_ip,
                        app->bounds.head_timeout, app->bounds.request_timeout);
    xpb_text_puts(b, "</ul>");
}

void lb_page_rules(struct xpb_text *b, const struct lb_app *app)
{
    xpb_text_puts(b, "<section class=\"card rules\" id=\"rules\"><header><h2>How this board "
                     "works</h2></header>");
    ranks(b);
    shown(b);
    accepted(b, app);
    xpb_text_puts(b, "</section>");
}
