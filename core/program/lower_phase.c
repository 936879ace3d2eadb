/* One phase of a program (see lowering.h): for training, the forward ops its losses need,
 * the backward ops of every value that needs a gradient (with the ALL_REDUCE ops that average
 * the gradients of a data-parallel program, lower_sync.c), and the optimizer updates of its
 * parameter group; for inference, the forward ops of the outputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program/lowering.h"

/* Marks the nodes `value` depends on. */
void xpb_lower_mark_ancestors(const xpb_graph *g, uint32_t value, uint8_t *need)
{
    const xpb_gvalue *v = &g->values[value];
    if (v->kind != XPB_VALUE_NODE || need[v->node])
        return;
    need[v->node] = 1;
    const xpb_gnode *n = &g->nodes[v->node];
    for (uint32_t i = 0; i < n->n_inputs; i++)
        xpb_lower_mark_ancestors(g, n->inputs[i], need);
}

static xpb_status emit_optimizer(lowering *L, uint32_t phase, uint32_t param, uint32_t grad)
{
    const xpb_optimizer_desc *o = &L->mp->optimizers[phase];
    uint32_t tp = L->tensor_of[param], in[5] = {tp, grad};
    xpb_status st;
    xpb_op_attrs a = {0};
    a.lr = (float)o->lr;
    a.weight_decay = (float)o->weight_decay;
    const char *layer = L->mp->tensors[tp].layer;
    if (o->kind == XPB_OPTIMIZER_SGD) {
        a.momentum = (float)o->momentum;
        if ((st = xpb_lower_tensor_like(&in[2], L, tp, ".momentum_buf", XPB_ROLE_STATE)))
            return st;
        return xpb_lower_emit(L, XPB_OP_SGD_UPDATE, layer, in, 3, NULL, 0, &a);
    }
    a.beta1 = (float)o->beta1;
    a.beta2 = (float)o->beta2;
    a.eps = (float)o->eps;
    int64_t one = 1;
    char name[512];
    snprintf(name, sizeof name, "%s.adam_step", L->mp->tensors[tp].name);
    if ((st = xpb_lower_tensor_like(&in[2], L, tp, ".adam_m", XPB_ROLE_STATE)) ||
        (st = xpb_lower_tensor_like(&in[3], L, tp, ".adam_v", XPB_ROLE_STATE)) ||
        (st = xpb_lower_new_tensor(&in[4], L, name, layer, XPB_DTYPE_F32, XPB_ROLE_STATE, 1, &one,
                                   0)))
        return st;
    uint32_t kind = o->kind == XPB_OPTIMIZER_ADAMW ? XPB_OP_ADAMW_UPDATE : XPB_OP_ADAM_UPDATE;
    return xpb_lower_emit(L, kind, layer, in, 5, NULL, 0, &a);
}

/* Clips the phase's finished gradients by their global norm (one CLIP_GRAD_NORM over all of
 * them, in place), before any update reads them. */
static xpb_status emit_clip(lowering *L, uint32_t p, const uint32_t *grads, uint32_t n)
{
    if (n == 0)
        return XPB_OK;
    if (n > XPB_SHP_MAX_IN)
        return xpb_err_set(L->err, XPB_UNSUPPORTED,
                           "phase '%s': clipping %u gradients in one op, at most %d",
                           L->g->phases[p].name, n, XPB_SHP_MAX_IN);
    char name[512];
    snprintf(name, sizeof name, "%s.grad_norm", L->g->phases[p].name);
    int64_t one = 1;
    uint32_t norm;
    xpb_op_attrs3 none = {0};
    xpb_status st =
        xpb_lower_new_tensor(&norm, L, name, name, XPB_DTYPE_F32, XPB_ROLE_ACTIVATION, 1, &one, 0);
    if (st)
        return st;
    uint32_t first = L->mp->n_ops;
    if ((st = xpb_lower_emit3(L, XPB_OP_CLIP_GRAD_NORM, name, grads, n, &norm, 1, NULL, &none)))
        return st;
    L->mp->ops[first].max_norm = (float)L->g->phases[p].clip_max_norm;
    return XPB_OK;
}

/* The backward ops of node `nid`, whose output needs a gradient: from the gradient that
 * reached its output, or from its weight when it is a loss. Nothing when neither exists. */
static xpb_status backward_node(lowering *L, uint32_t nid, const uint8_t *rg)
{
    const xpb_gnode *n = &L->g->nodes[nid];
    uint32_t dy = XPB_NO_TENSOR;
    double scale = 0;
    if (xpb_op_is_loss(n->kind)) {
        scale = L->loss_weight[n->output];
        if (scale == 0)
            return XPB_OK;
    } else {
        xpb_status st = xpb_lower_finalize_grad(&dy, L, n->output);
        if (st || dy == XPB_NO_TENSOR)
            return st;
    }
    return xpb_lower_backward(L, nid, dy, scale, rg);
}

