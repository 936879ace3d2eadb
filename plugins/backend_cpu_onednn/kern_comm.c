/* ALL_REDUCE (op set 2): a gradient's mean over the ranks of a data-parallel run, through the
 * host's communicator (comm.h) on host memory: its sum over the ranks, then a division by
 * their number. The ops of one bucket (consecutive ops with the same non-zero bucket number)
 * are coalesced into one collective: each op's step packs its gradient into the executable's
 * staging buffer, and the step of the bucket's last op sums the whole bucket at once, then
 * unpacks every gradient of it. A gradient is summed in the canonical layout (dense row-major,
 * fp32), whatever layout it is stored in: every rank chooses its layouts by itself (tune.c
 * times implementations), and an element-wise sum is right only when every rank lays the
 * elements out alike; a gradient stored otherwise goes through a reorder each way. Without a
 * communicator, or with one rank, the op compiles to nothing: the mean over one rank is the
 * gradient itself. */
#include <stdlib.h>
#include <string.h>

#include "odn.h"

xpb_status odn_comm_setup(xpb_executable *exe, const xpb_compile_options *opts)
{
    const xpb_communicator *c = XPB_MEMBER_OR(opts, xpb_compile_options, comm, NULL);
    if (c && (!XPB_HAS_MEMBER(c, xpb_communicator, last_error) || !c->allreduce_sum_f32 ||
              !c->last_error || c->size == 0))
        return odn_fail(exe, XPB_INVALID_ARGUMENT,
                        "compile: the communicator lacks allreduce_sum_f32 or last_error, or "
                        "has no rank");
    exe->comm.comm = c;
    return XPB_OK;
}

void odn_comm_free(xpb_executable *exe)
{
    free(exe->comm.staging);
    exe->comm.staging = NULL;
    exe->comm.cap = 0;
}

/* ---- kernels ---- */

/* The sum of `n` floats at `x` over the ranks, divided by their number. */
static xpb_status mean_over_ranks(odn_step *s, float *x, int64_t n)
{
    odn_comm *c = s->ctx;
    const xpb_communicator *comm = c->comm;
    xpb_status st = comm->allreduce_sum_f32(comm->ctx, x, (size_t)n);
    if (st != XPB_OK) {
        snprintf(c->err, sizeof c->err, "the sum of %lld floats over %u ranks failed: %s",
                 (long long)n, comm->size, comm->last_error(comm->ctx));
        s->why = c->err;
        return st;
    }
    float ranks = (float)comm->size;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++)
        x[i] /= ranks;
    return XPB_OK;
}

/* A bucket of one gradient: in place. p[0] floats. */
static xpb_status in_place_kernel(odn_step *s)
{
    return mean_over_ranks(s, s->o[0].ptr, s->p[0]);
}

/* Copies a gradient (o[0], p[1] floats) to the staging buffer at float p[0]. */
static xpb_status pack_kernel(odn_step *s)
{
    odn_comm *c = s->ctx;
    memcpy(c->staging + s->p[0], s->o[0].ptr, (size_t)s->p[1] * sizeof(float));
    return XPB_OK;
}

/* The whole bucket: p[0] floats of the staging buffer. */
static xpb_status bucket_kernel(odn_step *s)
{
    odn_comm *c = s->ctx;
    return mean_over_ranks(s, c->staging, s->p[0]);
}

/* Copies p[1] floats of the staging buffer from float p[0] back to a gradient (o[0]). */
static xpb_status unpack_kernel(odn_step *s)
{
    odn_comm *c = s->ctx;
    memcpy(s->o[0].ptr, c->staging + s->p[0], (size_t)s->p[1] * sizeof(float));
    return XPB_OK;
}

/* ---- compile ---- */

/* The gradient of ALL_REDUCE op `i`. */
static uint32_t grad_of(const xpb_executable *exe, uint32_t i)
{
    return xpb_program_op(exe->prog, i)->inputs[0];
}

/* How tensor `tid` is summed over the ranks: fp32, dense row-major, on every rank alike. */
static void fp32_view(const xpb_executable *exe, uint32_t tid, dnnl_memory_desc_t *md)
{
    odn_md_plain(md, xpb_program_tensor(exe->prog, tid), dnnl_f32);
}

static int64_t floats_of(const dnnl_memory_desc_t *md)
{
    return (int64_t)(dnnl_memory_desc_get_size(md) / sizeof(float));
}

