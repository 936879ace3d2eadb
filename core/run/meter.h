/* The energy meter of a measured stretch of a run (the timed steps, a time-to-accuracy run):
 * the backend's own (its energy_read, e.g. NVML) when it has one and it answers, else the
 * host's RAPL counters, else nothing, with the reason. */
#ifndef XPB_CORE_METER_H
#define XPB_CORE_METER_H

#include "machine/energy.h"
#include "run/session.h"

/* Energy of a measured stretch. */
typedef struct xpb_energy {
    const char *source;   /* "backend" (its energy_read, e.g. NVML), "rapl", NULL: none */
    double joules;        /* total; meaningful when source is not NULL */
    double package, dram; /* RAPL's split (0 for the backend's meter) */
    double seconds;       /* wall time between the two readings */
    char reason[320];     /* when source is NULL: why nothing was measured */
} xpb_energy;

typedef struct xpb_meter {
    const xpb_session *s;
    int kind; /* 0 none, 1 backend, 2 RAPL */
    xpb_rapl rapl;
    double backend_j;
    double rapl_uj[XPB_RAPL_MAX_DOMAINS];
    double t0;
} xpb_meter;

/* Takes the first reading; on failure the meter is off and e->reason says why. */
void xpb_meter_start(xpb_meter *m, const xpb_session *s, xpb_energy *e);

/* Takes the second reading and fills *e (source NULL and a reason when nothing was measured). */
void xpb_meter_stop(xpb_meter *m, xpb_energy *e);

#endif
