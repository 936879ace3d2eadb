/* Filters from the query string (see lb_filter.h). */
#include "service/lb_filter.h"

#include <string.h>

int lb_filter_from_query(struct lb_filter *f, const struct lb_request *req, const char **bad)
{
    memset(f, 0, sizeof *f);
    static const char *const names[] = {"model",     "variant", "mode",
                                        "precision", "backend", "submitter"};
    const char **slots[] = {&f->model,     &f->variant, &f->mode,
                            &f->precision, &f->backend, &f->submitter};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *v = lb_query(req, names[i]);
        if (v && !*v)
            continue; /* an empty menu choice means any */
        if (v && !lb_is_token_text(v, LB_NAME_MAX)) {
            *bad = names[i];
            return 0;
        }
        *slots[i] = v;
    }
    long long batch = lb_query_count(req, "batch", 0, 1000000000);
    long long world = lb_query_count(req, "world_size", 0, 1000000);
    if (batch < 0 || world < 0) {
        *bad = batch < 0 ? "batch" : "world_size";
        return 0;
    }
    f->batch = batch;
    f->world_size = world;
    return 1;
}
