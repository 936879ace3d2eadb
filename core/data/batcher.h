/* The input pipeline of a run on a real dataset, part of what it measures (docs/results.md,
 * "Time to accuracy"): per epoch a permutation keyed by the seed (epoch.h), each rank its slice
 * of every global batch, samples normalised into the canonical layout (images [B, C, H, W] F32,
 * labels [B] I32), assembled on a host thread one batch ahead of the step that reads them. Two
 * buffers alternate: while the backend reads batch k (possibly copying it asynchronously until
 * the step's synchronize), the thread fills batch k + 1; a step that finds its batch not ready
 * waits, and the wait is counted. The last samples of an epoch that do not fill a global batch
 * are left out of that epoch. Evaluation batches of the test split go through the same
 * buffers, in order, the last one partial (`count` says how many samples are real). */
#ifndef XPB_CORE_BATCHER_H
#define XPB_CORE_BATCHER_H

#include <stddef.h>
#include <stdint.h>

#include "base/errmsg.h"
#include "data/dataset.h"

typedef struct xpb_batcher xpb_batcher; /* opaque */

/* One assembled batch; the buffers belong to the batcher and stay valid and unchanged until the
 * next xpb_batcher_next (so that an asynchronous copy may read them until the step ends). */
typedef struct xpb_batch {
    const float *images;   /* batch x C x H x W */
    const int32_t *labels; /* batch */
    uint32_t count;        /* real samples (the rest of a partial test batch repeats sample 0) */
    double waited;         /* seconds the caller waited for it */
} xpb_batch;

/* A pipeline over `ds` for batches of `batch` samples of this rank (`rank` of `ranks`), seeded
 * by `seed`. Starts its thread. *out is owned by the caller (xpb_batcher_free). */
xpb_status xpb_batcher_new(xpb_batcher **out, const xpb_dataset *ds, uint32_t batch, uint32_t ranks,
                           uint32_t rank, uint64_t seed, xpb_err *err);

/* Begins epoch `epoch` of the training split (its permutation; the first batch is assembled at
 * once) and returns how many batches it has for each rank. */
uint32_t xpb_batcher_train_epoch(xpb_batcher *b, uint32_t epoch);

/* Begins a pass over the test split in order; returns its batches (the last may be partial). */
uint32_t xpb_batcher_test_pass(xpb_batcher *b);

/* The next batch of the current epoch or pass (waiting for it if the thread is behind), and the
 * assembly of the one after starts. XPB_NOT_FOUND after the last one. */
xpb_status xpb_batcher_next(xpb_batch *out, xpb_batcher *b);

/* Seconds callers waited for batches since the batcher started. */
double xpb_batcher_waited(const xpb_batcher *b);

/* Stops the thread and frees everything; NULL is a no-op. */
void xpb_batcher_free(xpb_batcher *b);

#endif
