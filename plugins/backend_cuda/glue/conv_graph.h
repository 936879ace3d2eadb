/* A convolution step's cuDNN operation graph and its tuning key (conv_graph.c). */
#ifndef XPB_CUX_CONV_GRAPH_H
#define XPB_CUX_CONV_GRAPH_H

#include <stdint.h>

#include "glue/exe.h"

/* What builds a step's descriptors: every descriptor made goes into c->descs (owned by the
 * step, freed by cux_conv_free); failures name op `op` in exe->err. */
struct cux_conv_builder {
    xpb_executable *exe;
    cux_conv_run *c;
    uint32_t op;
};

/* A graph for the tuning cache: its shapes, types, layouts, attributes and epilogue (the caller
 * zeroes the padding: cux_conv_key does). */
struct cux_conv_key {
    int32_t mode, fused, precision, act, has_bias, has_resid;
    float alpha;
    int32_t types[3], layouts[3];
    int64_t dims[3][4];
    int32_t attrs[6];
};

/* Creates a descriptor of `type` into *out and b->c->descs (XPB_INTERNAL when the step holds
 * CUX_CONV_MAX_DESCS already). */
xpb_status cux_conv_make(struct cux_conv_builder *b, cudnnBackendDescriptorType_t type,
                         cudnnBackendDescriptor_t *out);

/* Builds and finalizes step `s`'s operation graph into *graph (fused: with its epilogue, when it
 * has one), and sets b->c's variant-pack ids and pointers and `fused`. */
xpb_status cux_conv_graph(struct cux_conv_builder *b, const cux_step *s, int fused,
                          cudnnBackendDescriptor_t *graph);

/* The tuning key of step `s` built fused or not (padding zeroed). */
void cux_conv_key(const xpb_executable *exe, const cux_step *s, int fused, struct cux_conv_key *k);

#endif
