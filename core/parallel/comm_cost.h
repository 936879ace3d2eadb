/* What averaging a program's gradients costs, measured apart from the steps
 * (docs/distributed.md, "Measuring"): right after the timed repeats every rank sums, through
 * the same communicator the backends use, buffers of the sizes of the program's buckets (one
 * all-reduce per bucket, as a backend that coalesces a bucket calls it), a few times over.
 * Steps on CPU backends do not overlap this work with compute, so the time is what a step
 * spends communicating; on a backend that overlaps, it is an upper bound. */
#ifndef XPB_CORE_COMM_COST_H
#define XPB_CORE_COMM_COST_H

#include <stddef.h>
#include <stdint.h>

#include <xpubench/program.h>

#include "base/errmsg.h"
#include "parallel/parallel.h"

typedef struct xpb_comm_cost {
    uint32_t buckets; /* all-reduces per step */
    uint64_t bytes;   /* the gradient bytes each rank contributes per step */
    double seconds;   /* per step: the median over the repetitions of the slowest rank's time */
    uint32_t reps;    /* timed repetitions */
} xpb_comm_cost;

/* The buckets of program `p` (ALL_REDUCE ops; consecutive ops of one non-zero bucket number
 * form one): their number into *n and, when `floats` is not NULL, their sizes in floats into
 * floats[0 .. *n) (the caller sizes it with a first call). */
void xpb_program_buckets(const xpb_program *p, uint64_t *floats, uint32_t *n);

/* Measures the buckets of `p` over the ranks of `par`: one untimed repetition, then `reps`
 * timed ones, each started together (a barrier) and timed on every rank. Collective. */
xpb_status xpb_comm_cost_measure(xpb_comm_cost *out, xpb_parallel *par, const xpb_program *p,
                                 uint32_t reps, xpb_err *err);

#endif
