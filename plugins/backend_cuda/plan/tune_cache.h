/* Decisions remembered for the rest of the process: the cuDNN engine configuration and the
 * cuBLASLt algorithm that won the timing of one convolution or matmul shape on one device, so
 * that the next compile of the same shape (the next run of a scenario, the other phase of a
 * program, the conformance suite's second model case) chooses without timing again. Keys and
 * values are bytes (callers zero the padding of the structs they pass). Thread-safe. */
#ifndef XPB_CUX_TUNE_CACHE_H
#define XPB_CUX_TUNE_CACHE_H

#include <stddef.h>

enum { CUX_TUNE_CONV = 1, CUX_TUNE_MATMUL = 2 };

/* Copies the value stored for (kind, device, key) into value (value_size bytes) and returns 1,
 * or returns 0 when there is none (or its size differs). */
int cux_tune_find(int kind, int device, const void *key, size_t key_size, void *value,
                  size_t value_size);

/* Stores a copy of value for (kind, device, key), replacing an earlier one. Returns 0, or -1
 * when memory ran out (the decision is then simply not remembered). */
int cux_tune_add(int kind, int device, const void *key, size_t key_size, const void *value,
                 size_t value_size);

/* Entries stored so far (tests). */
size_t cux_tune_count(void);

#endif
