/* The data of a model turned into a program: the forward graph the model plugin declared, the
 * program derived from it (training: forward, backward by automatic differentiation, gradient
 * accumulation and optimizer updates per phase; inference: the forward pass in evaluation
 * form), and what the host needs to feed it (initial values, data inputs, losses). Built by
 * model_program.c from the lowering steps (lowering.h); read by init.c and every room above. */
#ifndef XPB_CORE_PROGRAM_DATA_H
#define XPB_CORE_PROGRAM_DATA_H

#include <xpubench/backend.h>
#include <xpubench/model.h>

#include "program/graph.h"

typedef struct xpb_program_loss {
    uint32_t tensor; /* LOSS tensor */
    uint32_t phase;
    double weight;
} xpb_program_loss;

typedef struct xpb_model_program {
    xpb_graph *graph;
    xpb_program program; /* points into the arrays below */
    xpb_tensor_desc *tensors;
    uint32_t n_tensors;
    xpb_op *ops;
    uint32_t n_ops;
    xpb_phase *phases;
    uint32_t n_phases;
    uint32_t *tensor_value; /* per tensor: the graph value it holds (0 for derived tensors) */
    xpb_program_loss *losses;
    uint32_t n_losses;
    uint32_t training;
    uint64_t seed;
    /* The synthetic data's view of the global batch (xpb_model_program_batch): this program
     * draws samples [data_shard * batch, (data_shard + 1) * batch) of a global batch of
     * data_shards * batch samples. 1 and 0 for a single process. */
    uint32_t data_shards, data_shard;
    int64_t param_count;   /* trainable elements */
    int64_t flops_forward; /* per sample, multiply-add = 2 (conv, transposed conv, linear) */
    int64_t flops_train;   /* per sample, every conv/linear op of the training program */
    uint32_t layers;       /* forward nodes that have parameters (conv, linear, norm) */
    int64_t bytes;         /* per sample, the least every op of this program moves (op_cost.h) */
    int64_t tokens;        /* per sample, for a sequence model (its I32 [batch, S] input
                              "targets", else "tgt", else "tokens": S); 0 otherwise */
    xpb_optimizer_desc *optimizers; /* per phase, after scenario overrides */
} xpb_model_program;

#endif
