// The arithmetic of cublasLtMatmul and its epilogues (cublasLt.h, cublasLtEpilogue_t): the bias
// "vector length must match matrix D rows ... is broadcasted to all columns and added before
// applying final postprocessing"; ReLU is max(x, 0); GELU is cuBLASLt's tanh approximation;
// the _AUX forms also write the ReLU bit-mask (one bit per element, leading dimension in bits)
// or GELU's input; DRELU and DGELU multiply the product by the activation's derivative read from
// the aux input; the _BGRAD forms and BGRADA/BGRADB also write the bias gradient (the sum of
// the result's rows, of op(A)'s rows over k, of op(B)'s columns over k) in the bias type.
// Products of inputs are accumulated in fp32 (fp16 for CUBLAS_COMPUTE_16F).
#include <cmath>
#include <cstring>
#include <vector>

#include "lt_internal.hpp"
#include "rt_internal.hpp"

namespace xpbsi
{
namespace lt
{

namespace
{

constexpr float k_sqrt2_pi = 0.79788456080286536f;

float gelu(float x)
{
    return 0.5f * x * (1.0f + std::tanh(k_sqrt2_pi * (x + 0.044715f * x * x * x)));
}

float gelu_grad(float x)
{
    float u = k_sqrt2_pi * (x + 0.044715f * x * x * x), t = std::tanh(u);
    float du = k_sqrt2_pi * (1.0f + 3.0f * 0.044715f * x * x);
    return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * du;
}

float rounded(const algo_numerics &num, float x)
{
    if (num.round_inputs == elem::none)
        return round_tf32(x);
    return num.round_inputs == elem::f32 ? x : round_to(num.round_inputs, x);
}

bool check(const void *p, size_t bytes, const char *what)
{
    if (bytes == 0 || addressable(p, bytes))
        return true;
    make_sticky(cudaErrorIllegalAddress,
                "cublasLtMatmul: %s [%p, +%zu bytes) is not device "
                "memory: %s",
                what, p, bytes, describe(p).c_str());
    return false;
}

bool aux_bit(const void *aux, int64_t bit)
{
    return (static_cast<const unsigned char *>(aux)[bit / 8] >> (bit % 8)) & 1u;
}

void set_aux_bit(void *aux, int64_t bit, bool on)
{
    unsigned char &b = static_cast<unsigned char *>(aux)[bit / 8];
    b = on ? (unsigned char)(b | (1u << (bit % 8))) : (unsigned char)(b & ~(1u << (bit % 8)));
}

} // namespace

void run_matmul(const problem &p, float alpha, float beta, const void *A, const void *B,
                const void *C, void *D, const algo_numerics &num)
{
    uint32_t e = p.epilogue;
    bool relu = e == CUBLASLT_EPILOGUE_RELU || e == CUBLASLT_EPILOGUE_RELU_AUX ||
                e == CUBLASLT_EPILOGUE_RELU_BIAS || e == CUBLASLT_EPILOGUE_RELU_AUX_BIAS;
    bool gelu_fwd = e == CUBLASLT_EPILOGUE_GELU || e == CUBLASLT_EPILOGUE_GELU_AUX ||
                    e == CUBLASLT_EPILOGUE_GELU_BIAS || e == CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
    bool add_bias = (e & CUBLASLT_EPILOGUE_BIAS) && !(e & 8) && !(e & 64);
    bool drelu = e == CUBLASLT_EPILOGUE_DRELU || e == CUBLASLT_EPILOGUE_DRELU_BGRAD;
    bool dgelu = e == CUBLASLT_EPILOGUE_DGELU || e == CUBLASLT_EPILOGUE_DGELU_BGRAD;
    bool bgrad_d = e == CUBLASLT_EPILOGUE_DRELU_BGRAD || e == CUBLASLT_EPILOGUE_DGELU_BGRAD;
    bool writes_aux = (relu || gelu_fwd) && (e & 128);
    int64_t bias_len = e == CUBLASLT_EPILOGUE_BGRADB ? p.n : p.m;
    bool any_bias =
        add_bias || bgrad_d || e == CUBLASLT_EPILOGUE_BGRADA || e == CUBLASLT_EPILOGUE_BGRADB;
    size_t bias_bytes =
        any_bias ? (size_t)((p.batch - 1) * p.bias_stride + bias_len) * elem_size(p.bias_type) : 0;
    bool aux_bits = relu || drelu;
    int64_t aux_last = (p.batch - 1) * p.aux_stride + (p.n - 1) * p.aux_ld + p.m;
    size_t aux_bytes =
        (e & 128) && p.m && p.n
            ? (size_t)(aux_bits ? (aux_last + 7) / 8 : aux_last * (int64_t)elem_size(p.aux_type))
            : 0;
    if (!check(A, p.a.bytes(), "A") || !check(B, p.b.bytes(), "B") ||
        (beta != 0.0f && !check(C, p.c.bytes(), "C")) || !check(D, p.d.bytes(), "D") ||
        !check(p.bias, bias_bytes, "the bias") || !check(p.aux, aux_bytes, "the aux matrix"))
        return;
    std::vector<float> opa((size_t)(p.m * p.k)), opb((size_t)(p.k * p.n)), out((size_t)(p.m * p.n));
    for (int64_t b = 0; b < p.batch; b++) {
        int64_t oa = b * p.a.batch_stride, ob = b * p.b.batch_stride, oc = b * p.c.batch_stride,
                od = b * p.d.batch_stride;
        for (int64_t i = 0; i < p.m; i++)
            for (int64_t q = 0; q < p.k; q++)
                opa[(size_t)(i * p.k + q)] =
                    rounded(num, load(p.a.type, A, oa + (p.ta ? p.a.at(q, i) : p.a.at(i, q))));
        for (int64_t q = 0; q < p.k; q++)
            for (int64_t j = 0; j < p.n; j++)
                opb[(size_t)(q * p.n + j)] =
                    rounded(num, load(p.b.type, B, ob + (p.tb ? p.b.at(j, q) : p.b.at(q, j))));
        for (int64_t i = 0; i < p.m; i++)
            for (int64_t j = 0; j < p.n; j++) {
                float acc = 0.0f, acc2 = 0.0f;
                int64_t half = num.split_k ? p.k / 2 : p.k;
                for (int64_t q = 0; q < p.k; q++) {
                    float prod = opa[(size_t)(i * p.k + q)] * opb[(size_t)(q * p.n + j)];
                    float &sum = q < half ? acc : acc2;
                    sum = num.half_accumulate ? round_to(elem::f16, sum + prod) : sum + prod;
                }
                float t = alpha * (acc + acc2);
                if (beta != 0.0f)
                    t += beta * load(p.c.type, C, oc + p.c.at(i, j));
                int64_t bias_off = b * p.bias_stride;
                if (add_bias)
                    t += load(p.bias_type, p.bias, bias_off + i);
                int64_t aux_at = b * p.aux_stride + j * p.aux_ld + i;
                if (writes_aux && relu)
                    set_aux_bit(p.aux, aux_at, t > 0.0f);
                else if (writes_aux)
                    store(p.aux_type, p.aux, aux_at, t);
                if (relu)
                    t = t > 0.0f ? t : 0.0f;
                else if (gelu_fwd)
                    t = gelu(t);
                else if (drelu)
                    t = aux_bit(p.aux, aux_at) ? t : 0.0f;
                else if (dgelu)
                    t *= gelu_grad(load(p.aux_type, p.aux, aux_at));
                out[(size_t)(i * p.n + j)] = t;
                store(p.d.type, D, od + p.d.at(i, j), t);
            }
        if (!any_bias || add_bias)
            continue;
        void *grad = const_cast<void *>(p.bias);
        for (int64_t r = 0; r < bias_len; r++) {
            float s = 0.0f;
            if (bgrad_d)
                for (int64_t j = 0; j < p.n; j++)
                    s += out[(size_t)(r * p.n + j)];
            else if (e == CUBLASLT_EPILOGUE_BGRADA)
                for (int64_t q = 0; q < p.k; q++)
                    s += opa[(size_t)(r * p.k + q)];
            else
                for (int64_t q = 0; q < p.k; q++)
                    s += opb[(size_t)(q * p.n + r)];
            store(p.bias_type, grad, b * p.bias_stride + r, s);
        }
    }
}

} // namespace lt
} // namespace xpbsi
