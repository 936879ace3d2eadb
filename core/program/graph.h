/* The forward graph a model declares through the builder (builder.c): values (inputs,
 * parameters, constants, op results), nodes (forward ops), parameter groups, training phases
 * with their weighted losses, and named outputs. The program (program_build.c) is derived
 * from it. Values and nodes are numbered from 1; 0 means "none". */
#ifndef XPB_CORE_GRAPH_H
#define XPB_CORE_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include <xpubench/model.h>
#include <xpubench/shapes.h>

#include "base/errmsg.h"

typedef enum xpb_value_kind {
    XPB_VALUE_INPUT = 1,
    XPB_VALUE_PARAM = 2, /* trainable or state (trainable == 0) */
    XPB_VALUE_CONST = 3,
    XPB_VALUE_NODE = 4, /* result of a node */
} xpb_value_kind;

/* Graph-only node kinds (no op of their own in the program). */
#define XPB_GNODE_STOP_GRADIENT 1000u

/* Inputs a forward node may have (the LSTM has 7). */
#define XPB_GNODE_MAX_INPUTS 8

typedef struct xpb_gvalue {
    char *name;    /* unique among params/inputs/constants; the layer name for node results */
    uint32_t kind; /* xpb_value_kind */
    uint32_t dtype;
    uint32_t ndim;
    int64_t dims[XPB_MAX_DIMS];
    uint32_t node;      /* producing node (XPB_VALUE_NODE) */
    xpb_init init;      /* PARAM */
    uint32_t group;     /* PARAM */
    uint32_t trainable; /* PARAM */
    double lo, hi;      /* INPUT: synthetic range */
    double value;       /* CONST of one value */
    void *data;         /* CONST of given values (constant_data): numel 4-byte elements of dtype,
                           owned by the graph; NULL for one value */
} xpb_gvalue;

typedef struct xpb_gnode {
    uint32_t kind; /* forward xpb_op_kind, RESHAPE, or XPB_GNODE_STOP_GRADIENT */
    char *layer;
    uint32_t n_inputs;
    uint32_t inputs[XPB_GNODE_MAX_INPUTS]; /* value ids */
    xpb_op_attrs attrs;
    xpb_op_attrs3 attrs3; /* op set 3's attributes (model.h); struct_size 0 when none */
    uint32_t output;      /* value id */
} xpb_gnode;

typedef struct xpb_gloss {
    uint32_t value;
    double weight;
} xpb_gloss;

typedef struct xpb_gphase {
    char *name;
    uint32_t group;
    xpb_optimizer_desc optimizer;
    xpb_gloss *losses;
    size_t n_losses;
    double clip_max_norm; /* > 0: clip the phase's gradients by their global norm (builder) */
} xpb_gphase;

typedef struct xpb_goutput {
    char *name;
    uint32_t value;
} xpb_goutput;

typedef struct xpb_graph {
    xpb_gvalue *values; /* values[0] unused */
    size_t n_values;    /* including the unused 0 */
    xpb_gnode *nodes;   /* nodes[0] unused */
    size_t n_nodes;
    char **groups; /* groups[0] = "default" */
    size_t n_groups;
    xpb_gphase *phases;
    size_t n_phases;
    xpb_goutput *outputs;
    size_t n_outputs;
    uint32_t batch;
} xpb_graph;

/* An empty graph with group 0 ("default"). Owned by the caller: xpb_graph_free. */
xpb_status xpb_graph_new(xpb_graph **out, uint32_t batch);
void xpb_graph_free(xpb_graph *g);

/* Appends; the new id goes to *out. Strings are copied. */
xpb_status xpb_graph_add_value(uint32_t *out, xpb_graph *g, const xpb_gvalue *v);
xpb_status xpb_graph_add_node(uint32_t *out, xpb_graph *g, const xpb_gnode *n);

/* Number of trainable parameter elements (PyTorch's sum of p.numel()). */
int64_t xpb_graph_param_count(const xpb_graph *g);

/* True when node kind is a loss (SOFTMAX_XENT, MSE_LOSS, L1_LOSS). */
int xpb_op_is_loss(uint32_t kind);

/* Copies op-set-3 attributes `a` (NULL or struct_size 0: none) into op's members. */
void xpb_op_apply_attrs3(xpb_op *op, const xpb_op_attrs3 *a);

/* Infers the output shape of node `n` (a forward op, or a stop-gradient) with the SDK's rules
 * (xpb_op_infer_shape, include/xpubench/shapes.h); on failure err names the op and its layer
 * and says what was expected and found. xpb_shape_str ("[64, 3, 32, 32]") comes from there
 * too. */
xpb_status xpb_infer_shape(uint32_t *ndim, int64_t *dims, uint32_t *dtype, const xpb_graph *g,
                           const xpb_gnode *n, xpb_err *err);

#endif
