/* Ranks that respect measurement noise. Two results whose 95% confidence intervals overlap
 * cannot be told apart, so neither outranks the other: a result's rank is one more than the
 * number of results listed above it (faster median) whose interval lies entirely above its
 * own. Results that cannot be told apart from each other share a rank. A result without an
 * interval (a version-1 document, or a single repeat) counts as the point of its median: it is
 * ranked by its median, and the page marks it as having no interval. */
#ifndef LB_RANK_H
#define LB_RANK_H

#include <stddef.h>

#include "store/lb_store.h"

struct lb_ranked {
    int rank;   /* 1-based */
    int shared; /* another result of the table has the same rank */
    int has_interval;
};

/* Ranks rows[0..n) (ordered fastest median first) into out[0..n). */
void lb_rank(struct lb_ranked *out, const struct lb_run_row *rows, size_t n);

#endif
