/* The ABI facts of a program (see program_abi.h). */
#include "program/program_abi.h"

#include <string.h>

/* Whether `size` bytes at `p` are all zero. */
static int all_zero(const void *p, size_t size)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < size; i++)
        if (b[i])
            return 0;
    return 1;
}

uint64_t xpb_attrs_set_bits(const xpb_op_attrs *a)
{
    uint64_t bits = 0;
#define XPB_ATTR_SET_(name, bit, member)                                                           \
    if (!all_zero(&a->member, sizeof a->member))                                                   \
        bits |= XPB_ATTR(name);
    XPB_ATTR_MAP(XPB_ATTR_SET_)
#undef XPB_ATTR_SET_
    return bits;
}

/* The bits of the attributes later op sets appended to xpb_op. */
static uint64_t op_attrs_set_bits(const xpb_op *op)
{
    uint64_t bits = 0;
#define XPB_OP_ATTR_SET_(name, bit, member, opset)                                                 \
    if (!all_zero(&op->member, sizeof op->member))                                                 \
        bits |= XPB_ATTR(name);
    XPB_OP_ATTR_MAP(XPB_OP_ATTR_SET_)
#undef XPB_OP_ATTR_SET_
    return bits;
}

/* The op set an op needs: its kind's, or a later one for an attribute introduced later. */
static uint32_t op_needs(uint32_t kind, uint64_t attrs_set)
{
    uint32_t need = xpb_op_opset(kind);
    for (int bit = 0; bit < 64; bit++) {
        uint64_t mask = 1ull << bit;
        if (attrs_set & mask) {
            uint32_t a = xpb_attr_opset(mask);
            need = a > need ? a : need;
        }
    }
    return need ? need : XPB_OPSET_VERSION; /* unknown to this host: say the newest */
}

void xpb_program_seal(xpb_program *p, xpb_op *ops)
{
    uint32_t opset = 1;
    for (uint32_t i = 0; i < p->n_ops; i++) {
        xpb_op *op = &ops[i];
        op->attrs_set = xpb_attrs_set_bits(&op->attrs) | op_attrs_set_bits(op);
        op->opset = op_needs(op->kind, op->attrs_set);
        op->reserved_ = 0;
        op->reserved2_ = 0;
        op->reserved3_ = 0;
        op->kind_name = xpb_op_name(op->kind);
        opset = op->opset > opset ? op->opset : opset;
    }
    p->struct_size = sizeof *p;
    p->opset = opset;
    p->tensor_stride = sizeof(xpb_tensor_desc);
    p->op_stride = sizeof(xpb_op);
    p->phase_stride = sizeof(xpb_phase);
}

const xpb_op *xpb_program_first_op_beyond(const xpb_program *p, uint32_t opset)
{
    for (uint32_t i = 0; i < p->n_ops; i++) {
        const xpb_op *op = xpb_program_op(p, i);
        uint32_t need = XPB_OP_HAS(p, opset) && op->opset ? op->opset : xpb_op_opset(op->kind);
        if (need == 0 || need > opset)
            return op;
    }
    return NULL;
}
