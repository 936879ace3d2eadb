/* Sticky CUDA errors (sticky.c): the errors after which the CUDA context of a device is lost for
 * the rest of the process (every later CUDA call on it returns the same error), remembered per
 * device so that the backend reports the one real failure once and every later call on that
 * device says where the context was lost instead of failing with an unrelated-looking error.
 * Plain C (the cudaError_t values are restated; glue/status.c checks them against the
 * runtime's header), process-wide and thread-safe. */
#ifndef XPB_CUX_STICKY_H
#define XPB_CUX_STICKY_H

#include <stddef.h>

/* The cudaError_t values driver_types.h documents as leaving the process in an inconsistent
 * state ("the process must be terminated and relaunched"). */
#define CUX_STICKY_MAP(X)                                                                          \
    X(CONTAINED, 226)                                                                              \
    X(ILLEGAL_ADDRESS, 700)                                                                        \
    X(LAUNCH_TIMEOUT, 702)                                                                         \
    X(ASSERT, 710)                                                                                 \
    X(HARDWARE_STACK_ERROR, 714)                                                                   \
    X(ILLEGAL_INSTRUCTION, 715)                                                                    \
    X(MISALIGNED_ADDRESS, 716)                                                                     \
    X(INVALID_ADDRESS_SPACE, 717)                                                                  \
    X(INVALID_PC, 718)                                                                             \
    X(LAUNCH_FAILURE, 719)                                                                         \
    X(TENSOR_MEMORY_LEAK, 721)                                                                     \
    X(MPS_CLIENT_TERMINATED, 810)                                                                  \
    X(EXTERNAL_DEVICE, 911)

/* True when cudaError_t `code` is sticky. */
int cux_cuda_sticky(int code);

/* Remembers the first sticky failure on `device` (`message`, copied: the sentence the failing
 * call reported). Later ones on the same device are ignored. */
void cux_sticky_note(int device, const char *message);

/* 0 when `device` never had a sticky failure in this process; else -1 with a sentence in out
 * (size bytes): "<what>: device D is unusable: its CUDA context was lost by an earlier failure
 * (<the first failure's message>) ...". */
int cux_sticky_refusal(char *out, size_t size, int device, const char *what);

/* Forgets every remembered failure (tests). */
void cux_sticky_reset(void);

#endif
