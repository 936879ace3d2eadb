/* "fake_meter": the reference backend (loaded from WRAPPED_INNER) with an energy meter
 * whose readings the test decides, so that the host's energy maths (joules over the timed
 * steps, average watts, samples per joule) can be checked end to end on a machine without a
 * readable meter. $XPB_FAKE_METER says what the meter reads, in joules since the backend was
 * opened:
 *   per_run=J    J joules for every run() call (one per phase of a step): the joules of the
 *                timed steps are then exactly steps x phases x J
 *   watts=W      W joules per second of monotonic time: the average power is W
 *   both, comma-separated, add up; "fail" makes every reading fail (the run then says why
 *   energy was not measured). Unset: per_run=0.5. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wrapped_backend.h"

static unsigned long long runs; /* run() calls since load */
static double opened_at;        /* monotonic seconds at open */
static int failed;              /* the last reading failed */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static xpb_status m_open(xpb_backend **out, uint32_t device)
{
    opened_at = now();
    return inner->open(out, device);
}

static const char *m_last_error(const xpb_backend *be)
{
    return failed ? "fake_meter: the meter is unplugged (XPB_FAKE_METER=fail)"
                  : inner->last_error(be);
}

static xpb_status m_run(xpb_executable *exe, uint32_t phase)
{
    runs++;
    return wrapped_run(exe, phase);
}

/* The meter: joules since open, as $XPB_FAKE_METER says. */
static xpb_status m_energy_read(xpb_backend *be, double *joules)
{
    (void)be;
    const char *spec = getenv("XPB_FAKE_METER");
    double per_run = spec ? 0 : 0.5, watts = 0;
    failed = spec && strcmp(spec, "fail") == 0;
    if (failed)
        return XPB_INTERNAL;
    for (const char *p = spec; p && *p; p += strcspn(p, ","), p += *p == ',') {
        if (strncmp(p, "per_run=", 8) == 0)
            per_run = strtod(p + 8, NULL);
        else if (strncmp(p, "watts=", 6) == 0)
            watts = strtod(p + 6, NULL);
    }
    *joules = per_run * (double)runs + watts * (now() - opened_at);
    return XPB_OK;
}

static xpb_plugin_descriptor descriptor = {
    .struct_size = sizeof(xpb_plugin_descriptor),
    .abi_major = XPB_ABI_MAJOR,
    .abi_minor = XPB_ABI_MINOR,
    .kind = XPB_PLUGIN_BACKEND,
    .name = "fake_meter",
    .version = "1.0.0",
    .description = "cpu_ref with an energy meter the test controls (tests only)",
    .api = &wrapped_api,
    .opset = XPB_OPSET_VERSION,
};

XPB_PLUGIN_QUERY
{
    wrapped_api.open = m_open;
    wrapped_api.last_error = m_last_error;
    wrapped_api.run = m_run;
    wrapped_api.memory_stats = wrapped_memory_stats;
    wrapped_api.energy_read = m_energy_read;
    xpb_status st = wrapped_query(out, &descriptor, host_major, host_minor, host);
    if (st == XPB_OK)
        descriptor.caps = inner_desc->caps; /* what cpu_ref honours, this backend honours */
    return st;
}
