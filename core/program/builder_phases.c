/* Parameter groups, training phases and their weighted losses (builder_state.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "program/builder_state.h"

xpb_status xpb_builder_group(uint32_t *out, xpb_builder *b, const char *name)
{
    if (!out || !name || !name[0])
        return xpb_builder_fail(b, XPB_INVALID_ARGUMENT, "group: bad arguments");
    for (size_t i = 0; i < b->g->n_groups; i++)
        if (strcmp(b->g->groups[i], name) == 0)
            return xpb_builder_fail(b, XPB_INVALID_ARGUMENT, "group '%s' declared twice", name);
    char **grown = realloc(b->g->groups, (b->g->n_groups + 1) * sizeof *grown);
    if (!grown)
        return xpb_builder_fail(b, XPB_OUT_OF_MEMORY, "out of memory");
    b->g->groups = grown;
    if (!(grown[b->g->n_groups] = strdup(name)))
        return xpb_builder_fail(b, XPB_OUT_OF_MEMORY, "out of memory");
    *out = (uint32_t)b->g->n_groups++;
    return XPB_OK;
}

static xpb_status add_phase(uint32_t *out, xpb_builder *b, const char *name, uint32_t group,
                            const xpb_optimizer_desc *opt)
{
    xpb_gphase *grown = realloc(b->g->phases, (b->g->n_phases + 1) * sizeof *grown);
    if (!grown)
        return xpb_builder_fail(b, XPB_OUT_OF_MEMORY, "out of memory");
    b->g->phases = grown;
    xpb_gphase *p = &grown[b->g->n_phases];
    memset(p, 0, sizeof *p);
    if (!(p->name = strdup(name)))
        return xpb_builder_fail(b, XPB_OUT_OF_MEMORY, "out of memory");
    p->group = group;
    p->optimizer = *opt;
    *out = (uint32_t)b->g->n_phases++;
    return XPB_OK;
}

xpb_status xpb_builder_phase(uint32_t *out, xpb_builder *b, const char *name, uint32_t group,
                             const xpb_optimizer_desc *opt)
{
    if (!out || !name || !name[0] || !opt)
        return xpb_builder_fail(b, XPB_INVALID_ARGUMENT, "phase: bad arguments");
    if (group >= b->g->n_groups)
        return xpb_builder_fail(b, XPB_INVALID_ARGUMENT, "phase '%s': unknown group %u", name,
                                group);
    if (opt->kind != XPB_OPTIMIZER_SGD && opt->kind != XPB_OPTIMIZER_ADAM &&
        opt->kind != XPB_OPTIMIZER_ADAMW)
        return xpb_builder_fail(b, XPB_INVALID_ARGUMENT, "phase '%s': unknown optimizer %u", name,
                                opt->kind);
    for (size_t i = 0; i < b->g->n_phases; i++)
        if (strcmp(b->g->phases[i].name, name) == 0)
            return xpb_builder_fail(b, XPB_INVALID_ARGUMENT, "phase '%s' declared twice", name);
    return add_phase(out, b, name, group, opt);
}

xpb_status xpb_builder_loss(xpb_builder *b, uint32_t phase, xpb_value loss, double weight)
{
    xpb_status st;
    if (!xpb_builder_value_ok(b, loss))
        return xpb_builder_fail(b, XPB_INVALID_ARGUMENT, "loss: %u is not a value", loss);
    const xpb_gvalue *lv = &b->g->values[loss];
    if (lv->kind != XPB_VALUE_NODE || !xpb_op_is_loss(b->g->nodes[lv->node].kind))
        return xpb_builder_fail(b, XPB_INVALID_ARGUMENT,
                                "loss: '%s' is not the result of SOFTMAX_XENT, MSE_LOSS or L1_LOSS",
                                lv->name);
    if (!isfinite(weight))
        return xpb_builder_fail(b, XPB_INVALID_ARGUMENT, "loss '%s': weight is not finite",
                                lv->name);
    if (b->g->n_phases == 0 && phase == 0) {
        xpb_optimizer_desc sgd = {.kind = XPB_OPTIMIZER_SGD, .lr = 0.01, .momentum = 0.9};
        uint32_t id;
        if ((st = add_phase(&id, b, "train", 0, &sgd)))
            return st;
    }
    if (phase >= b->g->n_phases)
        return xpb_builder_fail(b, XPB_INVALID_ARGUMENT, "loss '%s': unknown phase %u", lv->name,
                                phase);
    xpb_gphase *p = &b->g->phases[phase];
    xpb_gloss *grown = realloc(p->losses, (p->n_losses + 1) * sizeof *grown);
    if (!grown)
        return xpb_builder_fail(b, XPB_OUT_OF_MEMORY, "out of memory");
    p->losses = grown;
    grown[p->n_losses++] = (xpb_gloss){loss, weight};
    return XPB_OK;
}

xpb_status xpb_builder_clip_grad_norm(xpb_builder *b, uint32_t phase, double max_norm)
{
    if (phase >= b->g->n_phases)
        return xpb_builder_fail(b, XPB_INVALID_ARGUMENT,
                                "clip_grad_norm: unknown phase %u (declare the phase first)",
                                phase);
    if (!(max_norm > 0) || !isfinite(max_norm))
        return xpb_builder_fail(b, XPB_INVALID_ARGUMENT,
                                "clip_grad_norm: phase '%s': max_norm must be > 0, found %g",
                                b->g->phases[phase].name, max_norm);
    b->g->phases[phase].clip_max_norm = max_norm;
    return XPB_OK;
}
