/* Who the cuda plugin is. The loader the host loads (loader/loader.c) and the backend proper
 * behind it (abi/plugin.c) answer with the same descriptor fields, and the loader refuses a
 * backend proper whose answer differs (a file of another build). */
#ifndef CUX_ABI_IDENTITY_H
#define CUX_ABI_IDENTITY_H

#include <xpubench/plugin.h>

#define CUX_PLUGIN_NAME "cuda"
#define CUX_PLUGIN_VERSION "1.1.0"
#define CUX_PLUGIN_DESCRIPTION                                                                     \
    "NVIDIA GPUs (sm_75+): cuDNN 9 graphs, cuBLASLt, one CUDA graph per phase, NCCL for "          \
    "data-parallel runs; fp32, tf32, bf16-mixed, fp16-mixed"
#define CUX_PLUGIN_CAPS XPB_CAP_FUSION

/* Where the backend proper lives, relative to the loader's folder. */
#define CUX_PROPER_FILE "cuda/backend_cuda_impl.so"

#endif
