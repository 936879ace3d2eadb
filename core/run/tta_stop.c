/* The early stop of a time-to-accuracy run (see tta_stop.h). */
#include "run/tta_stop.h"

#include <math.h>

/* An evaluation of a network that answers the same whatever its input. */
static int constant_output(const xpb_tta_point *p, uint32_t classes)
{
    double chance = 1.0 / classes, uniform = log((double)classes);
    return p->accuracy <= chance + 0.01 && fabs(p->loss - uniform) <= 0.03 * uniform;
}

const char *xpb_tta_stop_reason(const xpb_tta_run *r, uint32_t classes)
{
    if (!r->n_curve)
        return NULL;
    const xpb_tta_point *last = &r->curve[r->n_curve - 1];
    if (!isfinite(last->loss))
        return "diverged";
    if (classes < 2)
        return NULL;
    size_t first = r->n_curve;
    while (first > 0 && constant_output(&r->curve[first - 1], classes))
        first--;
    if (first < r->n_curve && last->epochs - r->curve[first].epochs >= XPB_TTA_STALL_EPOCHS)
        return "stalled";
    return NULL;
}
