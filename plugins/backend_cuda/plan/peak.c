/* Per-SM FLOP rates by compute capability.
 *
 * Sources (rates are FLOPs per clock per SM, a multiply-add counting 2):
 * - FP32 cores: NVIDIA CUDA C++ Programming Guide, "Arithmetic Instructions", table
 *   "Throughput of Native Arithmetic Instructions (operations per clock cycle per
 *   multiprocessor)": 32-bit floating-point multiply-add, 64 for compute capability 7.5 and 8.0,
 *   128 for 8.6, 8.9 and 9.0 (so 128 and 256 FLOPs).
 * - Tensor cores (dense, fp32 accumulation): the datasheet peak divided by SMs x boost clock of
 *   the reference part of each architecture's whitepaper:
 *     7.5 Turing (NVIDIA Turing GPU Architecture whitepaper; Tesla T4 datasheet): T4, 40 SMs at
 *         1590 MHz, 65 TFLOPS fp16 -> 1024; no TF32 or bf16 units;
 *     8.0 Ampere GA100 (NVIDIA A100 Tensor Core GPU Architecture whitepaper): A100, 108 SMs at
 *         1410 MHz, 312 TFLOPS fp16/bf16 -> 2048, 156 TFLOPS TF32 -> 1024;
 *     8.6 Ampere GA10x (NVIDIA Ampere GA102 GPU Architecture whitepaper; A10 datasheet): A10,
 *         72 SMs at 1695 MHz, 125 TFLOPS fp16/bf16 -> 1024, 62.5 TF32 -> 512 (GeForce parts
 *         run fp32-accumulating fp16 at half that rate);
 *     8.9 Ada (NVIDIA Ada GPU Architecture whitepaper; L4 datasheet): L4, 58 SMs at 2040 MHz,
 *         121 TFLOPS fp16/bf16 -> 1024, 60 TF32 -> 512;
 *     9.0 Hopper (NVIDIA H100 Tensor Core GPU Architecture whitepaper): H100 SXM5, 132 SMs at
 *         1830 MHz, 989.4 TFLOPS fp16/bf16 -> 4096, 494.7 TF32 -> 2048.
 * The clock used is the device's own peak clock, so a part that sustains less under load (H100
 * runs its tensor cores below the peak clock) is credited somewhat more than it reaches. */
#include "plan/peak.h"

#include <stddef.h>

static const cux_sm_rates table[] = {
    {7, 5, "Turing", 128, 0, 1024, 0},
    {8, 0, "Ampere (GA100)", 128, 1024, 2048, 2048},
    {8, 6, "Ampere (GA10x)", 256, 512, 1024, 1024},
    {8, 9, "Ada Lovelace", 256, 512, 1024, 1024},
    {9, 0, "Hopper", 256, 2048, 4096, 4096},
};

const cux_sm_rates *cux_sm_rates_of(int major, int minor)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].major == major && table[i].minor == minor)
            return &table[i];
    return NULL;
}

void cux_peak_flops(int major, int minor, int sm_count, int clock_khz, double out[XPB_PEAK_SLOTS])
{
    for (int p = 0; p < XPB_PEAK_SLOTS; p++)
        out[p] = 0.0;
    const cux_sm_rates *r = cux_sm_rates_of(major, minor);
    if (!r || sm_count <= 0 || clock_khz <= 0)
        return;
    double per_rate = (double)sm_count * (double)clock_khz * 1e3;
    out[XPB_PRECISION_FP32] = per_rate * r->fp32;
    out[XPB_PRECISION_TF32] = per_rate * r->tf32;
    out[XPB_PRECISION_BF16_MIXED] = per_rate * r->bf16;
    out[XPB_PRECISION_FP16_MIXED] = per_rate * r->fp16;
}
