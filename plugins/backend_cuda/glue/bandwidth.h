/* The device memory's bandwidth, measured with device-to-device copies (bandwidth.c). */
#ifndef XPB_CUX_BANDWIDTH_H
#define XPB_CUX_BANDWIDTH_H

#include <stddef.h>

#include "glue/exe.h"

/* Bytes per second of device-to-device copies on the backend's stream (each copied byte read
 * once and written once: 2 bytes moved), the best of a few copies, measured at the first call
 * and remembered in the backend; its description into source (size bytes). 0 with an empty
 * source when it cannot be measured (device memory too small or in use, a lost context): the
 * runtime's error state is cleared, nothing is reported as a failure. */
double cux_measure_bandwidth(xpb_backend *be, char *source, size_t size);

#endif
