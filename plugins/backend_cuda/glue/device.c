/* Devices: how many there are and why there are none (the CUDA runtime's answer, made precise
 * by looking for libcuda.so.1 ourselves: the runtime reports "no driver" and "driver too old"
 * with one error), what each one is, and its peak FLOP/s. Nothing here creates a CUDA context:
 * device properties and library versions are queries of the driver and of the libraries. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "glue/device.h"
#include "glue/energy.h"
#include "glue/nccl.h"
#include "glue/status.h"
#include "plan/datasheet.h"
#include "plan/engines.h"
#include "plan/peak.h"
#include "plan/reason.h"
#include "plan/target.h"

/* reason.h restates these so that it needs no CUDA header. */
_Static_assert(CUX_CUDA_STUB_LIBRARY == (int)cudaErrorStubLibrary, "cudaErrorStubLibrary");
_Static_assert(CUX_CUDA_INSUFFICIENT_DRIVER == (int)cudaErrorInsufficientDriver,
               "cudaErrorInsufficientDriver");
_Static_assert(CUX_CUDA_DEVICES_UNAVAILABLE == (int)cudaErrorDevicesUnavailable,
               "cudaErrorDevicesUnavailable");
_Static_assert(CUX_CUDA_NO_DEVICE == (int)cudaErrorNoDevice, "cudaErrorNoDevice");
_Static_assert(CUX_CUDA_SYSTEM_DRIVER_MISMATCH == (int)cudaErrorSystemDriverMismatch,
               "cudaErrorSystemDriverMismatch");
_Static_assert(CUX_CUDA_COMPAT_NOT_SUPPORTED == (int)cudaErrorCompatNotSupportedOnDevice,
               "cudaErrorCompatNotSupportedOnDevice");

/* 1 when the cuDNN the loader found can run this build (plan/engines.h), else 0 with the
 * sentence in reason: checked where devices are counted, so that a wrong cuDNN is a "no device"
 * reason of list, run and conformance instead of a failure deep in the first compile. */
static int cudnn_usable(char *reason, size_t size)
{
    int rt = 0;
    if (cudaRuntimeGetVersion(&rt) != cudaSuccess) {
        (void)cudaGetLastError();
        rt = CUDART_VERSION;
    }
    return cux_cudnn_refusal(reason, size, cudnnGetVersion(), cudnnGetCudartVersion(), rt,
                             CUDNN_VERSION) == 0;
}

int cux_probe_devices(char *reason, size_t size)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    (void)cudaGetLastError(); /* a failed probe must not linger as the thread's last error */
    if (e == cudaSuccess && n > 0)
        return cudnn_usable(reason, size) ? n : 0;
    cux_probe p;
    memset(&p, 0, sizeof p);
    char dlerr[256] = "";
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h) {
        p.libcuda_found = 1;
        dlclose(h);
    } else {
        const char *d = dlerror();
        snprintf(dlerr, sizeof dlerr, "%s", d ? d : "");
        p.libcuda_error = dlerr;
    }
    p.status = (int)e;
    p.status_name = cudaGetErrorName(e);
    p.status_text = cudaGetErrorString(e);
    p.count = n;
    if (cudaDriverGetVersion(&p.driver_version) != cudaSuccess)
        p.driver_version = 0;
    if (cudaRuntimeGetVersion(&p.runtime_version) != cudaSuccess)
        p.runtime_version = CUDART_VERSION;
    (void)cudaGetLastError();
    cux_no_device_reason(reason, size, &p);
    return 0;
}

/* "13.0" from 13000. */
static void cuda_version(char *out, size_t size, int v)
{
    snprintf(out, size, "%d.%d", v / 1000, (v % 1000) / 10);
}

/* "cuDNN 9.19.0, cuBLASLt 13.1.0, CUDA runtime 13.0 (static), NCCL 2.28.9". */
static void library_string(char *out, size_t size)
{
    char nccl[64];
    cux_nccl_versions(nccl, sizeof nccl);
    size_t dnn = cudnnGetVersion(), lt = cublasLtGetVersion();
    int rt = 0;
    if (cudaRuntimeGetVersion(&rt) != cudaSuccess)
        rt = CUDART_VERSION;
    char rts[16];
    cuda_version(rts, sizeof rts, rt);
    snprintf(out, size, "cuDNN %zu.%zu.%zu, cuBLASLt %zu.%zu.%zu, CUDA runtime %s (static), %s",
             dnn / 10000, (dnn % 10000) / 100, dnn % 100, lt / 10000, (lt % 10000) / 100, lt % 100,
             rts, nccl);
}

