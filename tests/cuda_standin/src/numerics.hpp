// Element types and rounding shared by the cuDNN and cuBLASLt stand-ins: loads and stores of
// fp32, fp16, bf16 and int32 storage with round-to-nearest-even (the toolkit's host conversions
// of cuda_fp16.h and cuda_bf16.h), TF32 rounding of fp32 inputs, and the dense fp32 copies the
// numerical kernels compute on (fp32 accumulation).
#ifndef XPBSI_NUMERICS_HPP
#define XPBSI_NUMERICS_HPP

#include <cstddef>
#include <cstdint>

namespace xpbsi
{

enum class elem { f32, f16, bf16, i32, i64, i8, u8, f64, none };

size_t elem_size(elem e);
const char *elem_name(elem e);

uint16_t float_to_half(float x); // __float2half_rn: round to nearest even, overflow to inf
float half_to_float(uint16_t h);
uint16_t float_to_bf16(float x); // __float2bfloat16_rn
float bf16_to_float(uint16_t h);
// fp32 rounded to TF32 (10 explicit mantissa bits), to nearest even; infinities and NaN kept.
float round_tf32(float x);
// x rounded to what `e` can hold and read back as fp32 (the identity for f32).
float round_to(elem e, float x);

// Element i of a buffer of type e, as fp32 (integers converted).
float load(elem e, const void *base, int64_t i);
// Stores x (rounded to nearest even for fp16/bf16, truncated towards zero for integers).
void store(elem e, void *base, int64_t i, float x);

} // namespace xpbsi

#endif
