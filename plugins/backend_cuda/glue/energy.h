/* Energy from NVML, loaded at run time (energy.c). */
#ifndef XPB_CUX_ENERGY_H
#define XPB_CUX_ENERGY_H

#include <stddef.h>

#include "glue/exe.h"

/* Loads NVML (libnvidia-ml.so.1) with dlopen and finds the handle of the GPU at `device`'s PCI
 * bus id. NULL when NVML or the device is absent: energy is then "not measured". The result
 * is owned by the caller (cux_nvml_close). */
struct cux_nvml *cux_nvml_open(int device);
void cux_nvml_close(struct cux_nvml *nvml);
/* Joules since the driver loaded (nvmlDeviceGetTotalEnergyConsumption). */
xpb_status cux_nvml_energy(struct cux_nvml *nvml, double *joules, char *err, size_t size);
/* "580.95.05" into out; 0 on success. */
int cux_nvml_driver(struct cux_nvml *nvml, char *out, size_t size);

#endif
