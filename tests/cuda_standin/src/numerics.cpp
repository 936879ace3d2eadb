// Element types and rounding (numerics.hpp). The fp16 and bf16 conversions are the toolkit's own
// host implementations (cuda_fp16.hpp, cuda_bf16.hpp compiled without __CUDACC__).
#include "numerics.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstring>

namespace xpbsi
{

size_t elem_size(elem e)
{
    switch (e) {
    case elem::f16:
    case elem::bf16:
        return 2;
    case elem::i64:
    case elem::f64:
        return 8;
    case elem::i8:
    case elem::u8:
        return 1;
    case elem::none:
        return 0;
    default:
        return 4;
    }
}

const char *elem_name(elem e)
{
    static const char *const names[] = {"fp32", "fp16",  "bf16", "int32",      "int64",
                                        "int8", "uint8", "fp64", "unsupported"};
    return names[(int)e];
}

uint16_t float_to_half(float x)
{
    __half_raw r = __float2half_rn(x);
    return r.x;
}

float half_to_float(uint16_t u)
{
    __half_raw r;
    r.x = u;
    return __half2float(__half(r));
}

uint16_t float_to_bf16(float x)
{
    __nv_bfloat16_raw r = __float2bfloat16_rn(x);
    return r.x;
}

float bf16_to_float(uint16_t u)
{
    __nv_bfloat16_raw r;
    r.x = u;
    return __bfloat162float(__nv_bfloat16(r));
}

float round_tf32(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7F800000u) == 0x7F800000u)
        return x;
    u += 0xFFFu + ((u >> 13) & 1u); // nearest, ties to the even 10-bit mantissa
    u &= ~0x1FFFu;
    memcpy(&x, &u, sizeof u);
    return x;
}

float round_to(elem e, float x)
{
    switch (e) {
    case elem::f16:
        return half_to_float(float_to_half(x));
    case elem::bf16:
        return bf16_to_float(float_to_bf16(x));
    default:
        return x;
    }
}

float load(elem e, const void *base, int64_t i)
{
    switch (e) {
    case elem::f32:
        return static_cast<const float *>(base)[i];
    case elem::f16:
        return half_to_float(static_cast<const uint16_t *>(base)[i]);
    case elem::bf16:
        return bf16_to_float(static_cast<const uint16_t *>(base)[i]);
    case elem::i32:
        return (float)static_cast<const int32_t *>(base)[i];
    case elem::i64:
        return (float)static_cast<const int64_t *>(base)[i];
    case elem::i8:
        return (float)static_cast<const int8_t *>(base)[i];
    case elem::u8:
        return (float)static_cast<const uint8_t *>(base)[i];
    case elem::f64:
        return (float)static_cast<const double *>(base)[i];
    default:
        return NAN;
    }
}

void store(elem e, void *base, int64_t i, float x)
{
    switch (e) {
    case elem::f32:
        static_cast<float *>(base)[i] = x;
        break;
    case elem::f16:
        static_cast<uint16_t *>(base)[i] = float_to_half(x);
        break;
    case elem::bf16:
        static_cast<uint16_t *>(base)[i] = float_to_bf16(x);
        break;
    case elem::i32:
        static_cast<int32_t *>(base)[i] = (int32_t)x;
        break;
    case elem::i64:
        static_cast<int64_t *>(base)[i] = (int64_t)x;
        break;
    case elem::i8:
        static_cast<int8_t *>(base)[i] = (int8_t)x;
        break;
    case elem::u8:
        static_cast<uint8_t *>(base)[i] = (uint8_t)x;
        break;
    case elem::f64:
        static_cast<double *>(base)[i] = x;
        break;
    default:
        break;
    }
}

} // namespace xpbsi
