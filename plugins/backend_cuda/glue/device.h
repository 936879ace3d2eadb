/* Devices: how many, why none, what each is (device.c). */
#ifndef XPB_CUX_DEVICE_H
#define XPB_CUX_DEVICE_H

#include <stddef.h>

#include "glue/exe.h"

/* The number of CUDA devices; 0 with a sentence in `reason` (size bytes) when there is none
 * (reason.h). Cheap: no context is created. */
int cux_probe_devices(char *reason, size_t size);
/* Fills *info for device `index` (properties, versions, peaks) without opening it. `nvml` may
 * be NULL (no driver version string from NVML then). XPB_NO_DEVICE with `reason` filled when
 * the index does not exist. */
xpb_status cux_describe(int index, xpb_device_info *info, struct cux_nvml *nvml, char *reason,
                        size_t size);
/* Reads the properties open() keeps (name, compute capability, SMs, clock, memory). */
xpb_status cux_read_properties(xpb_backend *be);

#endif
