/* CPU features that decide which precision policies cpu_onednn runs natively (isa.c).
 *
 * Pure functions of feature bits and CPUID register values: no oneDNN, no CPUID instruction,
 * so that the test suite can check every combination on any machine (device.c reads the real
 * CPU and asks oneDNN which ISA it dispatches to). */
#ifndef XPB_ODN_ISA_H
#define XPB_ODN_ISA_H

#include <stdint.h>

/* Feature bits. A bit counts only when both the CPU has the feature and oneDNN dispatches to
 * kernels that use it (device.c intersects CPUID with dnnl_get_effective_cpu_isa, which
 * DNNL_MAX_CPU_ISA may lower). */
#define ODN_ISA_AVX512_CORE (1u << 0) /* AVX512F, BW, VL and DQ: oneDNN's avx512_core */
#define ODN_ISA_AVX512_BF16 (1u << 1) /* AVX512-BF16: bf16 dot products in zmm registers */
#define ODN_ISA_AMX_TILE (1u << 2)    /* AMX tile registers */
#define ODN_ISA_AMX_BF16 (1u << 3)    /* AMX-BF16 tile products (needs AMX_TILE) */
#define ODN_ISA_ALL                                                                                \
    (ODN_ISA_AVX512_CORE | ODN_ISA_AVX512_BF16 | ODN_ISA_AMX_TILE | ODN_ISA_AMX_BF16)

/* The feature bits that CPUID leaf 7 reports: `leaf7_ebx` and `leaf7_edx` of subleaf 0,
 * `leaf7_1_eax` of subleaf 1 (0 when the CPU has no subleaf 1). */
uint32_t odn_isa_from_cpuid(uint32_t leaf7_ebx, uint32_t leaf7_edx, uint32_t leaf7_1_eax);

/* XPB_PRECISION_BIT of every policy cpu_onednn offers on a CPU with `features`: fp32 always,
 * bf16-mixed from AVX512_CORE on (oneDNN 2.6 has no bf16 primitives below it). */
uint32_t odn_isa_precisions(uint32_t features);

/* The policies among odn_isa_precisions(features) that run without hardware support: bf16-mixed
 * unless the CPU has AVX512-BF16 or AMX-BF16 (with AMX tiles). oneDNN then converts in
 * software on avx512_core kernels, slower than its own fp32. */
uint32_t odn_isa_emulated(uint32_t features);

#endif
