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

static void m_close(xpb_backend *be)
{
    inner->close(be);
}

static const char *m_last_error(const xpb_backend *be)
{
    return failed ? "fake_meter: the meter is unplugged (XPB_FAKE_METER=fail)"
                  : inner->last_error(be);
}

static xpb_status m_device_info(xpb_backend *be, xpb_device_info *out)
{
    return inner->device_info(be, out);
}

static xpb_status m_compile(xpb_executable **out, xpb_backend *be, const xpb_program *p,
                            const xpb_compile_options *o)
{
    return inner->compile(out, be, p, o);
}

static void m_destroy(xpb_executable *exe)
{
    inner->destroy(exe);
}

static const char *m_exe_last_error(const xpb_executable *exe)
{
    return inner->exe_last_error(exe);
}

static xpb_status m_write(xpb_executable *exe, uint32_t t, const void *data, size_t bytes)
{
    return inner->write(exe, t, data, bytes);
}

static xpb_status m_read(xpb_executable *exe, uint32_t t, void *data, size_t bytes)
{
    return inner->read(exe, t, data, bytes);
}

static xpb_status m_run(xpb_executable *exe, uint32_t phase)
{
    runs++;
    return inner->run(exe, phase);
}

static xpb_status m_synchronize(xpb_executable *exe)
{
    return inner->synchronize(exe);
}

static xpb_status m_memory_stats(xpb_executable *exe, xpb_memory_stats *out)
{
    return inner->memory_stats(exe, out);
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

static xpb_backend_api api = {
    .struct_size = sizeof(xpb_backend_api),
    .open = m_open,
    .close = m_close,
    .last_error = m_last_error,
    .device_info = m_device_info,
    .compile = m_compile,
    .destroy = m_destroy,
    .exe_last_error = m_exe_last_error,
    .write = m_write,
    .read = m_read,
    .run = m_run,
    .synchronize = m_synchronize,
    .memory_stats = m_memory_stats,
    .energy_read = m_energy_read,
};

static xpb_plugin_descriptor descriptor = {
    .struct_size = sizeof(xpb_plugin_descriptor),
    .abi_major = XPB_ABI_MAJOR,
    .abi_minor = XPB_ABI_MINOR,
    .kind = XPB_PLUGIN_BACKEND,
    .name = "fake_meter",
    .version = "1.0.0",
    .description = "cpu_ref with an energy meter the test controls (tests only)",
    .api = &api,
    .opset = XPB_OPSET_VERSION,
};

XPB_PLUGIN_QUERY
{
    *out = &descriptor;
    if (host_major != XPB_ABI_MAJOR)
        return XPB_INCOMPATIBLE;
    const xpb_plugin_descriptor *d = NULL;
    if (wrapped_load_inner(&d, host_major, host_minor, host) != XPB_OK)
        return XPB_INTERNAL;
    descriptor.caps = d->caps; /* what cpu_ref honours, this backend honours */
    return XPB_OK;
}
