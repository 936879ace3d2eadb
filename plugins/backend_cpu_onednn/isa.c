/* Which precision policies a CPU runs natively, from its feature bits (see isa.h). */
#include "isa.h"

#include <xpubench/backend.h>

uint32_t odn_isa_from_cpuid(uint32_t leaf7_ebx, uint32_t leaf7_edx, uint32_t leaf7_1_eax)
{
    /* leaf 7 subleaf 0: EBX bit 16 AVX512F, 17 AVX512DQ, 30 AVX512BW, 31 AVX512VL;
     * EDX bit 22 AMX-BF16, 24 AMX-TILE. Subleaf 1: EAX bit 5 AVX512-BF16. */
    const uint32_t core = (1u << 16) | (1u << 17) | (1u << 30) | (1u << 31);
    uint32_t f = 0;
    if ((leaf7_ebx & core) == core)
        f |= ODN_ISA_AVX512_CORE;
    if (leaf7_1_eax & (1u << 5))
        f |= ODN_ISA_AVX512_BF16;
    if (leaf7_edx & (1u << 24))
        f |= ODN_ISA_AMX_TILE;
    if (leaf7_edx & (1u << 22))
        f |= ODN_ISA_AMX_BF16;
    return f;
}

uint32_t odn_isa_precisions(uint32_t features)
{
    uint32_t p = XPB_PRECISION_BIT(XPB_PRECISION_FP32);
    if (features & ODN_ISA_AVX512_CORE)
        p |= XPB_PRECISION_BIT(XPB_PRECISION_BF16_MIXED);
    return p;
}

uint32_t odn_isa_emulated(uint32_t features)
{
    const uint32_t amx = ODN_ISA_AMX_TILE | ODN_ISA_AMX_BF16;
    int native_bf16 = (features & ODN_ISA_AVX512_BF16) || (features & amx) == amx;
    uint32_t bf16 = XPB_PRECISION_BIT(XPB_PRECISION_BF16_MIXED);
    return (odn_isa_precisions(features) & bf16) && !native_bf16 ? bf16 : 0u;
}
