/* Canonical enum spellings (see names.h). */
#include "names.h"

#include <xpubench/backend.h>

#include "run_config.h"

const char *xpb_precision_name(uint32_t precision)
{
    switch (precision) {
    case XPB_PRECISION_FP32:
        return "fp32";
    case XPB_PRECISION_TF32:
        return "tf32";
    case XPB_PRECISION_BF16_MIXED:
        return "bf16-mixed";
    case XPB_PRECISION_FP16_MIXED:
        return "fp16-mixed";
    }
    return "unknown";
}

const char *xpb_mode_name(uint32_t mode)
{
    return mode == XPB_MODE_INFERENCE ? "inference" : "train";
}

const char *xpb_transfer_name(uint32_t transfer)
{
    return transfer == XPB_TRANSFER_STREAMED ? "streamed" : "resident";
}

const char *xpb_role_name(uint32_t role)
{
    switch (role) {
    case XPB_ROLE_INPUT:
        return "input";
    case XPB_ROLE_PARAM:
        return "param";
    case XPB_ROLE_STATE:
        return "state";
    case XPB_ROLE_ACTIVATION:
        return "activation";
    case XPB_ROLE_GRAD:
        return "grad";
    case XPB_ROLE_ACTIVATION_GRAD:
        return "activation_grad";
    case XPB_ROLE_LOSS:
        return "loss";
    case XPB_ROLE_OUTPUT:
        return "output";
    case XPB_ROLE_WORKSPACE:
        return "workspace";
    }
    return "unknown";
}
