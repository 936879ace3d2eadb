/* Host energy meter: Intel RAPL package domains under /sys/class/powercap, when readable. */
#ifndef XPB_CORE_ENERGY_H
#define XPB_CORE_ENERGY_H

/* Cumulative package energy in joules into *joules; 0 on success, -1 when there is no
 * readable RAPL domain (then the run reports energy as not measured). */
int xpb_rapl_read(double *joules);

/* Joules between two readings, accounting for one counter wrap. */
double xpb_rapl_delta(double before, double after);

#endif
