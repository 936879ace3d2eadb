/* ALL_REDUCE (op set 2): the mean of a gradient over the ranks of a data-parallel run, in place
 * in host memory: the host communicator's sum (comm.h), then a division by the number of
 * ranks. Without a communicator (one process) the op is the identity. */
#include <stdio.h>

#include "ref.h"

xpb_status ref_all_reduce(const ref_op_args *a)
{
    const xpb_communicator *comm = a->comm;
    if (!comm || comm->size <= 1)
        return XPB_OK; /* the mean over one rank */
    float *x = a->in[0];
    int64_t n = xpb_tensor_numel(a->in_desc[0]);
    xpb_status st = comm->allreduce_sum_f32(comm->ctx, x, (size_t)n);
    if (st != XPB_OK) {
        snprintf(a->err, a->err_size,
                 "ALL_REDUCE (layer '%s'): the sum of %lld floats over %u ranks failed: %s",
                 a->op->layer ? a->op->layer : "", (long long)n, comm->size,
                 comm->last_error(comm->ctx));
        return st;
    }
    float ranks = (float)comm->size;
    for (int64_t i = 0; i < n; i++)
        x[i] /= ranks;
    return XPB_OK;
}
