/* Peak FLOP/s of NVIDIA GPUs per precision policy, from the SM count, the clock and per-SM
 * rates of the compute capability (peak.c cites where each rate comes from). Plain C. */
#ifndef XPB_CUX_PEAK_H
#define XPB_CUX_PEAK_H

#include <xpubench/backend.h>

/* FLOPs per clock per SM (multiply-add = 2) of one compute capability; 0 = no such unit. */
typedef struct cux_sm_rates {
    int major, minor;
    const char *arch;              /* "Turing", "Ampere (GA100)", ... */
    double fp32, tf32, fp16, bf16; /* dense; tensor cores with fp32 accumulation */
} cux_sm_rates;

/* The rates of compute capability major.minor, or NULL when the table does not know it
 * (then every peak is 0, "unknown"). Static storage. */
const cux_sm_rates *cux_sm_rates_of(int major, int minor);

/* out[policy] = sm_count * clock * rate of the unit the policy runs on (FP32 cores for fp32,
 * TF32 / fp16 / bf16 tensor cores for the others), in FLOP/s; 0 where the device has no such
 * unit or the table does not know it. `clock_khz` is the device's peak clock
 * (cudaDevAttrClockRate). */
void cux_peak_flops(int major, int minor, int sm_count, int clock_khz, double out[XPB_PEAK_SLOTS]);

#endif