xpb_status cux_describe(int index, xpb_device_info *info, struct cux_nvml *nvml, char *reason,
                        size_t size)
{
    int n = cux_probe_devices(reason, size);
    if (n == 0)
        return XPB_NO_DEVICE;
    if (index < 0 || index >= n) {
        cux_bad_index_reason(reason, size, (uint32_t)index, n);
        return XPB_NO_DEVICE;
    }
    struct cudaDeviceProp prop;
    int clock = 0;
    cudaError_t e = cudaGetDeviceProperties(&prop, index);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&clock, cudaDevAttrClockRate, index);
    if (e != cudaSuccess) {
        snprintf(reason, size, "device %d: cudaGetDeviceProperties: %s: %s", index,
                 cudaGetErrorName(e), cudaGetErrorString(e));
        (void)cudaGetLastError();
        return XPB_DEVICE_ERROR;
    }
    cux_target target = {prop.major, prop.minor};
    uint32_t precisions = cux_target_precisions(&target);
    double peak[XPB_PEAK_SLOTS];
    cux_peak_flops(prop.major, prop.minor, prop.multiProcessorCount, clock, peak);
    if (XPB_HAS_MEMBER(info, xpb_device_info, name))
        snprintf(info->name, sizeof info->name, "%.96s (sm_%d%d, %d SMs)", prop.name, prop.major,
                 prop.minor, prop.multiProcessorCount);
    if (XPB_HAS_MEMBER(info, xpb_device_info, driver)) {
        int drv = 0, rt = 0;
        char d[16] = "?", r[16] = "?", nv[64] = "";
        if (cudaDriverGetVersion(&drv) == cudaSuccess)
            cuda_version(d, sizeof d, drv);
        if (cudaRuntimeGetVersion(&rt) == cudaSuccess)
            cuda_version(r, sizeof r, rt);
        if (nvml && cux_nvml_driver(nvml, nv, sizeof nv) == 0)
            snprintf(info->driver, sizeof info->driver, "driver %s (CUDA %s), runtime %s", nv, d,
                     r);
        else
            snprintf(info->driver, sizeof info->driver, "driver for CUDA %s, runtime %s", d, r);
    }
    if (XPB_HAS_MEMBER(info, xpb_device_info, libraries))
        library_string(info->libraries, sizeof info->libraries);
    if (XPB_HAS_MEMBER(info, xpb_device_info, precisions))
        info->precisions = precisions;
    if (XPB_HAS_MEMBER(info, xpb_device_info, threads))
        info->threads = 0;
    if (XPB_HAS_MEMBER(info, xpb_device_info, memory_bytes))
        info->memory_bytes = (uint64_t)prop.totalGlobalMem;
    if (XPB_HAS_MEMBER(info, xpb_device_info, peak_flops))
        for (int p = 0; p < XPB_PEAK_SLOTS; p++)
            info->peak_flops[p] = (precisions & XPB_PRECISION_BIT(p)) ? peak[p] : 0.0;
    if (XPB_HAS_MEMBER(info, xpb_device_info, kind))
        info->kind = XPB_DEVICE_GPU;
    if (XPB_HAS_MEMBER(info, xpb_device_info, emulated_precisions))
        info->emulated_precisions = 0; /* a policy the device lacks is refused, never emulated */
    /* ABI 1.3: the peaks are the datasheets' per-SM rates at this device's SMs and clock
     * (plan/peak.c), so they are both peak_flops and datasheet_flops; the bandwidth measured on
     * an opened device is filled in by device_info (glue/bandwidth.c), the datasheet's here */
    if (XPB_HAS_MEMBER(info, xpb_device_info, peak_flops_source))
        snprintf(info->peak_flops_source, sizeof info->peak_flops_source,
                 "datasheet: SMs x peak clock x FLOP/clock/SM of sm_%d%d", prop.major, prop.minor);
    if (XPB_HAS_MEMBER(info, xpb_device_info, memory_bandwidth_source)) {
        info->memory_bandwidth = 0.0;
        info->memory_bandwidth_source[0] = '\0';
    }
    if (XPB_HAS_MEMBER(info, xpb_device_info, datasheet_bandwidth))
        info->datasheet_bandwidth = cux_datasheet_bandwidth(prop.name);
    if (XPB_HAS_MEMBER(info, xpb_device_info, datasheet_flops))
        for (int p = 0; p < XPB_PEAK_SLOTS; p++)
            info->datasheet_flops[p] = (precisions & XPB_PRECISION_BIT(p)) ? peak[p] : 0.0;
    return XPB_OK;
}

xpb_status cux_read_properties(xpb_backend *be)
{
    struct cudaDeviceProp prop;
    cudaError_t e = cudaGetDeviceProperties(&prop, be->device);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&be->clock_khz, cudaDevAttrClockRate, be->device);
    if (e != cudaSuccess)
        return cux_cuda_error(be->err, NULL, CUX_NONE, e, "open: cudaGetDeviceProperties");
    snprintf(be->name, sizeof be->name, "%s", prop.name);
    be->cc_major = prop.major;
    be->cc_minor = prop.minor;
    be->sm_count = prop.multiProcessorCount;
    be->memory_bytes = (uint64_t)prop.totalGlobalMem;
    return XPB_OK;
}
