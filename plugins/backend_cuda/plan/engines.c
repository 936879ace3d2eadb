/* The engine policies of the precision table (docs/backend-cuda.md "Precision policies") and the
 * cuDNN releases this build accepts.
 *
 * cuDNN describes every engine with numerical notes (CUDNN_ATTR_ENGINE_NUMERICAL_NOTE): it uses
 * tensor cores, it down-converts its inputs to a lower precision before computing, its reduction
 * runs in a reduced precision, it is FFT / Winograd based, it is nondeterministic. The filter
 * follows what PyTorch's cuDNN v8/v9 convolutions do (engines that down-convert inputs are never
 * taken; tensor cores under fp32 only when TF32 is allowed; reduced-precision reductions not for
 * 16-bit data unless asked), with this project's policy: fp32 accumulation everywhere, TF32 only
 * under the tf32 policy. FFT, Winograd and nondeterministic engines are accepted (their error is
 * within the tolerances of docs/conformance.md; a run is not required to repeat bit for bit).
 *
 * cuDNN 9 keeps its backend API within the major: this build uses only descriptors, attributes
 * and calls that every 9.x release has (the execution plan and operation graph get the handle,
 * CUDNN_ATTR_EXECUTION_PLAN_HANDLE and CUDNN_ATTR_OPERATIONGRAPH_HANDLE, which 9.x marks
 * deprecated in favour of device-property descriptors but still accepts), so any 9.x from 9.0
 * runs it, provided it was built for the same CUDA major as the plugin's runtime (NVIDIA ships
 * cuDNN 9 per CUDA major: cudnn9-cuda-12, cudnn9-cuda-13). */
#include <stdio.h>

#include "kernels/kinds.h"
#include "plan/engines.h"

#include <xpubench/backend.h>

const char *cux_engine_refusal(uint32_t precision, const int *notes, int n_notes)
{
    for (int i = 0; i < n_notes; i++) {
        switch (notes[i]) {
        case CUX_NOTE_DOWN_CONVERT_INPUTS:
            return "down-converts its inputs";
        case CUX_NOTE_REDUCED_PRECISION_REDUCTION:
            return "reduces in a precision below fp32";
        case CUX_NOTE_TENSOR_CORE:
            if (precision == XPB_PRECISION_FP32)
                return "uses tensor cores (TF32) under fp32";
            break;
        default:
            break;
        }
    }
    return NULL;
}

uint32_t cux_lt_reduction_mask(int out_type)
{
    return out_type == CUX_F32 ? CUX_LT_REDUCTION_ALL : CUX_LT_REDUCTION_COMPUTE_TYPE;
}

/* major, minor, patch of a cudnnGetVersion() code: 1000*major + 100*minor + patch up to cuDNN
 * 8, 10000*major + 100*minor + patch from cuDNN 9 on. */
static void split_version(size_t v, unsigned long out[3])
{
    size_t unit = v < 10000 ? 1000 : 10000;
    out[0] = (unsigned long)(v / unit);
    out[1] = (unsigned long)(v % unit / 100);
    out[2] = (unsigned long)(v % 100);
}

int cux_cudnn_refusal(char *out, size_t size, size_t version, size_t cudnn_cudart, int cudart,
                      size_t built)
{
    unsigned long v[3], b[3];
    split_version(version, v);
    split_version(built, b);
    unsigned long major = v[0], minor = v[1], patch = v[2];
    if (major != 9 || version < CUX_CUDNN_MIN_VERSION) {
        snprintf(out, size,
                 "cuDNN %lu.%lu.%lu found at run time; the cuda backend was built with cuDNN "
                 "%lu.%lu.%lu and runs with cuDNN 9 (9.0.0 or newer): install cuDNN 9 for CUDA %d "
                 "(NVIDIA's cudnn9-cuda-%d) or put its lib folder first on LD_LIBRARY_PATH",
                 major, minor, patch, b[0], b[1], b[2], cudart / 1000, cudart / 1000);
        return -1;
    }
    if (cudnn_cudart / 1000 != (size_t)(cudart / 1000)) {
        snprintf(out, size,
                 "cuDNN %lu.%lu.%lu found at run time was built for CUDA %lu.%lu, but this plugin "
                 "runs CUDA %d.%d: install cuDNN 9 for CUDA %d (NVIDIA's cudnn9-cuda-%d)",
                 major, minor, patch, (unsigned long)(cudnn_cudart / 1000),
                 (unsigned long)(cudnn_cudart % 1000 / 10), cudart / 1000, cudart % 1000 / 10,
                 cudart / 1000, cudart / 1000);
        return -1;
    }
    return 0;
}
