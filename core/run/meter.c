/* The energy meter of a measured stretch of a run (see meter.h). */
#include "run/meter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "plugin/guard.h"

/* The backend's energy_read, recorded for the crash line (plugin/guard.h). */
static xpb_status energy_read(const xpb_session *s, double *joules)
{
    xpb_guard_enter(s->api, "energy_read");
    xpb_status st = s->api->energy_read(s->backend, joules);
    xpb_guard_leave();
    return st;
}

void xpb_meter_start(xpb_meter *m, const xpb_session *s, xpb_energy *e)
{
    memset(m, 0, sizeof *m);
    m->s = s;
    xpb_status (*read)(xpb_backend *, double *) =
        XPB_MEMBER_OR(s->api, xpb_backend_api, energy_read, NULL);
    m->t0 = xpb_now();
    if (read && energy_read(s, &m->backend_j) == XPB_OK) {
        m->kind = 1;
        return;
    }
    if (xpb_rapl_open(&m->rapl, getenv("XPB_POWERCAP_ROOT")) == 0 &&
        xpb_rapl_sample(&m->rapl, m->rapl_uj) == 0) {
        m->kind = 2;
        return;
    }
    if (read) {
        xpb_guard_enter(s->api, "last_error");
        snprintf(e->reason, sizeof e->reason, "the backend's meter failed: %.200s; host: %.80s",
                 s->api->last_error(s->backend), m->rapl.reason);
        xpb_guard_leave();
    } else
        snprintf(e->reason, sizeof e->reason, "%s", m->rapl.reason);
}

void xpb_meter_stop(xpb_meter *m, xpb_energy *e)
{
    e->seconds = xpb_now() - m->t0;
    if (m->kind == 1) {
        double j;
        if (energy_read(m->s, &j) == XPB_OK && j >= m->backend_j) {
            e->source = "backend";
            e->joules = j - m->backend_j;
        } else {
            xpb_guard_enter(m->s->api, "last_error");
            snprintf(e->reason, sizeof e->reason, "the backend's meter failed at the end: %.200s",
                     m->s->api->last_error(m->s->backend));
            xpb_guard_leave();
        }
    } else if (m->kind == 2) {
        double uj[XPB_RAPL_MAX_DOMAINS];
        if (xpb_rapl_sample(&m->rapl, uj) == 0) {
            e->source = "rapl";
            e->joules = xpb_rapl_joules(&m->rapl, m->rapl_uj, uj, &e->package, &e->dram);
        } else {
            snprintf(e->reason, sizeof e->reason, "a RAPL counter could not be read at the end");
        }
    }
    if (e->source && !(e->joules > 0)) { /* a meter that did not move measured nothing */
        snprintf(e->reason, sizeof e->reason, "the %s meter did not advance", e->source);
        e->source = NULL;
    }
}