/* The first and last op of op i's bucket: consecutive ALL_REDUCE ops of one phase with its
 * non-zero bucket number (shapes.h checked that a bucket is one such run); i alone for 0. */
static void bucket_range(const xpb_executable *exe, uint32_t i, uint32_t *first, uint32_t *last)
{
    const xpb_program *p = exe->prog;
    uint32_t b = XPB_OP_HAS(p, bucket) ? xpb_program_op(p, i)->bucket : 0;
    *first = *last = i;
    if (b == 0)
        return;
    while (*first > 0 && xpb_program_op(p, *first - 1)->kind == XPB_OP_ALL_REDUCE &&
           xpb_program_op(p, *first - 1)->bucket == b &&
           exe->op_phase[*first - 1] == exe->op_phase[i])
        (*first)--;
    while (*last + 1 < p->n_ops && xpb_program_op(p, *last + 1)->kind == XPB_OP_ALL_REDUCE &&
           xpb_program_op(p, *last + 1)->bucket == b &&
           exe->op_phase[*last + 1] == exe->op_phase[i])
        (*last)++;
}

/* Where the gradient of op i starts in its bucket's staging (floats before it). */
static int64_t offset_in_bucket(const xpb_executable *exe, uint32_t first, uint32_t i)
{
    int64_t off = 0;
    for (uint32_t j = first; j < i; j++) {
        dnnl_memory_desc_t md;
        fp32_view(exe, grad_of(exe, j), &md);
        off += floats_of(&md);
    }
    return off;
}

/* A kernel step of ALL_REDUCE op `op` (profiles and messages name it). */
static void comm_step(odn_step *s, xpb_executable *exe, uint32_t op, odn_kernel_fn fn)
{
    odn_step_init(s, exe, ODN_STEP_KERNEL);
    s->op = op;
    s->fn = fn;
    s->ctx = &exe->comm;
}

/* At the bucket's last op: the collective over the staging, then every gradient back. */
static xpb_status finish_bucket(xpb_executable *exe, uint32_t first, uint32_t last)
{
    int64_t total = offset_in_bucket(exe, first, last + 1);
    if ((size_t)total > exe->comm.cap) {
        float *grown = realloc(exe->comm.staging, (size_t)total * sizeof *grown);
        if (!grown)
            return odn_fail(exe, XPB_OUT_OF_MEMORY,
                            "compile: cannot allocate %lld floats to stage a gradient bucket",
                            (long long)total);
        exe->comm.staging = grown;
        exe->comm.cap = (size_t)total;
    }
    odn_step s;
    comm_step(&s, exe, last, bucket_kernel);
    s.p[0] = total;
    xpb_status st = odn_commit(exe, &s);
    for (uint32_t j = first; j <= last && st == XPB_OK; j++) {
        dnnl_memory_desc_t md;
        fp32_view(exe, grad_of(exe, j), &md);
        comm_step(&s, exe, j, unpack_kernel);
        if ((st = odn_out(exe, &s, 0, grad_of(exe, j), &md)) != XPB_OK)
            return st;
        s.p[0] = offset_in_bucket(exe, first, j);
        s.p[1] = floats_of(&md);
        st = odn_commit(exe, &s);
    }
    return st;
}

xpb_status odn_compile_comm(xpb_executable *exe)
{
    const xpb_communicator *comm = exe->comm.comm;
    if (!comm || comm->size <= 1)
        return XPB_OK; /* the mean over one rank: nothing to do */
    uint32_t i = exe->cur_op, first, last, grad = grad_of(exe, i);
    dnnl_memory_desc_t md;
    fp32_view(exe, grad, &md);
    bucket_range(exe, i, &first, &last);
    odn_step s;
    xpb_status st;
    if (first == last) {
        comm_step(&s, exe, i, in_place_kernel);
        if ((st = odn_inout(exe, &s, 0, grad, &md)) != XPB_OK)
            return st;
        s.p[0] = floats_of(&md);
        return odn_commit(exe, &s);
    }
    comm_step(&s, exe, i, pack_kernel);
    if ((st = odn_in(exe, &s, 0, grad, &md)) != XPB_OK)
        return st;
    s.p[0] = offset_in_bucket(exe, first, i);
    s.p[1] = floats_of(&md);
    if ((st = odn_commit(exe, &s)) != XPB_OK)
        return st;
    return i == last ? finish_bucket(exe, first, last) : XPB_OK;
}
