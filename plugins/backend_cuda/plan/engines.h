/* Which engines of cuDNN and cuBLASLt a precision policy accepts, and which cuDNN releases this
 * build runs with (engines.c). Plain C: the values of cuDNN's and cuBLASLt's enums it reads are
 * restated here, and glue/conv.c, glue/matmul.c and glue/device.c check them against the
 * libraries' headers at compile time. */
#ifndef XPB_CUX_ENGINES_H
#define XPB_CUX_ENGINES_H

#include <stddef.h>
#include <stdint.h>

/* cudnnBackendNumericalNote_t values the filter reads (cudnn_graph.h). */
enum {
    CUX_NOTE_TENSOR_CORE = 0,
    CUX_NOTE_DOWN_CONVERT_INPUTS = 1,
    CUX_NOTE_REDUCED_PRECISION_REDUCTION = 2,
};

/* cublasLtReductionScheme_t bits (cublasLt.h). */
enum { CUX_LT_REDUCTION_COMPUTE_TYPE = 2, CUX_LT_REDUCTION_ALL = 7 };

/* NULL when a cuDNN engine whose CUDNN_ATTR_ENGINE_NUMERICAL_NOTE lists `notes` (n_notes of
 * them) may run a convolution under `precision` (xpb_precision), else why not (static): every
 * policy promises fp32 accumulation and inputs in the storage type, so engines that reduce in a
 * lower precision or down-convert their inputs are refused; fp32 also refuses tensor cores
 * (TF32), because fp32 means fp32. */
const char *cux_engine_refusal(uint32_t precision, const int *notes, int n_notes);

/* The cuBLASLt reduction schemes (CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK) a matmul with an
 * output of storage type `out_type` (CUX_F32 ...) may use: any for fp32 outputs; for 16-bit
 * outputs only a split-K reduction in the compute type (fp32), never in the output type, so
 * that accumulation stays fp32 as the precision table says. */
uint32_t cux_lt_reduction_mask(int out_type);

/* The oldest cuDNN release this build runs with (CUDNN_VERSION's encoding: 9.0.0). */
#define CUX_CUDNN_MIN_VERSION 90000

/* 0 when the cuDNN loaded at run time can run this build: cudnnGetVersion() `version` (either
 * encoding: 8907 is 8.9.7, 91900 is 9.19.0) of major 9 and at least CUX_CUDNN_MIN_VERSION, built
 * for the CUDA major this plugin's runtime has (cudnnGetCudartVersion() `cudnn_cudart` against
 * `cudart`, both 1000*major + 10*minor). Else -1 with a sentence in out (size bytes) naming both
 * versions and what to install. `built` is the CUDNN_VERSION the plugin was compiled with (named in
 * the sentence). */
int cux_cudnn_refusal(char *out, size_t size, size_t version, size_t cudnn_cudart, int cudart,
                      size_t built);

#endif
