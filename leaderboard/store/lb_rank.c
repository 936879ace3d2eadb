/* Noise-aware ranks (see lb_rank.h). */
#include "store/lb_rank.h"

#include <math.h>

static double low(const struct lb_run_row *r)
{
    return isnan(r->ci_low) ? r->throughput : r->ci_low;
}

static double high(const struct lb_run_row *r)
{
    return isnan(r->ci_high) ? r->throughput : r->ci_high;
}

void lb_rank(struct lb_ranked *out, const struct lb_run_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int above = 0;
        for (size_t j = 0; j < i; j++)
            above += low(&rows[j]) > high(&rows[i]);
        out[i].rank = 1 + above;
        out[i].has_interval = !isnan(rows[i].ci_low) && !isnan(rows[i].ci_high);
        out[i].shared = 0;
    }
    /* a wide interval below a narrow one can rank higher than it (it cannot be told apart from
     * results the narrow one is below), so equal ranks need not be neighbours */
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (out[i].rank == out[j].rank)
                out[i].shared = out[j].shared = 1;
}
