/* The cost of a program's all-reduces, measured apart (see comm_cost.h). */
#include "parallel/comm_cost.h"

#include <stdlib.h>
#include <time.h>

#include "parallel/agree.h"

void xpb_program_buckets(const xpb_program *p, uint64_t *floats, uint32_t *n)
{
    uint32_t count = 0, open = 0; /* open: the bucket number of the bucket being summed */
    for (uint32_t i = 0; i < p->n_ops; i++) {
        const xpb_op *op = xpb_program_op(p, i);
        if (op->kind != XPB_OP_ALL_REDUCE) {
            open = 0;
            continue;
        }
        uint32_t b = XPB_OP_HAS(p, bucket) ? op->bucket : 0;
        uint64_t size = (uint64_t)xpb_tensor_numel(xpb_program_tensor(p, op->inputs[0]));
        if (b == 0 || b != open)
            count++;
        if (floats)
            floats[count - 1] = (b != 0 && b == open ? floats[count - 1] : 0) + size;
        open = b;
    }
    *n = count;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One repetition: every bucket summed once, from a barrier; this rank's seconds into *s. */
static xpb_status one_rep(double *s, xpb_parallel *par, float *buf, const uint64_t *floats,
                          uint32_t n, xpb_err *err)
{
    const xpb_communicator *c = &par->comm;
    xpb_status st = c->barrier(c->ctx);
    double t0 = now();
    for (uint32_t b = 0; b < n && st == XPB_OK; b++)
        st = c->allreduce_sum_f32(c->ctx, buf, (size_t)floats[b]);
    *s = now() - t0;
    if (st != XPB_OK)
        return xpb_err_set(err, st, "measuring the all-reduce: %s", c->last_error(c->ctx));
    return XPB_OK;
}

/* Times `reps` repetitions into per-rep slowest-rank seconds (times[reps]). */
static xpb_status time_reps(double *times, xpb_parallel *par, float *buf, const uint64_t *floats,
                            uint32_t n, uint32_t reps, xpb_err *err)
{
    double *all = calloc(par->comm.size, sizeof *all);
    if (!all)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    xpb_status st = XPB_OK;
    for (uint32_t r = 0; r <= reps && st == XPB_OK; r++) { /* r == 0: untimed */
        double mine;
        if ((st = one_rep(&mine, par, buf, floats, n, err)) ||
            (st = xpb_parallel_gather(par, &mine, all, sizeof mine, "the all-reduce timing", err)))
            break;
        double slowest = 0;
        for (uint32_t k = 0; k < par->comm.size; k++)
            slowest = all[k] > slowest ? all[k] : slowest;
        if (r > 0)
            times[r - 1] = slowest;
    }
    free(all);
    return st;
}

xpb_status xpb_comm_cost_measure(xpb_comm_cost *out, xpb_parallel *par, const xpb_program *p,
                                 uint32_t reps, xpb_err *err)
{
    uint32_t n = 0;
    *out = (xpb_comm_cost){.reps = reps};
    xpb_program_buckets(p, NULL, &n);
    if (n == 0 || reps == 0)
        return XPB_OK;
    xpb_status st = XPB_OK;
    uint64_t *floats = calloc(n, sizeof *floats), largest = 0;
    double *times = calloc(reps, sizeof *times);
    float *buf = NULL;
    if (!floats || !times) {
        st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
        goto free_arrays;
    }
    xpb_program_buckets(p, floats, &n);
    for (uint32_t b = 0; b < n; b++) {
        out->bytes += floats[b] * sizeof(float);
        largest = floats[b] > largest ? floats[b] : largest;
    }
    if (!(buf = calloc(largest, sizeof *buf))) {
        st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory for a %llu-float bucket",
                         (unsigned long long)largest);
        goto free_arrays;
    }
    if ((st = time_reps(times, par, buf, floats, n, reps, err)) == XPB_OK) {
        qsort(times, reps, sizeof *times, cmp_double);
        out->seconds = reps % 2 ? times[reps / 2] : (times[reps / 2 - 1] + times[reps / 2]) / 2;
        out->buckets = n;
    }
free_arrays:
    free(buf);
    free(times);
    free(floats);
    return st;
}
