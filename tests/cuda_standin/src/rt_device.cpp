// The device the stand-in reports (CUDA Runtime API, Device Management): one GPU-like device
// (XPB_STANDIN_DEVICES of them), whose compute capability comes from XPB_STANDIN_CC ("7.5",
// "8.0", "9.0", ...; default 8.0) and whose other numbers are those of the GPU of that
// capability the project targets (T4, A100, H100), so that the plugin's choices that depend on
// the architecture (TF32, BF16, shared memory) are made as on that GPU.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "rt_internal.hpp"
#include "xpbsi/standin.h"

namespace xpbsi
{

namespace
{

thread_local int t_device = 0;

device_spec make_spec()
{
    device_spec d = {8, 0, 108, 1410000, 48 << 10, 166912, 167936, 0, "A100"};
    const char *cc = getenv("XPB_STANDIN_CC");
    if (cc && cc[0]) {
        if (strncmp(cc, "sm_", 3) == 0)
            cc += 3;
        int major = 0, minor = 0;
        if (sscanf(cc, "%d.%d", &major, &minor) == 2 && major > 0) {
            d.major = major;
            d.minor = minor;
        } else if (sscanf(cc, "%d", &major) == 1 && major >= 10) {
            d.major = major / 10;
            d.minor = major % 10;
        } else {
            diag("XPB_STANDIN_CC='%s' is not a compute capability such as 7.5; using 8.0", cc);
        }
    }
    int cc10 = d.major * 10 + d.minor;
    if (cc10 == 75)
        d = {7, 5, 40, 1590000, 48 << 10, 65536, 65536, 0, "T4"};
    else if (cc10 == 70)
        d = {7, 0, 80, 1530000, 48 << 10, 98304, 98304, 0, "V100"};
    else if (cc10 == 89)
        d = {8, 9, 58, 2040000, 48 << 10, 101376, 102400, 0, "L4"};
    else if (cc10 == 90)
        d = {9, 0, 132, 1980000, 48 << 10, 232448, 233472, 0, "H100"};
    else if (cc10 != 80)
        d.like = "A100 (numbers of sm_80)";
    size_t mb = 16384;
    const char *m = getenv("XPB_STANDIN_MEM_MB");
    if (m && m[0] && atol(m) > 0)
        mb = (size_t)atol(m);
    d.total_mem = mb << 20;
    return d;
}

} // namespace

const device_spec &device()
{
    static const device_spec d = make_spec();
    return d;
}

int device_count()
{
    static const int n = [] {
        const char *v = getenv("XPB_STANDIN_DEVICES");
        return v && v[0] ? atoi(v) : 1;
    }();
    return n < 0 ? 0 : n;
}

bool valid_device(int d)
{
    return d >= 0 && d < device_count();
}

} // namespace xpbsi

