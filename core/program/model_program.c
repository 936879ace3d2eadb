/* A model's program (see model_program.h): the graph built by the model plugin, lowered
 * phase by phase (lowering.h), with its losses, tensor lifetimes, FLOP and parameter counts,
 * sealed for the ABI (program_abi.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program/lowering.h"
#include "program/model_program.h"
#include "program/op_cost.h"
#include "base/names.h"
#include "program/program_abi.h"

/* Operand k of op: inputs first, then outputs, from whichever array holds it. */
static uint32_t operand(const xpb_op *op, uint32_t k)
{
    if (k < op->n_inputs)
        return op->inputs_all ? op->inputs_all[k] : op->inputs[k];
    k -= op->n_inputs;
    return op->outputs_all ? op->outputs_all[k] : op->outputs[k];
}

static void compute_lifetimes(xpb_model_program *mp)
{
    uint32_t last = mp->n_ops ? mp->n_ops - 1 : 0;
    for (uint32_t t = 0; t < mp->n_tensors; t++) {
        mp->tensors[t].first_op = UINT32_MAX;
        mp->tensors[t].last_op = 0;
    }
    for (uint32_t i = 0; i < mp->n_ops; i++) {
        const xpb_op *op = &mp->ops[i];
        for (uint32_t k = 0; k < op->n_inputs + op->n_outputs; k++) {
            uint32_t t = operand(op, k);
            if (t == XPB_NO_TENSOR) /* an optional operand not wanted */
                continue;
            xpb_tensor_desc *d = &mp->tensors[t];
            if (d->first_op == UINT32_MAX)
                d->first_op = i;
            d->last_op = i;
        }
    }
    for (uint32_t t = 0; t < mp->n_tensors; t++) {
        xpb_tensor_desc *d = &mp->tensors[t];
        if ((d->flags & (XPB_TENSOR_PERSISTENT | XPB_TENSOR_HOST_WRITE | XPB_TENSOR_HOST_READ)) ||
            d->first_op == UINT32_MAX) {
            d->first_op = 0;
            d->last_op = last;
        }
    }
}

static int64_t node_flops(const xpb_graph *g, const xpb_gnode *n)
{
    const xpb_gvalue *y = &g->values[n->output], *x = &g->values[n->inputs[0]];
    const xpb_gvalue *w = n->n_inputs > 1 ? &g->values[n->inputs[1]] : NULL;
    int64_t ny = 1, nx = 1;
    for (uint32_t d = 0; d < y->ndim; d++)
        ny *= y->dims[d];
    for (uint32_t d = 0; d < x->ndim; d++)
        nx *= x->dims[d];
    switch (n->kind) {
    case XPB_OP_CONV2D:
    case XPB_OP_CONV_T2D:
        return 2 * (n->kind == XPB_OP_CONV2D ? ny : nx) * w->dims[1] * w->dims[2] * w->dims[3];
    case XPB_OP_LINEAR:
        return 2 * x->dims[0] * w->dims[0] * w->dims[1];
    case XPB_OP_MATMUL:
    case XPB_OP_BATCHED_MATMUL: /* y elements x K, K from a as held */
        return 2 * ny *
               ((n->attrs3.transpose & XPB_TRANSPOSE_A) ? x->dims[x->ndim - 2]
                                                        : x->dims[x->ndim - 1]);
    case XPB_OP_LSTM: /* 4H gates of I + H inputs, every step of every sample */
        return 2 * x->dims[0] * x->dims[1] * w->dims[0] *
               (x->dims[2] + g->values[n->inputs[2]].dims[1]);
    default:
        return 0;
    }
}

/* The tokens of one sample of a sequence model: the length S of its I32 [batch, S] input
 * "targets" (the tokens it predicts), else "tgt" (a translation's target side), else "tokens"
 * (a prompt); 0 for a model without one (docs/models.md, "Sequence models"). */
