/* What the host states about a program for the ABI (docs/plugin-abi.md, "Growing the op set
 * without breaking old backends"): each op's op set, attribute bits and name, the program's op
 * set as the maximum its ops need, and the strides of its arrays. Every program handed to a
 * backend goes through xpb_program_seal first, whoever built it (autodiff, conformance cases,
 * tests). */
#ifndef XPB_CORE_PROGRAM_ABI_H
#define XPB_CORE_PROGRAM_ABI_H

#include <xpubench/xpubench.h>

/* The XPB_ATTR() bits of the attributes of `attrs` whose value is not all-zero bytes. */
uint64_t xpb_attrs_set_bits(const xpb_op_attrs *attrs);

/* Fills, for ops[0 .. n_ops-1] (stride sizeof(xpb_op)), opset, attrs_set and kind_name, then
 * p's opset (the highest op set any op needs, at least 1), tensor/op/phase strides and
 * struct_size. `p->ops`, `n_ops`, `tensors`, `phases` must already be set; the ops are
 * written through `ops`, which must be the (writable) array p->ops points at. */
void xpb_program_seal(xpb_program *p, xpb_op *ops);

/* The first op of `p` that needs an op set above `opset`, or NULL when there is none. */
const xpb_op *xpb_program_first_op_beyond(const xpb_program *p, uint32_t opset);

#endif
