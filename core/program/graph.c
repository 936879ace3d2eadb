/* Forward graph storage (see graph.h). */
#include "program/graph.h"

#include <stdlib.h>
#include <string.h>

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

xpb_status xpb_graph_new(xpb_graph **out, uint32_t batch)
{
    xpb_graph *g = calloc(1, sizeof *g);
    if (!g)
        return XPB_OUT_OF_MEMORY;
    g->values = calloc(1, sizeof *g->values);
    g->nodes = calloc(1, sizeof *g->nodes);
    g->groups = calloc(1, sizeof *g->groups);
    if (!g->values || !g->nodes || !g->groups)
        goto free_graph;
    g->n_values = 1;
    g->n_nodes = 1;
    g->groups[0] = strdup("default");
    if (!g->groups[0])
        goto free_graph;
    g->n_groups = 1;
    g->batch = batch;
    *out = g;
    return XPB_OK;
free_graph:
    xpb_graph_free(g);
    return XPB_OUT_OF_MEMORY;
}

void xpb_graph_free(xpb_graph *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->n_values; i++) {
        free(g->values[i].name);
        free(g->values[i].data);
    }
    for (size_t i = 0; i < g->n_nodes; i++)
        free(g->nodes[i].layer);
    for (size_t i = 0; i < g->n_groups; i++)
        free(g->groups[i]);
    for (size_t i = 0; i < g->n_phases; i++) {
        free(g->phases[i].name);
        free(g->phases[i].losses);
    }
    for (size_t i = 0; i < g->n_outputs; i++)
        free(g->outputs[i].name);
    free(g->values);
    free(g->nodes);
    free(g->groups);
    free(g->phases);
    free(g->outputs);
    free(g);
}

xpb_status xpb_graph_add_value(uint32_t *out, xpb_graph *g, const xpb_gvalue *v)
{
    xpb_gvalue *grown = realloc(g->values, (g->n_values + 1) * sizeof *grown);
    if (!grown)
        return XPB_OUT_OF_MEMORY;
    g->values = grown;
    xpb_gvalue *slot = &g->values[g->n_values];
    *slot = *v;
    slot->name = dup_or_null(v->name);
    if (v->name && !slot->name)
        return XPB_OUT_OF_MEMORY;
    *out = (uint32_t)g->n_values++;
    return XPB_OK;
}

xpb_status xpb_graph_add_node(uint32_t *out, xpb_graph *g, const xpb_gnode *n)
{
    xpb_gnode *grown = realloc(g->nodes, (g->n_nodes + 1) * sizeof *grown);
    if (!grown)
        return XPB_OUT_OF_MEMORY;
    g->nodes = grown;
    xpb_gnode *slot = &g->nodes[g->n_nodes];
    *slot = *n;
    slot->layer = dup_or_null(n->layer);
    if (n->layer && !slot->layer)
        return XPB_OUT_OF_MEMORY;
    *out = (uint32_t)g->n_nodes++;
    return XPB_OK;
}

int64_t xpb_graph_param_count(const xpb_graph *g)
{
    int64_t total = 0;
    for (size_t i = 1; i < g->n_values; i++) {
        const xpb_gvalue *v = &g->values[i];
        if (v->kind != XPB_VALUE_PARAM || !v->trainable)
            continue;
        int64_t n = 1;
        for (uint32_t d = 0; d < v->ndim; d++)
            n *= v->dims[d];
        total += n;
    }
    return total;
}

int xpb_op_is_loss(uint32_t kind)
{
    return kind == XPB_OP_SOFTMAX_XENT || kind == XPB_OP_MSE_LOSS || kind == XPB_OP_L1_LOSS;
}

void xpb_op_apply_attrs3(xpb_op *op, const xpb_op_attrs3 *a)
{
    if (!a || a->struct_size == 0)
        return;
#define XPB_COPY3_(member)                                                                         \
    if (XPB_HAS_MEMBER(a, xpb_op_attrs3, member))                                                  \
        memcpy(&op->member, &a->member, sizeof op->member);
    XPB_COPY3_(transpose)
    XPB_COPY3_(perm)
    XPB_COPY3_(causal)
    XPB_COPY3_(approximate)
    XPB_COPY3_(index_flags)
    XPB_COPY3_(padding_idx)
    XPB_COPY3_(ignore_index)
    XPB_COPY3_(label_smoothing)
#undef XPB_COPY3_
}
