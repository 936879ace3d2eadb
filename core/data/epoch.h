/* The order in which an epoch visits a dataset's training samples, and each rank's share of it.
 * An epoch is a permutation of 0..n-1 keyed by the run's seed and the epoch number (Fisher-Yates
 * driven by splitmix64), the same on every backend and every rank. Global batch k covers
 * positions [k * G, (k + 1) * G) of the permutation, G = ranks x batch; rank r takes its slice
 * [k * G + r * batch, k * G + (r + 1) * batch), so ranks read disjoint samples and N ranks at
 * batch b see exactly what one process sees at N x b. The last n mod G samples of an epoch do
 * not fill a global batch and are left out of that epoch (a fresh permutation every epoch means
 * no sample is left out for long); docs/results.md says so. */
#ifndef XPB_CORE_EPOCH_H
#define XPB_CORE_EPOCH_H

#include <stddef.h>
#include <stdint.h>

/* Fills order[0..n) with epoch `epoch`'s permutation for `seed`. */
void xpb_epoch_order(uint32_t *order, uint32_t n, uint64_t seed, uint32_t epoch);

/* Global batches per epoch: n / (ranks * batch), rounded down. */
uint32_t xpb_epoch_batches(uint32_t n, uint32_t batch, uint32_t ranks);

/* The sample of position i (0..batch) of rank `rank`'s part of global batch k in `order`. */
static inline uint32_t xpb_epoch_sample(const uint32_t *order, uint32_t k, uint32_t batch,
                                        uint32_t ranks, uint32_t rank, uint32_t i)
{
    return order[(size_t)k * ranks * batch + (size_t)rank * batch + i];
}

#endif
