/* The vendor's memory bandwidth of NVIDIA data-centre GPUs, by the name the driver reports
 * (cudaDeviceProp.name), for xpb_device_info.datasheet_bandwidth. Plain C. */
#ifndef XPB_CUX_DATASHEET_H
#define XPB_CUX_DATASHEET_H

/* Bytes per second of the datasheet entry whose model names `name` ("Tesla T4", "NVIDIA
 * A100-SXM4-80GB", ...), or 0 when the table does not know the device. A model matches where
 * its key occurs in the name as a whole word ("A10" is not "A100"), the most specific key
 * first. */
double cux_datasheet_bandwidth(const char *name);

#endif
