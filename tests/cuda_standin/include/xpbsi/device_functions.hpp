// The device functions a kernel may call, for kernels compiled by a host compiler against the
// stand-in (device_shim.hpp includes this). Semantics follow the CUDA C++ Programming Guide:
// Synchronization Functions, Warp Shuffle Functions ("threads may only read data from another
// thread which is actively participating ... if the target thread is inactive, the retrieved
// value is undefined"), Warp Vote Functions, Atomic Functions (each returns the old value),
// Read-Only Data Cache Load Function, and Intrinsic Functions (the fast-math intrinsics are the
// hardware's approximations: __expf(x) is 2^(x * log2 e) computed from the rounded product,
// __logf(x) is log2(x) * ln 2, __fdividef(x, y) is x * (1 / y) and 0 for 2^126 < |y| < 2^128).
// Blocks of a grid run one at a time and their threads are fibers on one host thread, so an
// atomic operation is a plain read-modify-write that no other thread can interrupt.
#ifndef XPBSI_DEVICE_FUNCTIONS_HPP
#define XPBSI_DEVICE_FUNCTIONS_HPP

#include <cstdint>
#include <cstring>
#include <type_traits>

#include <cmath>

#include "xpbsi/launch.hpp"

namespace xpbsi
{
namespace detail
{

inline unsigned lane_id()
{
    const builtins &b = t_builtins;
    return (b.thread_idx.x + b.block_dim.x * (b.thread_idx.y + b.block_dim.y * b.thread_idx.z)) %
           32u;
}

inline void check_width(int width)
{
    if (width <= 0 || width > 32 || (width & (width - 1)) != 0)
        device_trap("a shuffle's width must be a power of 2 no larger than 32");
}

template <typename T> T shuffle(unsigned mask, T var, int src)
{
    static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= 16,
                  "shuffles move values of at most 16 bytes");
    T out;
    warp_exchange(mask, WARP_SHFL, &var, sizeof(T), src, 0, &out);
    return out;
}

inline void ballot(unsigned mask, int pred, uint32_t out[2])
{
    warp_exchange(mask, WARP_BALLOT, nullptr, 0, -1, pred, out);
}

} // namespace detail
} // namespace xpbsi

// ---- synchronization ----
inline void __syncthreads()
{
    xpbsi::detail::syncthreads();
}
inline int __syncthreads_count(int pred)
{
    return xpbsi::detail::syncthreads_reduce(pred, 0);
}
inline int __syncthreads_and(int pred)
{
    return xpbsi::detail::syncthreads_reduce(pred, 1);
}
inline int __syncthreads_or(int pred)
{
    return xpbsi::detail::syncthreads_reduce(pred, 2);
}
inline void __syncwarp(unsigned mask = 0xFFFFFFFFu)
{
    xpbsi::detail::warp_exchange(mask, xpbsi::detail::WARP_SYNC, nullptr, 0, -1, 0, nullptr);
}
// Memory fences order what one thread's writes look like to others; a fiber's writes are seen
// by the next thread that runs, so a fence only has to keep the compiler from reordering.
inline void __threadfence()
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
inline void __threadfence_block()
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
inline void __threadfence_system()
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
inline void __nanosleep(unsigned)
{
    xpbsi::detail::yield_thread();
}
[[noreturn]] inline void __trap()
{
    xpbsi::detail::device_trap("__trap()");
}

// ---- warp shuffles: the source lane is computed per lane, then the warp exchanges values ----
template <typename T> T __shfl_sync(unsigned mask, T var, int srcLane, int width = 32)
{
    xpbsi::detail::check_width(width);
    int lane = (int)xpbsi::detail::lane_id(), seg = lane & ~(width - 1);
    // "If srcLane is outside the range [0:width-1], the value returned corresponds to the value
    // of var held by the srcLane modulo width (i.e. within the same subsection)."
    return xpbsi::detail::shuffle(mask, var, seg + (srcLane & (width - 1)));
}
template <typename T> T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32)
{
    xpbsi::detail::check_width(width);
    int lane = (int)xpbsi::detail::lane_id(), seg = lane & ~(width - 1);
    int src = lane - (int)delta; // below the subsection: the lane keeps its own value
    return xpbsi::detail::shuffle(mask, var, src < seg ? -1 : src);
}
template <typename T> T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32)
{
    xpbsi::detail::check_width(width);
    int lane = (int)xpbsi::detail::lane_id(), seg = lane & ~(width - 1);
    int src = lane + (int)delta; // beyond the subsection: the lane keeps its own value
    return xpbsi::detail::shuffle(mask, var, src >= seg + width ? -1 : src);
}
template <typename T> T __shfl_xor_sync(unsigned mask, T var, int laneMask, int width = 32)
{
    xpbsi::detail::check_width(width);
    int lane = (int)xpbsi::detail::lane_id(), seg = lane & ~(width - 1);
    // "if they attempt to access elements from later groups of threads their own value of var
    // will be returned"
    int src = lane ^ laneMask;
    return xpbsi::detail::shuffle(mask, var, src >= seg + width ? -1 : src);
}

