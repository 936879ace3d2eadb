/* What an op costs, counted on the program (docs/workloads.md, docs/report.md): the FLOPs of
 * its multiply-adds and the bytes it must move at the least. Together they place an op in a
 * roofline: arithmetic intensity = FLOPs / bytes. */
#ifndef XPB_CORE_OP_COST_H
#define XPB_CORE_OP_COST_H

#include <stdint.h>

#include <xpubench/program.h>

/* The FLOPs (multiply-add = 2) of one op: convolutions, linear layers, matmuls (attention's
 * included) and the LSTM, forward and backward; 0 for ops that are not counted (elementwise,
 * normalisation, pooling, losses, updates). */
int64_t xpb_op_flops(const xpb_program *p, const xpb_op *op);

/* The bytes one op must move at the least: every input read once and every output written
 * once (4 bytes an element), an input the op updates in place (marked * in XPB_OP_MAP:
 * running statistics, optimizer state, parameters of updates, ALL_REDUCE's and CLIP_GRAD_NORM's
 * gradients) read and written, a tensor appearing twice counted once; RESHAPE moves nothing (a
 * view of the same bytes). Outputs that are not wanted (XPB_NO_TENSOR) move nothing. */
int64_t xpb_op_bytes(const xpb_program *p, const xpb_op *op);

#endif
