/* The cuda backend's plan: every decision compile makes about a program, in plain C without
 * any CUDA header, so that the test suite checks it on machines without a GPU
 * (tests/test_cuda_plan.c). The CUDA side (glue/, abi/) only turns a plan into cuDNN graphs,
 * cuBLASLt matmuls, kernel launches and CUDA graphs. The data model is plan_types.h.
 *
 * How a program becomes a plan (cux_plan_build in plan.c, in this order):
 *   1. plan_check.c    validates the program and the options against the device (precision
 *                      policies the device cannot honour are refused here, target.c);
 *   2. plan_tensor.c   decides each tensor's storage: element type (fp32, or the policy's
 *                      16-bit type for activations under a mixed policy) and layout (NHWC for
 *                      4-D tensors under tensor-core policies, canonical NCHW otherwise);
 *   3. plan_fusion.c   decides which ops another op's step absorbs;
 *   4. plan_lower.c    turns every op into steps (plan_step.c: the steps and the views of their
 *                      operands, with the conversions where an engine needs another type or
 *                      layout than the storage): a cuDNN convolution graph or a cuBLASLt matmul
 *                      (plan_lower_engines.c), an own kernel (plan_lower_kernels.c); the
 *                      bookkeeping steps of each phase, the fp16 loss-scaling steps, and the
 *                      low-precision shadows of parameters;
 *                      ALL_REDUCE becomes one NCCL step per gradient, a bucket one NCCL group
 *                      (nothing with one rank: the mean over one rank is the identity);
 *   5. plan_memory.c   places every buffer in one arena by the steps that use it.
 * Tensors cross the host boundary in the canonical layout (fp32 or int32, NCHW);
 * glue/transfer.c converts to and from the storage. */
#ifndef XPB_CUX_PLAN_H
#define XPB_CUX_PLAN_H

#include <stddef.h>

#include "plan/plan_types.h"

/* Builds the plan of `prog` (borrowed: it must outlive the plan) for `opt` on `target`.
 * *out is owned by the caller (cux_plan_free). On failure *out is NULL, the status is
 * XPB_UNSUPPORTED (an op, attribute or policy the backend or device cannot do),
 * XPB_INVALID_ARGUMENT (a malformed program) or XPB_OUT_OF_MEMORY, and `err` (err_size
 * bytes) holds a message naming the op and its layer. */
xpb_status cux_plan_build(cux_plan **out, const xpb_program *prog, const cux_options *opt,
                          const cux_target *target, char *err, size_t err_size);
void cux_plan_free(cux_plan *plan);

#endif