// ---- warp vote ----
inline unsigned __ballot_sync(unsigned mask, int predicate)
{
    uint32_t r[2];
    xpbsi::detail::ballot(mask, predicate, r);
    return r[0];
}
inline int __any_sync(unsigned mask, int predicate)
{
    uint32_t r[2];
    xpbsi::detail::ballot(mask, predicate, r);
    return r[0] != 0;
}
inline int __all_sync(unsigned mask, int predicate)
{
    uint32_t r[2];
    xpbsi::detail::ballot(mask, predicate, r);
    return r[0] == r[1];
}
inline unsigned __activemask()
{
    uint32_t r[2];
    xpbsi::detail::ballot(0xFFFFFFFFu, 1, r);
    return r[1];
}

// ---- atomics ----
#define XPBSI_ATOMIC(name, T, expr)                                                                \
    inline T name(T *address, T val)                                                               \
    {                                                                                              \
        T old = *address;                                                                          \
        *address = (expr);                                                                         \
        return old;                                                                                \
    }
XPBSI_ATOMIC(atomicAdd, int, old + val)
XPBSI_ATOMIC(atomicAdd, unsigned int, old + val)
XPBSI_ATOMIC(atomicAdd, unsigned long long, old + val)
XPBSI_ATOMIC(atomicAdd, float, old + val)
XPBSI_ATOMIC(atomicAdd, double, old + val)
XPBSI_ATOMIC(atomicSub, int, old - val)
XPBSI_ATOMIC(atomicSub, unsigned int, old - val)
XPBSI_ATOMIC(atomicExch, int, val)
XPBSI_ATOMIC(atomicExch, unsigned int, val)
XPBSI_ATOMIC(atomicExch, unsigned long long, val)
XPBSI_ATOMIC(atomicExch, float, val)
XPBSI_ATOMIC(atomicMin, int, val < old ? val : old)
XPBSI_ATOMIC(atomicMin, unsigned int, val < old ? val : old)
XPBSI_ATOMIC(atomicMin, long long, val < old ? val : old)
XPBSI_ATOMIC(atomicMin, unsigned long long, val < old ? val : old)
XPBSI_ATOMIC(atomicMax, int, val > old ? val : old)
XPBSI_ATOMIC(atomicMax, unsigned int, val > old ? val : old)
XPBSI_ATOMIC(atomicMax, long long, val > old ? val : old)
XPBSI_ATOMIC(atomicMax, unsigned long long, val > old ? val : old)
XPBSI_ATOMIC(atomicAnd, int, old &val)
XPBSI_ATOMIC(atomicAnd, unsigned int, old &val)
XPBSI_ATOMIC(atomicAnd, unsigned long long, old &val)
XPBSI_ATOMIC(atomicOr, int, old | val)
XPBSI_ATOMIC(atomicOr, unsigned int, old | val)
XPBSI_ATOMIC(atomicOr, unsigned long long, old | val)
XPBSI_ATOMIC(atomicXor, int, old ^ val)
XPBSI_ATOMIC(atomicXor, unsigned int, old ^ val)
XPBSI_ATOMIC(atomicXor, unsigned long long, old ^ val)
// "((old >= val) ? 0 : (old+1))" and "(((old == 0) || (old > val)) ? val : (old-1))"
XPBSI_ATOMIC(atomicInc, unsigned int, old >= val ? 0u : old + 1u)
XPBSI_ATOMIC(atomicDec, unsigned int, (old == 0u || old > val) ? val : old - 1u)
#undef XPBSI_ATOMIC

