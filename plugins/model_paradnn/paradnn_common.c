/* What the three families of the paradnn plugin share (paradnn.h): names, initialisers,
 * parameters, the optimizer and the classifier head of fc and cnn. Kept apart from the
 * dispatch (model_paradnn.c), which uses the families, so that the families need nothing of
 * it. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "paradnn.h"

const xpb_optimizer_desc pdn_optimizer = {.kind = XPB_OPTIMIZER_SGD, .lr = 0.1, .momentum = 0.9};

void pdn_name(char *out, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, size, fmt, ap);
    va_end(ap);
}

xpb_init pdn_glorot(int64_t fan_in, int64_t fan_out)
{
    double limit = sqrt(6.0 / (double)(fan_in + fan_out));
    xpb_init init = {XPB_INIT_UNIFORM, -limit, limit};
    return init;
}

xpb_status pdn_param(xpb_value *out, const pdn *p, const char *name, int64_t d0, int64_t d1,
                     xpb_init init)
{
    xpb_param_desc d = {name, d1 ? 2u : 1u, {d0, d1 ? d1 : 1, 1, 1}, init, 0, 1};
    return p->api->parameter(out, p->b, &d);
}

xpb_status pdn_classifier_head(const pdn *p, xpb_value logits, xpb_value labels)
{
    uint32_t phase;
    xpb_value loss, xent[2] = {logits, labels};
    XPB_TRY(p->api->phase(&phase, p->b, "train", 0, &pdn_optimizer));
    XPB_TRY(p->api->output(p->b, "logits", logits));
    XPB_TRY(p->api->op(&loss, p->b, "loss", XPB_OP_SOFTMAX_XENT, xent, 2, NULL));
    return p->api->loss(p->b, phase, loss, 1.0);
}