extern "C" {

int xpbsi_compute_capability(void)
{
    return xpbsi::device().major * 10 + xpbsi::device().minor;
}

cudaError_t cudaGetDeviceCount(int *count)
{
    XPBSI_LOCK;
    if (!count)
        return xpbsi::record(cudaErrorInvalidValue);
    *count = xpbsi::device_count();
    // "cudaErrorNoDevice: no CUDA-capable devices were detected"
    return xpbsi::record(*count == 0 ? cudaErrorNoDevice : xpbsi::enter());
}

cudaError_t cudaSetDevice(int device)
{
    XPBSI_API_ENTER;
    if (!xpbsi::valid_device(device))
        return xpbsi::record(cudaErrorInvalidDevice);
    xpbsi::t_device = device;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int *device)
{
    XPBSI_API_ENTER;
    if (!device)
        return xpbsi::record(cudaErrorInvalidValue);
    *device = xpbsi::t_device;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    XPBSI_API_ENTER;
    if (!prop)
        return xpbsi::record(cudaErrorInvalidValue);
    if (!xpbsi::valid_device(device))
        return xpbsi::record(cudaErrorInvalidDevice);
    const xpbsi::device_spec &d = xpbsi::device();
    memset(prop, 0, sizeof *prop);
    snprintf(prop->name, sizeof prop->name, "xpbsi CPU stand-in of an sm_%d%d GPU (%s)", d.major,
             d.minor, d.like);
    prop->totalGlobalMem = d.total_mem;
    prop->sharedMemPerBlock = d.smem_block;
    prop->sharedMemPerBlockOptin = d.smem_optin;
    prop->sharedMemPerMultiprocessor = d.smem_sm;
    prop->regsPerBlock = 65536;
    prop->regsPerMultiprocessor = 65536;
    prop->warpSize = 32;
    prop->memPitch = (size_t)1 << 31;
    prop->maxThreadsPerBlock = 1024;
    prop->maxThreadsDim[0] = 1024;
    prop->maxThreadsDim[1] = 1024;
    prop->maxThreadsDim[2] = 64;
    prop->maxGridSize[0] = 0x7fffffff;
    prop->maxGridSize[1] = 65535;
    prop->maxGridSize[2] = 65535;
    prop->totalConstMem = 65536;
    prop->major = d.major;
    prop->minor = d.minor;
    prop->textureAlignment = 512;
    prop->multiProcessorCount = d.sm_count;
    prop->canMapHostMemory = 1;
    prop->concurrentKernels = 1;
    prop->pciBusID = 1 + device;
    prop->asyncEngineCount = 2;
    prop->unifiedAddressing = 1;
    prop->memoryBusWidth = d.major >= 8 ? 5120 : 256;
    prop->l2CacheSize = d.major >= 8 ? 40 << 20 : 4 << 20;
    prop->maxThreadsPerMultiProcessor = d.major == 7 && d.minor == 5 ? 1024 : 2048;
    prop->streamPrioritiesSupported = 1;
    prop->globalL1CacheSupported = 1;
    prop->localL1CacheSupported = 1;
    prop->managedMemory = 1;
    prop->computePreemptionSupported = 1;
    prop->cooperativeLaunch = 1;
    prop->maxBlocksPerMultiProcessor = d.major == 7 && d.minor == 5 ? 16 : 32;
    prop->reservedSharedMemPerBlock = 1024;
    prop->memoryPoolsSupported = 1;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    XPBSI_API_ENTER;
    if (!value)
        return xpbsi::record(cudaErrorInvalidValue);
    if (!xpbsi::valid_device(device))
        return xpbsi::record(cudaErrorInvalidDevice);
    const xpbsi::device_spec &d = xpbsi::device();
    switch (attr) {
    case cudaDevAttrClockRate:
        *value = d.clock_khz;
        break;
    case cudaDevAttrMultiProcessorCount:
        *value = d.sm_count;
        break;
    case cudaDevAttrComputeCapabilityMajor:
        *value = d.major;
        break;
    case cudaDevAttrComputeCapabilityMinor:
        *value = d.minor;
        break;
    case cudaDevAttrMaxThreadsPerBlock:
    case cudaDevAttrMaxBlockDimX:
    case cudaDevAttrMaxBlockDimY:
        *value = 1024;
        break;
    case cudaDevAttrMaxBlockDimZ:
        *value = 64;
        break;
    case cudaDevAttrMaxGridDimX:
        *value = 0x7fffffff;
        break;
    case cudaDevAttrMaxGridDimY:
    case cudaDevAttrMaxGridDimZ:
        *value = 65535;
        break;
    case cudaDevAttrMaxSharedMemoryPerBlock:
        *value = (int)d.smem_block;
        break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin:
        *value = (int)d.smem_optin;
        break;
    case cudaDevAttrWarpSize:
        *value = 32;
        break;
    case cudaDevAttrUnifiedAddressing:
    case cudaDevAttrConcurrentKernels:
        *value = 1;
        break;
    case cudaDevAttrPciBusId:
        *value = 1 + device;
        break;
    case cudaDevAttrPciDeviceId:
    case cudaDevAttrPciDomainId:
        *value = 0;
        break;
    default:
        return xpbsi::record(cudaErrorInvalidValue);
    }
    return cudaSuccess;
}

cudaError_t cudaDeviceGetPCIBusId(char *pciBusId, int len, int device)
{
    XPBSI_API_ENTER;
    if (!pciBusId || len <= 0)
        return xpbsi::record(cudaErrorInvalidValue);
    if (!xpbsi::valid_device(device))
        return xpbsi::record(cudaErrorInvalidDevice);
    // "a string ... in the form [domain]:[bus]:[device].[function]"; 13 characters suffice
    snprintf(pciBusId, (size_t)len, "0000:%02x:00.0", 1 + device);
    return cudaSuccess;
}

// The driver is as new as the runtime the toolkit's headers describe.
cudaError_t cudaDriverGetVersion(int *driverVersion)
{
    if (!driverVersion)
        return xpbsi::record(cudaErrorInvalidValue);
    *driverVersion = CUDART_VERSION;
    return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
{
    if (!runtimeVersion)
        return xpbsi::record(cudaErrorInvalidValue);
    *runtimeVersion = CUDART_VERSION;
    return cudaSuccess;
}

} // extern "C"
