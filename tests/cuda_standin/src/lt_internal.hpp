// What the parts of the cuBLASLt stand-in share (cuBLAS documentation, "Using the cuBLASLt API":
// cublasLtMatmul, cublasLtMatmulDescAttributes_t, cublasLtMatrixLayoutAttribute_t,
// cublasLtMatmulPreferenceAttributes_t, cublasLtEpilogue_t, cublasLtMatmulAlgoGetHeuristic; the
// same texts are the comments of cublasLt.h).
#ifndef XPBSI_LT_INTERNAL_HPP
#define XPBSI_LT_INTERNAL_HPP

#include <cublasLt.h>

#include <cstdint>
#include <map>
#include <string>

#include "numerics.hpp"

namespace xpbsi
{
namespace lt
{

// Attributes are stored as the raw bytes of their documented C type (at most 8).
struct attr_def {
    int attr;
    size_t size;
    uint64_t dflt;
};

struct object {
    unsigned magic;
    const attr_def *defs;
    size_t n_defs;
    std::map<int, uint64_t> values;
    uint64_t get(int attr) const; // the value, or its default
};

// The descriptors behind cublasLtMatmulDesc_t, cublasLtMatrixLayout_t and
// cublasLtMatmulPreference_t (NULL when the handle is not one of them); owned by the caller of
// the Create function until the Destroy function.
object *matmul_desc(cublasLtMatmulDesc_t d);
object *layout(cublasLtMatrixLayout_t l);
object *preference(cublasLtMatmulPreference_t p);
bool live_handle(cublasLtHandle_t h);

// A matrix as a layout describes it.
struct matrix {
    elem type;
    cudaDataType_t cuda_type;
    bool row_major;
    int64_t rows, cols, ld, batch, batch_stride;
    int64_t at(int64_t r, int64_t c) const
    {
        return row_major ? r * ld + c : r + c * ld;
    }
    size_t bytes() const; // from the first element of batch 0 to past the last of the last batch
};
matrix matrix_of(const object &layout);
elem elem_of(cudaDataType_t t);

// A whole matmul problem, checked: what cublasLtMatmul computes.
struct problem {
    matrix a, b, c, d;
    bool ta, tb;
    int64_t m, n, k, batch;
    cublasComputeType_t compute;
    uint32_t epilogue;
    elem bias_type, aux_type;
    const void *bias;
    int64_t bias_stride;
    void *aux;
    int64_t aux_ld, aux_stride;
};
// Checks a problem as cublasLtMatmulAlgoGetHeuristic and cublasLtMatmul do: the status and, on
// failure, why (printed by the caller).
cublasStatus_t check_problem(const object &desc, const object &a, const object &b, const object &c,
                             const object &d, problem &p, std::string &why);

// What an algorithm does to the numbers.
struct algo_numerics {
    elem round_inputs; // f32: exact; else inputs rounded to TF32 (elem::none), fp16 or bf16
    bool split_k;      // the reduction in two halves, summed at the end (algorithm 1)
    bool half_accumulate;
};
// Computes D (and the epilogue's outputs) for the problem on the given memory.
void run_matmul(const problem &p, float alpha, float beta, const void *A, const void *B,
                const void *C, void *D, const algo_numerics &num);

constexpr uint64_t ALGO_MAGIC = 0x78706273616c676full; // "xpbsalgo"
constexpr size_t SPLIT_K_WORKSPACE = 4096;

} // namespace lt
} // namespace xpbsi

#endif
