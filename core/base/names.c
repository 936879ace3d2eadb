/* Canonical enum spellings (see names.h). */
#include "base/names.h"

#include <string.h>

#include <xpubench/backend.h>

const xpb_precision_spelling xpb_precision_spellings[] = {
    {XPB_PRECISION_FP32, "fp32", "fp32"},
    {XPB_PRECISION_TF32, "tf32", "tf32"},
    {XPB_PRECISION_BF16_MIXED, "bf16-mixed", "bf16"},
    {XPB_PRECISION_FP16_MIXED, "fp16-mixed", "fp16"},
    {0, NULL, NULL},
};

const char *const xpb_precision_names[] = {"fp32", "tf32", "bf16-mixed", "fp16-mixed", NULL};

int xpb_precision_parse(uint32_t *out, const char *text)
{
    for (const xpb_precision_spelling *p = xpb_precision_spellings; text && p->name; p++)
        if (strcmp(text, p->name) == 0 || strcmp(text, p->alias) == 0) {
            *out = p->precision;
            return 0;
        }
    return -1;
}

const char *xpb_precision_expected(void)
{
    return "fp32, tf32, bf16-mixed (bf16) or fp16-mixed (fp16)";
}

const char *xpb_precision_name(uint32_t precision)
{
    for (const xpb_precision_spelling *p = xpb_precision_spellings; p->name; p++)
        if (p->precision == precision)
            return p->name;
    return "unknown";
}

const char *xpb_mode_name(uint32_t mode)
{
    return mode == XPB_MODE_INFERENCE ? "inference" : mode == XPB_MODE_TTA ? "tta" : "train";
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
