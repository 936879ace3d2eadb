/* Gradient averaging in a data-parallel training program (see lowering.h). Each rank runs the
 * same program on its own shard of the batch; an ALL_REDUCE op (op set 2) replaces a
 * parameter's gradient by its mean over the ranks. As PyTorch's DistributedDataParallel does,
 * a gradient is averaged as soon as backward has completed it (gradients complete in reverse
 * order of the forward pass), and gradients are grouped into buckets of about bucket_mb MiB:
 * the ops of one bucket are consecutive and share a bucket number, so that a backend may start
 * one collective for the whole bucket while the rest of backward runs. Every ALL_REDUCE comes
 * before the optimizer update that reads its gradient (the updates follow the backward ops). */
#include <stdlib.h>

#include "program/lowering.h"

/* ready_at value of a parameter whose gradient is finished. */
#define SYNC_DONE UINT32_MAX

int xpb_lower_sync_enabled(const lowering *L)
{
    const xpb_program_options *cfg = L->cfg;
    return L->mp->training && cfg->world_size > 1 && cfg->average_gradients;
}

xpb_status xpb_lower_sync_begin(lowering *L, const uint8_t *need, const uint8_t *rg)
{
    const xpb_graph *g = L->g;
    for (uint32_t v = 0; v < g->n_values; v++) {
        L->ready_at[v] = 0;
        L->param_grad[v] = XPB_NO_TENSOR;
    }
    L->n_pending = 0;
    L->pending_bytes = 0;
    /* Backward visits nodes from the last to the first: a parameter's gradient is complete
     * after the backward ops of its first consumer (in forward order) that takes part. */
    for (uint32_t nid = (uint32_t)g->n_nodes - 1; nid >= 1; nid--) {
        const xpb_gnode *n = &g->nodes[nid];
        if (!need[nid] || !rg[n->output] || n->kind == XPB_GNODE_STOP_GRADIENT)
            continue;
        for (uint32_t i = 0; i < n->n_inputs; i++) {
            uint32_t v = n->inputs[i];
            if (g->values[v].kind == XPB_VALUE_PARAM && rg[v])
                L->ready_at[v] = nid;
        }
    }
    return XPB_OK;
}

/* The layer of the op that last wrote tensor `t` (a gradient: its backward op), for the
 * ALL_REDUCE that averages it; "" when none did. */
static const char *writer_layer(const lowering *L, uint32_t t)
{
    for (uint32_t i = L->mp->n_ops; i-- > 0;) {
        const xpb_op *op = &L->mp->ops[i];
        for (uint32_t k = 0; k < op->n_outputs; k++)
            if ((op->outputs_all ? op->outputs_all[k] : op->outputs[k]) == t)
                return op->layer;
    }
    return "";
}

/* Emits the ALL_REDUCE ops of the pending gradients as one bucket (bucket_mb > 0) or as one
 * bucket each (bucket number 0). */
static xpb_status flush_bucket(lowering *L)
{
    uint32_t bucket = 0;
    if (L->n_pending == 0)
        return XPB_OK;
    if (L->cfg->bucket_mb > 0)
        bucket = L->next_bucket++;
    for (size_t i = 0; i < L->n_pending; i++) {
        uint32_t t = L->pending[i];
        xpb_status st =
            xpb_lower_emit(L, XPB_OP_ALL_REDUCE, writer_layer(L, t), &t, 1, NULL, 0, NULL);
        if (st)
            return st;
        L->mp->ops[L->mp->n_ops - 1].bucket = bucket;
    }
    L->n_pending = 0;
    L->pending_bytes = 0;
    return XPB_OK;
}

/* Finishes the gradient of parameter value `v` and adds it to the bucket being filled, which
 * is emitted once it holds bucket_mb MiB (at once when bucket_mb is 0). */
static xpb_status finish_param(lowering *L, uint32_t v)
{
    uint32_t grad;
    xpb_status st = xpb_lower_finalize_grad(&grad, L, v);
    L->ready_at[v] = SYNC_DONE;
    L->param_grad[v] = grad;
    if (st || grad == XPB_NO_TENSOR)
        return st;
    L->pending[L->n_pending++] = grad;
    L->pending_bytes += xpb_tensor_bytes(&L->mp->tensors[grad]);
    if ((double)L->pending_bytes >= L->cfg->bucket_mb * 1048576.0)
        return flush_bucket(L);
    return XPB_OK;
}

xpb_status xpb_lower_sync_after_node(lowering *L, uint32_t nid, const uint8_t *rg)
{
    const xpb_graph *g = L->g;
    for (uint32_t v = 1; v < g->n_values; v++) {
        if (L->ready_at[v] != nid || !rg[v])
            continue;
        xpb_status st = finish_param(L, v);
        if (st)
            return st;
    }
    return XPB_OK;
}

xpb_status xpb_lower_sync_end(lowering *L)
{
    /* Parameters no backward op reached have no gradient; finishing them emits nothing. */
    const xpb_graph *g = L->g;
    for (uint32_t v = 1; v < g->n_values; v++) {
        if (g->values[v].kind != XPB_VALUE_PARAM || L->ready_at[v] == SYNC_DONE ||
            L->ready_at[v] == 0)
            continue;
        xpb_status st = finish_param(L, v);
        if (st)
            return st;
    }
    return flush_bucket(L);
}