xpb_status xpb_lower_training_phase(lowering *L, uint32_t p)
{
    const xpb_graph *g = L->g;
    const xpb_gphase *ph = &g->phases[p];
    xpb_status st = XPB_OK;
    uint8_t *need = calloc(g->n_nodes, 1), *rg = calloc(g->n_values, 1);
    uint32_t *grads = calloc(g->n_values, sizeof *grads),
             *clipped = calloc(g->n_values, sizeof *clipped);
    uint32_t n_clipped = 0;
    if (!need || !rg || !grads || !clipped) {
        st = xpb_lower_oom(L);
        goto free_marks;
    }
    for (size_t i = 0; i < ph->n_losses; i++)
        xpb_lower_mark_ancestors(g, ph->losses[i].value, need);
    for (uint32_t nid = 1; nid < g->n_nodes; nid++)
        if (need[nid] && !L->computed[nid]) {
            if ((st = xpb_lower_forward(L, nid)))
                goto free_marks;
            L->computed[nid] = 1;
        }

    /* Which values need a gradient: trainable parameters of the phase's group and what
     * depends on them, except through stop-gradient. */
    for (uint32_t v = 1; v < g->n_values; v++) {
        const xpb_gvalue *gv = &g->values[v];
        if (gv->kind == XPB_VALUE_PARAM)
            rg[v] = gv->trainable && gv->group == ph->group;
    }
    for (uint32_t nid = 1; nid < g->n_nodes; nid++) {
        const xpb_gnode *n = &g->nodes[nid];
        if (!need[nid] || n->kind == XPB_GNODE_STOP_GRADIENT)
            continue;
        for (uint32_t i = 0; i < n->n_inputs; i++)
            if (rg[n->inputs[i]])
                rg[n->output] = 1;
    }
    for (uint32_t v = 0; v < g->n_values; v++) {
        L->grads[v].n = 0;
        L->loss_weight[v] = 0;
    }
    for (size_t i = 0; i < ph->n_losses; i++)
        L->loss_weight[ph->losses[i].value] += ph->losses[i].weight;

    int sync = xpb_lower_sync_enabled(L);
    if (sync && (st = xpb_lower_sync_begin(L, need, rg)))
        goto free_marks;
    for (uint32_t nid = (uint32_t)g->n_nodes - 1; nid >= 1; nid--) {
        const xpb_gnode *n = &g->nodes[nid];
        if (need[nid] && rg[n->output] && (st = backward_node(L, nid, rg)))
            goto free_marks;
        if (sync && (st = xpb_lower_sync_after_node(L, nid, rg)))
            goto free_marks;
    }
    if (sync && (st = xpb_lower_sync_end(L)))
        goto free_marks;
    /* every gradient finished (and averaged), then clipped, then the updates */
    for (uint32_t v = 1; v < g->n_values; v++) {
        const xpb_gvalue *gv = &g->values[v];
        grads[v] = XPB_NO_TENSOR;
        if (gv->kind != XPB_VALUE_PARAM || !rg[v])
            continue;
        grads[v] = L->param_grad[v]; /* finished and averaged by lower_sync.c */
        if (!sync && (st = xpb_lower_finalize_grad(&grads[v], L, v)))
            goto free_marks;
        if (grads[v] != XPB_NO_TENSOR)
            clipped[n_clipped++] = grads[v];
    }
    if (ph->clip_max_norm > 0 && (st = emit_clip(L, p, clipped, n_clipped)))
        goto free_marks;
    for (uint32_t v = 1; v < g->n_values; v++)
        if (grads[v] != XPB_NO_TENSOR && (st = emit_optimizer(L, p, v, grads[v])))
            goto free_marks;
free_marks:
    free(need);
    free(rg);
    free(grads);
    free(clipped);
    return st;
}

xpb_status xpb_lower_inference(lowering *L)
{
    const xpb_graph *g = L->g;
    xpb_status st = XPB_OK;
    uint8_t *need = calloc(g->n_nodes, 1), *extra = calloc(g->n_nodes, 1);
    if (!need || !extra) {
        st = xpb_lower_oom(L);
        goto free_marks;
    }
    for (size_t o = 0; o < g->n_outputs; o++)
        xpb_lower_mark_ancestors(g, g->outputs[o].value, need);
    if (g->n_outputs == 0)
        for (size_t i = 0; i < g->phases[0].n_losses; i++)
            xpb_lower_mark_ancestors(g, g->phases[0].losses[i].value, need);
    /* A loss is computed too when it needs nothing beyond the outputs but itself (a
     * classifier's cross-entropy): a cheap sanity value for the results. */
    for (size_t p = 0; p < g->n_phases; p++)
        for (size_t i = 0; i < g->phases[p].n_losses; i++) {
            memset(extra, 0, g->n_nodes);
            uint32_t lv = g->phases[p].losses[i].value;
            xpb_lower_mark_ancestors(g, lv, extra);
            int cheap = 1;
            for (uint32_t nid = 1; nid < g->n_nodes; nid++)
                if (extra[nid] && !need[nid] && nid != g->values[lv].node)
                    cheap = 0;
            if (cheap)
                need[g->values[lv].node] = 1;
        }
    for (uint32_t nid = 1; nid < g->n_nodes; nid++)
        if (need[nid] && (st = xpb_lower_forward(L, nid)))
            goto free_marks;
free_marks:
    free(need);
    free(extra);
    return st;
}
