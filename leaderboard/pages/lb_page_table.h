/* One ranking table of the leaderboard page (lb_page_board.c): the finished runs of one model,
 * variant, mode, precision and world size, ranked by throughput with noise-aware ranks
 * (lb_rank.h), with a chart of the fastest, and a line saying what the table does not show. */
#ifndef LB_PAGE_TABLE_H
#define LB_PAGE_TABLE_H

#include <stddef.h>

#include "db/lb_db.h"
#include "render/text.h"
#include "store/lb_store.h"

/* Tables a page shows, rows a table shows at once, runs of one submitter it ranks (all with a
 * submitter filter), and how deep it pages (offsets beyond are refused: a table is for the top of a
 * ranking; the API lists everything). */
#define LB_TABLES_PER_PAGE 10
#define LB_TABLE_ROWS 25
#define LB_TABLE_PER_SUBMITTER 10
#define LB_TABLE_MAX_OFFSET 1000

enum lb_sort_key { SORT_THROUGHPUT, SORT_STEP, SORT_SPEEDUP, SORT_ENERGY, SORT_BATCH, SORT_DATE };
#define LB_SORT_KEYS 6

/* What the page shows, from its query string. */
struct lb_board_view {
    struct lb_filter filter;
    enum lb_sort_key key;
    int desc;
    long long page;   /* of tables, 1-based */
    long long offset; /* rows skipped in each table */
};

/* The sort key named `name` ("throughput", "step", ...); SORT_THROUGHPUT for an unknown one. */
enum lb_sort_key lb_sort_key_named(const char *name);
/* Whether a first click on key k sorts it descending. */
int lb_sort_key_desc_first(enum lb_sort_key k);

/* The page's query string for view v with filter f (no leading '?', URL-encoded, not yet
 * HTML-escaped); page and offset 0 are left out. */
void lb_board_query(struct xpb_text *q, const struct lb_filter *f, const struct lb_board_view *v,
                    long long page, long long offset);

/* Appends the section of group g. When its rows cannot be read, the section says so (not why)
 * and the error is returned (for the log). */
xpb_status lb_page_table(struct xpb_text *b, struct lb_db *db, const struct lb_group *g,
                         const struct lb_board_view *v, xpb_err *err);

/* The cells a ranked row shares with the time-to-accuracy board's (lb_page_tta.c), every text
 * escaped: the machine (device, its kind, host CPU and OS), the backend (with fusion, threads and
 * verification), and the submission with its submitter and day. */
void lb_page_machine_cell(struct xpb_text *b, const struct lb_run_row *r);
void lb_page_backend_cell(struct xpb_text *b, const struct lb_run_row *r);
void lb_page_submitted_cell(struct xpb_text *b, const struct lb_run_row *r);

/* A table's section opened, as both boards open theirs: `<section class="css_class" id="id">`
 * and the head's title (model / variant, escaped; id escaped, NULL: empty); then the caller's
 * pills, then lb_page_section_count: "N results from M submitters", which closes the head. */
void lb_page_section_open(struct xpb_text *b, const char *css_class, const char *id,
                          const char *model, const char *variant);
void lb_page_section_count(struct xpb_text *b, long long total, long long n_submitters);

#endif
