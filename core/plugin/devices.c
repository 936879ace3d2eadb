/* Listing a backend's devices (see devices.h). */
#include "plugin/devices.h"

#include <stdio.h>
#include <string.h>

#include "plugin/guard.h"

const char *xpb_device_kind_name(uint32_t kind)
{
    switch (kind) {
    case XPB_DEVICE_CPU:
        return "cpu";
    case XPB_DEVICE_GPU:
        return "gpu";
    case XPB_DEVICE_ACCELERATOR:
        return "accelerator";
    }
    return "unknown";
}

/* The backend's last_error(be) copied into `out` (every call below is recorded for the crash
 * line, guard.h). */
static void copy_last_error(char *out, size_t size, const xpb_backend_api *api,
                            const xpb_backend *be)
{
    xpb_guard_enter(api, "last_error");
    const char *why = api->last_error ? api->last_error(be) : NULL;
    snprintf(out, size, "%s", why ? why : "");
    xpb_guard_leave();
}

/* The reason of a failed open or device_count, from last_error(NULL). */
static void set_reason(xpb_device_list *out, const xpb_backend_api *api, xpb_status st)
{
    copy_last_error(out->reason, sizeof out->reason, api, NULL);
    if (!out->reason[0])
        snprintf(out->reason, sizeof out->reason, "%s", xpb_strerror(st));
}

/* ABI 1.0 backends: open device 0 and ask it. */
static xpb_status by_opening(xpb_device_list *out, const xpb_backend_api *api)
{
    xpb_backend *be = NULL;
    xpb_guard_enter(api, "open");
    xpb_status st = api->open(&be, 0);
    xpb_guard_leave();
    if (st != XPB_OK) {
        set_reason(out, api, st);
        return st == XPB_NO_DEVICE ? XPB_OK : st;
    }
    out->info[0].struct_size = sizeof out->info[0];
    xpb_guard_enter(api, "device_info");
    st = api->device_info(be, &out->info[0]);
    xpb_guard_leave();
    if (st == XPB_OK) {
        out->count = out->described = 1;
    } else {
        char why[400];
        copy_last_error(why, sizeof why, api, be);
        snprintf(out->reason, sizeof out->reason, "device_info: %s", why);
    }
    xpb_guard_enter(api, "close");
    api->close(be);
    xpb_guard_leave();
    return st;
}

xpb_status xpb_backend_devices(xpb_device_list *out, const xpb_plugin_descriptor *d)
{
    memset(out, 0, sizeof *out);
    const xpb_backend_api *api = d->api;
    xpb_status (*count)(uint32_t *) = XPB_MEMBER_OR(api, xpb_backend_api, device_count, NULL);
    xpb_status (*describe)(uint32_t, xpb_device_info *) =
        XPB_MEMBER_OR(api, xpb_backend_api, describe_device, NULL);
    if (!count || !describe)
        return by_opening(out, api);
    uint32_t n = 0;
    xpb_guard_enter(api, "device_count");
    xpb_status st = count(&n);
    xpb_guard_leave();
    if (st != XPB_OK || n == 0) {
        set_reason(out, api, st == XPB_OK ? XPB_NO_DEVICE : st);
        return st == XPB_NO_DEVICE || st == XPB_OK ? XPB_OK : st;
    }
    out->count = n;
    for (uint32_t i = 0; i < n && i < XPB_DEVICES_MAX; i++) {
        out->info[i].struct_size = sizeof out->info[i];
        xpb_guard_enter(api, "describe_device");
        st = describe(i, &out->info[i]);
        xpb_guard_leave();
        if (st != XPB_OK) {
            char why[400];
            copy_last_error(why, sizeof why, api, NULL);
            snprintf(out->reason, sizeof out->reason, "describe_device(%u): %s", i, why);
            return st;
        }
        out->described = i + 1;
    }
    return XPB_OK;
}
