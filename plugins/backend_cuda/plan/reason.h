/* Why there is no CUDA device: the sentence `xpubench list`, `run` and `conformance` print,
 * made from what device.c probed. Plain C, so that tests/test_cuda_plan.c checks every case
 * on a machine that has none of them. */
#ifndef XPB_CUX_REASON_H
#define XPB_CUX_REASON_H

#include <stddef.h>
#include <stdint.h>

/* cudaError_t values of driver_types.h that have their own sentence (device.c checks at
 * compile time that they equal the runtime's). */
enum {
    CUX_CUDA_SUCCESS = 0,
    CUX_CUDA_STUB_LIBRARY = 34,
    CUX_CUDA_INSUFFICIENT_DRIVER = 35,
    CUX_CUDA_DEVICES_UNAVAILABLE = 46,
    CUX_CUDA_NO_DEVICE = 100,
    CUX_CUDA_SYSTEM_DRIVER_MISMATCH = 803,
    CUX_CUDA_COMPAT_NOT_SUPPORTED = 804,
};

typedef struct cux_probe {
    int libcuda_found;         /* dlopen("libcuda.so.1") succeeded */
    const char *libcuda_error; /* dlerror() when it did not (may be NULL) */
    int status;                /* cudaGetDeviceCount's cudaError_t */
    const char *status_name;   /* cudaGetErrorName, cudaGetErrorString (may be NULL) */
    const char *status_text;
    int driver_version;  /* cudaDriverGetVersion: 1000*major + 10*minor; 0 = none */
    int runtime_version; /* cudaRuntimeGetVersion */
    int count;           /* devices, when status is success */
} cux_probe;

/* "no NVIDIA driver: libcuda.so.1 not found (...)", "NVIDIA driver for CUDA 12.2 is older
 * than the CUDA 13.0 runtime ...", "no CUDA-capable GPU ..." into out (size bytes). */
void cux_no_device_reason(char *out, size_t size, const cux_probe *probe);

/* "no device 3: this machine has 2 CUDA devices (0..1)" into out. */
void cux_bad_index_reason(char *out, size_t size, uint32_t index, int count);

#endif
