/* The plain-C side of the cuda backend's collectives (ALL_REDUCE over NCCL), without any CUDA or
 * NCCL header, so that tests/test_cuda_plan.c checks it where there is neither:
 *
 *   coll_lib.c     NCCL loaded with dlopen at first use (libnccl.so.2, or $XPB_NCCL_LIBRARY),
 *                  so that the plugin loads and runs single-process where NCCL is absent; its
 *                  version (ncclGetVersion), the messages of NCCL failures, the wait limit;
 *   coll_device.c  which device a rank of a data-parallel run uses.
 *
 * The entry points are declared here with the signatures of NCCL's documentation (nccl.h):
 * ncclResult_t, ncclDataType_t and ncclRedOp_t are C enums (int), ncclComm_t and cudaStream_t
 * opaque pointers, ncclUniqueId 128 bytes passed by value; nccl.c checks these against nccl.h
 * at compile time where the header exists. */
#ifndef XPB_CUX_COLL_H
#define XPB_CUX_COLL_H

#include <stddef.h>
#include <stdint.h>

#include <xpubench/status.h>

/* ncclResult_t values the backend tells apart (nccl.h). */
enum { CUX_NCCL_SUCCESS = 0, CUX_NCCL_IN_PROGRESS = 7 };
/* ncclDataType_t ncclFloat32 and ncclRedOp_t ncclAvg (NCCL >= 2.10). */
enum { CUX_NCCL_FLOAT32 = 7, CUX_NCCL_AVG = 4 };
/* NCCL_VERSION(2, 10, 0): ncclAvg; graph capture needs 2.9; ncclGetLastError 2.13 and
 * ncclCommInitRankConfig 2.14 are used when present. */
#define CUX_NCCL_MIN_VERSION 21000

typedef struct cux_nccl_id {
    char internal[128]; /* ncclUniqueId */
} cux_nccl_id;

/* The library: entry points resolved with dlsym. Optional ones are NULL when absent. */
typedef struct cux_nccl_lib {
    void *handle; /* dlopen's; never closed (NCCL keeps threads) */
    int version;  /* ncclGetVersion's code */
    char version_text[32];
    int (*get_version)(int *version);
    int (*get_unique_id)(cux_nccl_id *id);
    int (*comm_init_rank)(void **comm, int nranks, cux_nccl_id id, int rank);
    /* optional (2.14): with a config whose `blocking` is 0, so that no call waits forever */
    int (*comm_init_rank_config)(void **comm, int nranks, cux_nccl_id id, int rank, void *config);
    int (*comm_finalize)(void *comm); /* optional (2.14): flushes before comm_destroy */
    int (*comm_destroy)(void *comm);
    int (*comm_abort)(void *comm);
    int (*comm_get_async_error)(void *comm, int *async_error);
    const char *(*get_error_string)(int result);
    const char *(*get_last_error)(void *comm); /* optional (2.13) */
    int (*all_reduce)(const void *send, void *recv, size_t count, int datatype, int op, void *comm,
                      void *stream);
    int (*group_start)(void);
    int (*group_end)(void);
} cux_nccl_lib;

/* Loads NCCL from `path` (a file name the loader searches, or a path) into *lib (the caller's)
 * and checks its version. XPB_UNSUPPORTED with a sentence in `err` (size bytes) when the file
 * cannot be loaded, lacks an entry point or is older than 2.10. */
xpb_status cux_nccl_load_from(cux_nccl_lib *lib, const char *path, char *err, size_t size);

/* The process's NCCL, loaded once at first use from $XPB_NCCL_LIBRARY, else libnccl.so.2 (found
 * through the plugin's RUNPATH, which holds the folder where the build found NCCL, then the
 * loader's path). *out is static, valid until the process ends; a failure is remembered and
 * said again (with `err`) on every later call. */
xpb_status cux_nccl_get(const cux_nccl_lib **out, char *err, size_t size);

/* "2.28.9" from ncclGetVersion's code (which changed its encoding at 2.9: 2.8.4 is 2804, 2.9.6
 * is 20906) into out. */
void cux_nccl_version_string(char *out, size_t size, int code);

/* The sentence of an NCCL failure, into err (size bytes): "<where>: rank R of N (device D):
 * <call>: <ncclGetErrorString>[: <ncclGetLastError>]", pointing at NCCL_DEBUG=INFO when NCCL's
 * words do not already.
 * `where` names the op and its layer (cux_op_label) or the stage; `last` may be NULL or empty.
 * Returns the status the failure maps to: XPB_DEVICE_ERROR (XPB_OUT_OF_MEMORY is not told
 * apart by NCCL's codes). */
xpb_status cux_nccl_message(char *err, size_t size, const char *where, uint32_t rank,
                            uint32_t ranks, int device, const char *call, const char *text,
                            const char *last);

/* How long a rank waits for an NCCL collective or initialisation before it aborts the NCCL
 * communicator: $XPB_DP_TIMEOUT seconds (the host's limit for its own collectives, 900 when
 * unset or not a number), 0: forever (returned as a negative number). */
double cux_nccl_timeout(void);

/* The device a rank uses (docs/backend-cuda.md "Data-parallel runs"): the index the backend was
 * opened with, unless that is the default 0 and the run has several ranks on this host, in which
 * case local_rank % device_count. `xpubench run` opens the scenario's device + local_rank (that
 * index stands); a program that opens device 0 on every rank (tests/dp_check) gets one GPU per
 * local rank. -1 when that mapping would put two ranks of this host on one GPU (more local ranks
 * than devices, each seeing them all), which NCCL does not support. */
int cux_rank_device(int opened, uint32_t local_rank, uint32_t local_size, int device_count);

#endif