static int64_t sequence_tokens(const xpb_model_program *mp)
{
    static const char *const names[] = {"targets", "tgt", "tokens"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        for (uint32_t t = 0; t < mp->n_tensors; t++) {
            const xpb_tensor_desc *d = &mp->tensors[t];
            if (d->role == XPB_ROLE_INPUT && d->dtype == XPB_DTYPE_I32 && d->ndim == 2 &&
                strcmp(d->name, names[k]) == 0)
                return d->dims[1];
        }
    return 0;
}

static void count_model(xpb_model_program *mp, const xpb_graph *g)
{
    mp->param_count = xpb_graph_param_count(g);
    int64_t train = 0;
    for (uint32_t i = 0; mp->training && i < mp->n_ops; i++)
        train += xpb_op_flops(&mp->program, &mp->ops[i]);
    mp->flops_train = g->batch ? train / g->batch : 0;
    /* Forward FLOPs: the nodes that produce the model's outputs. */
    uint8_t *need = calloc(g->n_nodes, 1);
    int64_t fwd = 0;
    if (need) {
        for (size_t o = 0; o < g->n_outputs; o++)
            xpb_lower_mark_ancestors(g, g->outputs[o].value, need);
        for (uint32_t nid = 1; nid < g->n_nodes; nid++)
            if (need[nid])
                fwd += node_flops(g, &g->nodes[nid]);
        free(need);
    }
    mp->flops_forward = g->batch ? fwd / g->batch : 0;
    int64_t bytes = 0;
    for (uint32_t i = 0; i < mp->n_ops; i++)
        bytes += xpb_op_bytes(&mp->program, &mp->ops[i]);
    mp->bytes = g->batch ? bytes / g->batch : 0;
    mp->tokens = sequence_tokens(mp);
    mp->layers = 0;
    for (uint32_t nid = 1; nid < g->n_nodes; nid++) {
        uint32_t k = g->nodes[nid].kind;
        if (k == XPB_OP_CONV2D || k == XPB_OP_CONV_T2D || k == XPB_OP_LINEAR ||
            k == XPB_OP_BATCHNORM_TRAIN || k == XPB_OP_LAYER_NORM || k == XPB_OP_EMBEDDING ||
            k == XPB_OP_LSTM)
            mp->layers++;
    }
}

static xpb_status resolve_optimizers(xpb_model_program *mp, const xpb_program_options *cfg)
{
    mp->optimizers = calloc(mp->graph->n_phases, sizeof *mp->optimizers);
    if (!mp->optimizers)
        return XPB_OUT_OF_MEMORY;
    for (size_t p = 0; p < mp->graph->n_phases; p++) {
        xpb_optimizer_desc o = mp->graph->phases[p].optimizer;
        if (!isnan(cfg->lr))
            o.lr = cfg->lr;
        if (!isnan(cfg->momentum))
            o.momentum = cfg->momentum;
        if (!isnan(cfg->weight_decay))
            o.weight_decay = cfg->weight_decay;
        if ((o.kind == XPB_OPTIMIZER_ADAM || o.kind == XPB_OPTIMIZER_ADAMW) && o.eps == 0)
            o.eps = 1e-8;
        mp->optimizers[p] = o;
    }
    return XPB_OK;
}

/* Allocates the lowering's per-value and per-node arrays. */
static xpb_status lowering_init(lowering *L)
{
    const xpb_graph *g = L->g;
    L->tensor_of = malloc(g->n_values * sizeof *L->tensor_of);
    L->ws_of = malloc(g->n_nodes * sizeof *L->ws_of);
    L->computed = calloc(g->n_nodes, 1);
    L->grads = calloc(g->n_values, sizeof *L->grads);
    L->loss_weight = calloc(g->n_values, sizeof *L->loss_weight);
    L->param_grad = malloc(g->n_values * sizeof *L->param_grad);
    L->ready_at = calloc(g->n_values, sizeof *L->ready_at);
    L->pending = malloc(g->n_values * sizeof *L->pending);
    L->next_bucket = 1;
    if (!L->tensor_of || !L->ws_of || !L->computed || !L->grads || !L->loss_weight ||
        !L->param_grad || !L->ready_at || !L->pending)
        return xpb_lower_oom(L);
    for (size_t i = 0; i < g->n_values; i++)
        L->tensor_of[i] = L->param_grad[i] = XPB_NO_TENSOR;
    for (size_t i = 0; i < g->n_nodes; i++)
        L->ws_of[i] = XPB_NO_TENSOR;
    return XPB_OK;
}

static void lowering_free(lowering *L)
{
    free(L->tensor_of);
    free(L->ws_of);
    free(L->computed);
    if (L->grads)
        for (size_t i = 0; i < L->g->n_values; i++) {
            free(L->grads[i].tensors);
            free(L->grads[i].alias);
        }
    free(L->grads);
    free(L->loss_weight);
    free(L->param_grad);
    free(L->ready_at);
    free(L->pending);
}

/* Inputs, parameters, state and constants, in declaration order, before any op. */
static xpb_status declare_tensors(lowering *L)
{
    const xpb_graph *g = L->g;
    for (uint32_t v = 1; v < g->n_values; v++) {
        const xpb_gvalue *gv = &g->values[v];
        uint32_t role;
        if (gv->kind == XPB_VALUE_INPUT)
            role = XPB_ROLE_INPUT;
        else if (gv->kind == XPB_VALUE_PARAM)
            role = gv->trainable ? XPB_ROLE_PARAM : XPB_ROLE_STATE;
        else if (gv->kind == XPB_VALUE_CONST)
            role = XPB_ROLE_STATE;
        else
            continue;
        xpb_status st = xpb_lower_new_tensor(&L->tensor_of[v], L, gv->name, "", gv->dtype, role,
                                             gv->ndim, gv->dims, v);
        if (st)
            return st;
    }
    return XPB_OK;
}

/* Every phase of a training program (the graph's phases) or the one inference phase. */
static xpb_status lower_phases(lowering *L)
{
    xpb_model_program *mp = L->mp;
    mp->n_phases = mp->training ? (uint32_t)L->g->n_phases : 1;
    mp->phases = calloc(mp->n_phases, sizeof *mp->phases);
    if (!mp->phases)
        return xpb_lower_oom(L);
    for (uint32_t p = 0; p < mp->n_phases; p++) {
        mp->phases[p].name = mp->training ? L->g->phases[p].name : "inference";
        mp->phases[p].first_op = mp->n_ops;
        xpb_status st = mp->training ? xpb_lower_training_phase(L, p) : xpb_lower_inference(L);
        if (st)
            return st;
        mp->phases[p].n_ops = mp->n_ops - mp->phases[p].first_op;
        if (mp->phases[p].n_ops == 0)
            return xpb_err_set(L->err, XPB_INVALID_ARGUMENT, "model '%s': phase '%s' has no work",
                               L->cfg->model, mp->phases[p].name);
    }
    return XPB_OK;
}

/* The losses the host reads: every loss value that became a tensor. */
static xpb_status collect_losses(lowering *L)
{
    xpb_model_program *mp = L->mp;
    const xpb_graph *g = L->g;
    for (size_t p = 0; p < g->n_phases; p++)
        for (size_t i = 0; i < g->phases[p].n_losses; i++) {
            uint32_t t = L->tensor_of[g->phases[p].losses[i].value];
            if (t == XPB_NO_TENSOR)
                continue;
            xpb_program_loss *grown = realloc(mp->losses, (mp->n_losses + 1) * sizeof *grown);
            if (!grown)
                return xpb_lower_oom(L);
            mp->losses = grown;
            mp->losses[mp->n_losses++] = (xpb_program_loss){t, mp->training ? (uint32_t)p : 0,
                                                            g->phases[p].losses[i].weight};
        }
    return XPB_OK;
}

xpb_status xpb_model_program_create(xpb_model_program **out, const xpb_model_api *model,
                                    const xpb_program_options *cfg, xpb_err *err)
{
    xpb_status st;
    xpb_model_program *mp = calloc(1, sizeof *mp);
    lowering L = {.mp = mp, .cfg = cfg, .err = err};
    if (!mp)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    if ((st = xpb_build_graph(&mp->graph, model, cfg->model, cfg->batch, cfg->variant, cfg->params,
                              cfg->n_params, err)))
        goto free_program;
    L.g = mp->graph;
    mp->training = cfg->mode == XPB_MODE_TRAIN;
    mp->seed = cfg->seed;
    mp->data_shards = cfg->world_size > 1 ? cfg->world_size : 1;
    mp->data_shard = cfg->rank < mp->data_shards ? cfg->rank : 0;
    if ((st = resolve_optimizers(mp, cfg))) {
        xpb_err_set(err, st, "out of memory");
        goto free_program;
    }
    if ((st = lowering_init(&L)) || (st = declare_tensors(&L)) || (st = lower_phases(&L)) ||
        (st = collect_losses(&L)))
        goto free_lowering;
    compute_lifetimes(mp);
    mp->program = (xpb_program){.training = mp->training,
                                .n_tensors = mp->n_tensors,
                                .n_ops = mp->n_ops,
                                .n_phases = mp->n_phases,
                                .tensors = mp->tensors,
                                .ops = mp->ops,
                                .phases = mp->phases};
    xpb_program_seal(&mp->program, mp->ops);
    count_model(mp, L.g);
    lowering_free(&L);
    *out = mp;
    return XPB_OK;
free_lowering:
    lowering_free(&L);
free_program:
    xpb_model_program_free(mp);
    return st;
}

void xpb_model_program_free(xpb_model_program *mp)
{
    if (!mp)
        return;
    for (uint32_t i = 0; i < mp->n_tensors; i++) {
        free((char *)mp->tensors[i].name);
        free((char *)mp->tensors[i].layer);
    }
    for (uint32_t i = 0; i < mp->n_ops; i++) {
        free((char *)mp->ops[i].layer);
        free((void *)mp->ops[i].inputs_all);
        free((void *)mp->ops[i].outputs_all);
    }
    free(mp->tensors);
    free(mp->tensor_value);
    free(mp->ops);
    free(mp->phases);
    free(mp->losses);
    free(mp->optimizers);
    xpb_graph_free(mp->graph);
    free(mp);
}