template <typename T> inline T xpbsi_atomic_cas(T *address, T compare, T val)
{
    T old = *address;
    if (old == compare)
        *address = val;
    return old;
}
inline int atomicCAS(int *a, int c, int v)
{
    return xpbsi_atomic_cas(a, c, v);
}
inline unsigned int atomicCAS(unsigned int *a, unsigned int c, unsigned int v)
{
    return xpbsi_atomic_cas(a, c, v);
}
inline unsigned long long atomicCAS(unsigned long long *a, unsigned long long c,
                                    unsigned long long v)
{
    return xpbsi_atomic_cas(a, c, v);
}
inline unsigned short atomicCAS(unsigned short *a, unsigned short c, unsigned short v)
{
    return xpbsi_atomic_cas(a, c, v);
}

// ---- loads ----
template <typename T> inline T __ldg(const T *p)
{
    return *p;
}

// ---- bit manipulation and reinterpretation ----
inline int __popc(unsigned x)
{
    return __builtin_popcount(x);
}
inline int __popcll(unsigned long long x)
{
    return __builtin_popcountll(x);
}
inline int __clz(int x)
{
    return x == 0 ? 32 : __builtin_clz((unsigned)x);
}
inline int __clzll(long long x)
{
    return x == 0 ? 64 : __builtin_clzll((unsigned long long)x);
}
inline int __ffs(int x)
{
    return __builtin_ffs(x);
}
inline int __ffsll(long long x)
{
    return __builtin_ffsll(x);
}
inline unsigned __brev(unsigned x)
{
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0F0F0F0Fu) | ((x & 0x0F0F0F0Fu) << 4);
    return __builtin_bswap32(x);
}
inline int __mul24(int x, int y)
{
    return (int)((unsigned)(x << 8 >> 8) * (unsigned)(y << 8 >> 8));
}
inline unsigned __umul24(unsigned x, unsigned y)
{
    return (x & 0xFFFFFFu) * (y & 0xFFFFFFu);
}
inline int __mulhi(int x, int y)
{
    return (int)(((long long)x * y) >> 32);
}
inline unsigned __umulhi(unsigned x, unsigned y)
{
    return (unsigned)(((unsigned long long)x * y) >> 32);
}

// ---- single-precision intrinsics ----
inline float __fadd_rn(float a, float b)
{
    volatile float r = a + b; // one rounding, never contracted with a neighbour
    return r;
}
inline float __fsub_rn(float a, float b)
{
    volatile float r = a - b;
    return r;
}
inline float __fmul_rn(float a, float b)
{
    volatile float r = a * b;
    return r;
}
inline float __fdiv_rn(float a, float b)
{
    return a / b;
}
inline float __fmaf_rn(float a, float b, float c)
{
    return std::fma(a, b, c);
}
inline float __frcp_rn(float a)
{
    return 1.0f / a;
}
inline float __fsqrt_rn(float a)
{
    return std::sqrt(a);
}
inline float __frsqrt_rn(float a)
{
    return (float)(1.0 / std::sqrt((double)a));
}
inline float rsqrtf(float a)
{
    return (float)(1.0 / std::sqrt((double)a));
}
inline double rsqrt(double a)
{
    return 1.0 / std::sqrt(a);
}
inline float __saturatef(float x)
{
    return x != x ? 0.0f : x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x;
}
inline float __expf(float x)
{
    return std::exp2(__fmul_rn(x, 1.44269504088896341f));
}
inline float __exp10f(float x)
{
    return std::exp2(__fmul_rn(x, 3.32192809488736235f));
}
inline float __logf(float x)
{
    return std::log2(x) * 0.693147180559945309f;
}
inline float __log2f(float x)
{
    return std::log2(x);
}
inline float __log10f(float x)
{
    return std::log2(x) * 0.301029995663981195f;
}
inline float __powf(float x, float y)
{
    return std::exp2(__fmul_rn(y, std::log2(x)));
}
inline float __sinf(float x)
{
    return std::sin(x);
}
inline float __cosf(float x)
{
    return std::cos(x);
}
inline float __tanf(float x)
{
    return std::sin(x) / std::cos(x);
}
inline void __sincosf(float x, float *s, float *c)
{
    *s = std::sin(x);
    *c = std::cos(x);
}
inline float __fdividef(float x, float y)
{
    float ay = std::fabs(y);
    if (ay > 8.50705917302346159e+37f && ay <= 3.40282346638528860e+38f)
        return 0.0f;
    return __fmul_rn(x, 1.0f / y);
}

#endif
