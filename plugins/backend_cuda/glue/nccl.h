/* ALL_REDUCE over NCCL (nccl.c). */
#ifndef XPB_CUX_NCCL_H
#define XPB_CUX_NCCL_H

#include <stddef.h>
#include <stdint.h>

#include <xpubench/comm.h>

#include "glue/exe.h"

/* Data-parallel programs (plan->n_coll > 0): loads NCCL, creates the executable's NCCL
 * communicator over `comm` (collective: every rank calls it in the same order) and agrees with
 * the other ranks that every one succeeded. Nothing when the plan has no collective step. */
xpb_status cux_nccl_setup(xpb_executable *exe, const xpb_communicator *comm);
/* Enqueues ALL_REDUCE step `rs` (in place, ncclAvg; a bucket's first step opens its NCCL group,
 * its last closes it). */
xpb_status cux_nccl_enqueue(xpb_executable *exe, const cux_run_step *rs);
/* Waits for the backend's stream: cudaStreamSynchronize without NCCL; with it, polls the stream
 * and ncclCommGetAsyncError within $XPB_DP_TIMEOUT, aborting the NCCL communicator on an error
 * or at the limit. Failures name op `op` (CUX_NONE: `what`). */
xpb_status cux_nccl_wait(xpb_executable *exe, uint32_t op, const char *what);
/* Aborts the executable's NCCL communicator (a failure elsewhere on this rank: the others must
 * not wait for its collectives); nothing without one. */
void cux_nccl_abort(xpb_executable *exe);
/* True once an error aborted the executable's NCCL communicator. */
int cux_nccl_failed(const xpb_executable *exe);
/* destroy: finalises and destroys the NCCL communicator (aborts it when that fails). */
void cux_nccl_teardown(xpb_executable *exe);
/* "NCCL 2.28.9", "NCCL absent" or "built without NCCL" into out (loads NCCL at first use). */
void cux_nccl_versions(char *out, size_t size);

#endif
