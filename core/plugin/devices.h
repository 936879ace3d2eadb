/* The devices of a backend, as `xpubench list` and `info` show them: through the backend's
 * device_count/describe_device (ABI 1.1), which need no opened device, or for an older backend
 * by opening device 0. When there is none, the backend's reason. */
#ifndef XPB_CORE_DEVICES_H
#define XPB_CORE_DEVICES_H

#include <xpubench/xpubench.h>

#define XPB_DEVICES_MAX 16 /* devices listed per backend; more are counted, not described */

typedef struct xpb_device_list {
    uint32_t count;                        /* devices the backend has */
    uint32_t described;                    /* entries of info[] filled (<= XPB_DEVICES_MAX) */
    xpb_device_info info[XPB_DEVICES_MAX]; /* what each is (struct_size set) */
    char reason[512]; /* when count is 0: why there is no device, from the backend */
} xpb_device_list;

/* Fills *out for backend `d`. Returns XPB_OK (count may be 0, then reason is set) or the
 * status of a backend call that failed for another reason than "no device" (reason set). */
xpb_status xpb_backend_devices(xpb_device_list *out, const xpb_plugin_descriptor *d);

/* "cpu", "gpu", "accelerator" or "unknown": the results' spelling of an xpb_device_kind;
 * static. */
const char *xpb_device_kind_name(uint32_t kind);

#endif
