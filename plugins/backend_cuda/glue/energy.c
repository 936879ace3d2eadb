/* Energy from NVML, loaded with dlopen when a backend is opened, so that the plugin loads (and
 * runs, without energy figures) where libnvidia-ml is absent. The few NVML entry points used
 * are declared here with the signatures of NVML's documentation (nvml.h ships with the driver,
 * not with every toolkit):
 *   nvmlInit_v2, nvmlShutdown, nvmlErrorString, nvmlSystemGetDriverVersion,
 *   nvmlDeviceGetHandleByPciBusId_v2 (CUDA and NVML number devices differently: the PCI bus id
 *   names the same GPU in both), nvmlDeviceGetTotalEnergyConsumption (millijoules since the
 *   driver loaded; Volta and newer). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "glue/energy.h"

typedef int nvml_return;           /* nvmlReturn_t: 0 = NVML_SUCCESS */
typedef struct nvml_dev *nvml_dev; /* nvmlDevice_t */

struct cux_nvml {
    void *lib;
    nvml_dev dev;
    nvml_return (*shutdown)(void);
    const char *(*error_string)(nvml_return);
    nvml_return (*driver_version)(char *, unsigned int);
    nvml_return (*energy)(nvml_dev, unsigned long long *);
};

struct cux_nvml *cux_nvml_open(int device)
{
    char bus[64];
    if (cudaDeviceGetPCIBusId(bus, (int)sizeof bus, device) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return NULL;
    struct cux_nvml *n = calloc(1, sizeof *n);
    if (!n)
        goto close_lib;
    n->lib = lib;
    nvml_return (*init)(void) = (nvml_return(*)(void))dlsym(lib, "nvmlInit_v2");
    nvml_return (*by_bus)(const char *, nvml_dev *) =
        (nvml_return(*)(const char *, nvml_dev *))dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
    n->shutdown = (nvml_return(*)(void))dlsym(lib, "nvmlShutdown");
    n->error_string = (const char *(*)(nvml_return))dlsym(lib, "nvmlErrorString");
    n->driver_version =
        (nvml_return(*)(char *, unsigned int))dlsym(lib, "nvmlSystemGetDriverVersion");
    n->energy = (nvml_return(*)(nvml_dev, unsigned long long *))dlsym(
        lib, "nvmlDeviceGetTotalEnergyConsumption");
    if (!init || !by_bus || !n->shutdown || !n->error_string || !n->driver_version || !n->energy)
        goto free_n;
    if (init() != 0)
        goto free_n;
    if (by_bus(bus, &n->dev) != 0)
        goto shutdown;
    return n;

shutdown:
    n->shutdown();
free_n:
    free(n);
close_lib:
    dlclose(lib);
    return NULL;
}

void cux_nvml_close(struct cux_nvml *nvml)
{
    if (!nvml)
        return;
    nvml->shutdown();
    dlclose(nvml->lib);
    free(nvml);
}

xpb_status cux_nvml_energy(struct cux_nvml *nvml, double *joules, char *err, size_t size)
{
    if (!nvml) {
        snprintf(err, size,
                 "energy not measured: NVML (libnvidia-ml.so.1) is absent or does not "
                 "know this GPU");
        return XPB_UNSUPPORTED;
    }
    unsigned long long mj = 0;
    nvml_return r = nvml->energy(nvml->dev, &mj);
    if (r != 0) {
        snprintf(err, size, "energy not measured: nvmlDeviceGetTotalEnergyConsumption: %s",
                 nvml->error_string(r));
        return XPB_UNSUPPORTED;
    }
    *joules = (double)mj * 1e-3;
    return XPB_OK;
}

int cux_nvml_driver(struct cux_nvml *nvml, char *out, size_t size)
{
    if (!nvml || nvml->driver_version(out, (unsigned int)size) != 0)
        return -1;
    return 0;
}
