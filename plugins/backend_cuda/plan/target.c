/* The precision policies a compute capability honours (docs/backend-cuda.md "Precision
 * policies"): tf32 and bf16 need sm_80, everything needs sm_75. Read by the planner's
 * validation and by the device listing. */
#include "plan/target.h"

static int cc_at_least(const cux_target *t, int major, int minor)
{
    return t->cc_major > major || (t->cc_major == major && t->cc_minor >= minor);
}

uint32_t cux_target_precisions(const cux_target *target)
{
    uint32_t bits = 0;
    for (uint32_t p = XPB_PRECISION_FP32; p <= XPB_PRECISION_FP16_MIXED; p++)
        if (!cux_target_refusal(target, p))
            bits |= XPB_PRECISION_BIT(p);
    return bits;
}

const char *cux_target_refusal(const cux_target *target, uint32_t precision)
{
    if (!cc_at_least(target, 7, 5))
        return "the cuda backend needs compute capability 7.5 (Turing) or newer: CUDA 13 and "
               "this build have no code for older GPUs";
    switch (precision) {
    case XPB_PRECISION_FP32:
    case XPB_PRECISION_FP16_MIXED: /* fp16 tensor cores since Volta */
        return NULL;
    case XPB_PRECISION_TF32:
        return cc_at_least(target, 8, 0)
                   ? NULL
                   : "tf32 needs TF32 tensor cores (compute capability 8.0, Ampere, or newer); "
                     "before sm_80 a tf32 run would be an fp32 run under another name";
    case XPB_PRECISION_BF16_MIXED:
        return cc_at_least(target, 8, 0)
                   ? NULL
                   : "bf16-mixed needs bf16 tensor cores (compute capability 8.0, Ampere, or "
                     "newer); cuDNN has no bf16 convolutions before sm_80";
    default:
        return "unknown precision policy (fp32 1, tf32 2, bf16-mixed 3, fp16-mixed 4)";
    }
}
