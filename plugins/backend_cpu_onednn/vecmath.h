/* Vectorizable fp32 exp, sigmoid and tanh for the own kernels' inner loops (kern_lstm_cell.c,
 * kern_loss.c), within 2e-7 relative of the C library's over fp32's range (relative errors
 * of 1.0e-7, 1.4e-7 and 2.0e-7 measured by test_onednn_vecmath): the library's are scalar calls, as
 * costly per element as the rest of those kernels together.
 *
 * Straight-line code with float selects: GCC vectorizes a loop over them only when it may
 * evaluate a comparison unconditionally, which the default -ftrapping-math forbids (a
 * comparison "could trap"). A file that wants them vectorized starts, before its includes,
 * with `#pragma GCC optimize("no-trapping-math")` (nothing here reads the floating-point
 * exception flags); without it they are correct and scalar. */
#ifndef XPB_ODN_VECMATH_H
#define XPB_ODN_VECMATH_H

#include <math.h>
#include <stdint.h>

/* On a function whose loops use these: GCC compiles it for AVX-512, AVX2 and the baseline, and
 * the loader picks the widest the CPU has (an ifunc), as oneDNN picks its kernels. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define ODN_VEC_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define ODN_VEC_CLONES
#endif

/* e^x for x in [-87, 88] (clamped): x = n ln2 + r, |r| <= ln2 / 2, e^r by its Taylor
 * polynomial to r^7 (error below 1e-8 relative), 2^n put into the exponent bits. Straight-line
 * code (n rounded by adding and removing 1.5 * 2^23), so that loops over it vectorize. */
static inline float odn_fast_exp(float x)
{
    x = x < -87.0f ? -87.0f : x;
    x = x > 88.0f ? 88.0f : x;
    float n = (x * 1.44269504f + 12582912.0f) - 12582912.0f;
    float r = x - n * 0.693145752f; /* ln 2 in two parts: the high one exact in fp32 */
    r = r - n * 1.42860677e-06f;
    float p = 1.0f / 5040.0f;
    p = p * r + 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    union {
        uint32_t u;
        float f;
    } scale = {.u = (uint32_t)((int32_t)n + 127) << 23};
    return p * scale.f;
}

static inline float odn_fast_sigmoid(float x)
{
    return 1.0f / (1.0f + odn_fast_exp(-x));
}

/* tanh: near 0 its odd Taylor polynomial to x^11 (error below 1e-8 relative for |x| < 0.3),
 * elsewhere 1 - 2 / (e^{2|x|} + 1) with the sign put back. */
static inline float odn_fast_tanh(float x)
{
    float a = fabsf(x), x2 = x * x;
    float p = -1382.0f / 155925.0f;
    p = p * x2 + 62.0f / 2835.0f;
    p = p * x2 - 17.0f / 315.0f;
    p = p * x2 + 2.0f / 15.0f;
    p = p * x2 - 1.0f / 3.0f;
    float small = x + x * x2 * p;
    float big = copysignf(1.0f - 2.0f / (odn_fast_exp(2.0f * a) + 1.0f), x);
    return a < 0.3f ? small : big;
}

#endif
