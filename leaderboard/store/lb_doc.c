/* The typed view with the leaderboard's defaults (see lb_doc.h). */
#include "store/lb_doc.h"

#include <math.h>

const char *lb_doc_str(const char *s)
{
    return s ? s : "";
}

double lb_doc_num(int64_t v)
{
    return v == XPB_RESULTS_NO_INT ? NAN : (double)v;
}

long long lb_doc_int(int64_t v, long long absent)
{
    return v == XPB_RESULTS_NO_INT ? absent : (long long)v;
}

int lb_doc_true(int v)
{
    return v == 1;
}

const char *lb_doc_kind(const struct xpb_results_run *run, int64_t schema_version)
{
    const char *kind = schema_version >= 2 ? run->device.kind : NULL;
    return kind && *kind ? kind : "unknown";
}
