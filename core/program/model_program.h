/* A model turned into a program: the forward graph the model plugin declared, the program
 * derived from it (training: forward, backward by automatic differentiation, gradient
 * accumulation and optimizer updates per phase; inference: the forward pass in evaluation
 * form), and what the host needs to feed it (initial values, data inputs, losses). */
#ifndef XPB_CORE_MODEL_PROGRAM_H
#define XPB_CORE_MODEL_PROGRAM_H

#include <xpubench/backend.h>
#include <xpubench/model.h>

#include "program/graph.h"
#include "program/program_options.h"

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
    xpb_optimizer_desc *optimizers; /* per phase, after scenario overrides */
} xpb_model_program;

/* Builds `model` as `opt` says (variant, params, batch, mode, optimizer overrides) and derives
 * its program: for opt->world_size above 1 with average_gradients, a program of one rank that
 * averages its gradients over the ranks (ALL_REDUCE ops, bucketed by opt->bucket_mb), drawing
 * shard opt->rank of the global batch. *out is owned by the caller: xpb_model_program_free. */
xpb_status xpb_model_program_create(xpb_model_program **out, const xpb_model_api *model,
                                    const xpb_program_options *opt, xpb_err *err);
void xpb_model_program_free(xpb_model_program *mp);

/* The FLOPs (multiply-add = 2) of one program op; 0 for ops that are not counted. */
int64_t xpb_op_flops(const xpb_program *p, const xpb_op *op);

/* Writes every PARAM, STATE (running stats, optimizer state, constants) tensor's initial
 * value into `exe`: parameters from the seeded RNG as the model declared, state from its
 * initialiser or zero. Identical on every backend for one seed. */
xpb_status xpb_model_program_write_initial(const xpb_model_program *mp, const xpb_backend_api *api,
                                           xpb_executable *exe, xpb_err *err);

/* The initial value of tensor `t` (PARAM/STATE/CONST) into `buf` (xpb_tensor_bytes). */
xpb_status xpb_model_program_initial_value(const xpb_model_program *mp, uint32_t t, float *buf);

/* Synthetic data for INPUT tensor `t`, batch number `index` (0, 1, ...), into `buf`: this
 * program's shard of global batch `index`. Sample g of the global batches (counted over
 * all of them, g = index * data_shards * batch + data_shard * batch + i) comes from its own
 * random stream keyed by the seed, the input's name and g, so it does not depend on how the
 * global batch is split: N ranks at batch b see exactly what one process sees at N x b. */
xpb_status xpb_model_program_batch(const xpb_model_program *mp, uint32_t t, uint64_t index,
                                   void *buf);

/* Writes batch `index` of every INPUT tensor into `exe`. `scratch` must hold the largest
 * input (xpb_model_program_max_input_bytes). */
xpb_status xpb_model_program_write_batch(const xpb_model_program *mp, const xpb_backend_api *api,
                                         xpb_executable *exe, uint64_t index, void *scratch,
                                         xpb_err *err);
size_t xpb_model_program_max_input_bytes(const xpb_model_program *mp);

#endif
