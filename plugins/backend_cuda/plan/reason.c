/* The no-device sentences (reason.h). The CUDA runtime folds "no driver at all" and "a driver
 * too old" into one error, cudaErrorInsufficientDriver; device.c tells them apart by trying to
 * load libcuda.so.1 itself and by the driver version the runtime reports (0 without one). */
#include "plan/reason.h"

#include <stdio.h>

/* CUDA 13 needs the R580 driver branch or newer (the CUDA Toolkit release notes' table of
 * minimum driver versions); older runtimes name their own minimum in the same table. */
static void version(char *out, size_t size, int v)
{
    snprintf(out, size, "%d.%d", v / 1000, (v % 1000) / 10);
}

void cux_no_device_reason(char *out, size_t size, const cux_probe *p)
{
    char rt[16], drv[16];
    version(rt, sizeof rt, p->runtime_version);
    version(drv, sizeof drv, p->driver_version);
    const char *need = p->runtime_version >= 13000 ? " (CUDA 13 needs driver 580 or newer)" : "";
    if (!p->libcuda_found) {
        snprintf(out, size, "no NVIDIA driver (%s); install the NVIDIA driver%s",
                 p->libcuda_error && p->libcuda_error[0]
                     ? p->libcuda_error
                     : "libcuda.so.1 is not on the loader's path",
                 need);
        return;
    }
    switch (p->status) {
    case CUX_CUDA_SUCCESS:
        if (p->count > 0)
            snprintf(out, size, "%d CUDA devices", p->count);
        else
            snprintf(out, size, "no CUDA-capable GPU found (the driver reports 0 devices)");
        return;
    case CUX_CUDA_INSUFFICIENT_DRIVER:
        if (p->driver_version > 0)
            snprintf(out, size,
                     "the NVIDIA driver supports CUDA %s, older than the CUDA %s runtime this "
                     "plugin was built with: update the driver%s",
                     drv, rt, need);
        else
            snprintf(out, size,
                     "no usable NVIDIA driver: libcuda.so.1 loads but reports no CUDA version%s",
                     need);
        return;
    case CUX_CUDA_STUB_LIBRARY:
        snprintf(out, size,
                 "libcuda.so.1 is the CUDA toolkit's stub library, not a driver (take the "
                 "toolkit's lib64/stubs folder off LD_LIBRARY_PATH, or install the driver)");
        return;
    case CUX_CUDA_NO_DEVICE:
        snprintf(out, size,
                 "no CUDA-capable GPU found (driver for CUDA %s installed; check nvidia-smi and "
                 "CUDA_VISIBLE_DEVICES)",
                 drv);
        return;
    case CUX_CUDA_SYSTEM_DRIVER_MISMATCH:
        snprintf(out, size,
                 "the NVIDIA kernel module and libcuda.so.1 are different versions (reboot after a "
                 "driver update, or reinstall the driver)");
        return;
    case CUX_CUDA_COMPAT_NOT_SUPPORTED:
        snprintf(out, size,
                 "the CUDA forward-compatibility driver in use does not support this GPU");
        return;
    case CUX_CUDA_DEVICES_UNAVAILABLE:
        snprintf(out, size,
                 "every CUDA device is busy or unavailable (exclusive-process compute mode?)");
        return;
    default:
        snprintf(out, size, "cudaGetDeviceCount failed: %s (%d): %s",
                 p->status_name ? p->status_name : "?", p->status,
                 p->status_text ? p->status_text : "?");
        return;
    }
}

void cux_bad_index_reason(char *out, size_t size, uint32_t index, int count)
{
    if (count <= 0)
        snprintf(out, size, "no device %u: this machine has no CUDA device", index);
    else if (count == 1)
        snprintf(out, size, "no device %u: this machine has 1 CUDA device (0)", index);
    else
        snprintf(out, size, "no device %u: this machine has %d CUDA devices (0..%d)", index, count,
                 count - 1);
}
