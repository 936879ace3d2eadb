// Force-included (g++ -include) before every .cu file compiled for the CPU stand-in:
//
//     g++ -x c++ -std=c++17 -DXPB_CUDA_STANDIN=1 -include xpbsi/device_shim.hpp
//         -I<cuda include> -I<stand-in include> -c kernels.cu
//
// NVIDIA's headers compile for the host when __CUDACC__ is not defined (the host paths of
// cuda_fp16.h and cuda_bf16.h are the toolkit's own conversions); this file includes them first,
// then gives the CUDA qualifiers their stand-in meaning: __global__, __device__, __host__ and
// __forceinline__ are ordinary functions; __shared__ is `static` (the blocks of a grid run one
// after another, so a static variable is the running block's shared memory; its content at the
// start of a block is whatever the previous block left, undefined as on a GPU); __constant__
// and __managed__ variables are ordinary globals. Dynamic shared memory is
// xpbsi::dynamic_shared<T>() (`extern __shared__ T name[]` does not compile here: `extern static`).
// threadIdx, blockIdx, blockDim, gridDim and warpSize name the running thread's values (blockDim
// and gridDim as uint3, which converts to dim3), and the
// device functions of device_functions.hpp (barriers, shuffles, votes, atomics, intrinsics) are
// declared. __noinline__ is not given a meaning: GCC's own headers use that spelling. __CUDA_ARCH__
// stays undefined: code that selects a path by architecture takes the host path.
#ifndef XPBSI_DEVICE_SHIM_HPP
#define XPBSI_DEVICE_SHIM_HPP

#if !defined(__cplusplus) || __cplusplus < 201703L
#error "the stand-in compiles .cu files as C++17: g++ -x c++ -std=c++17"
#endif
#if !defined(XPB_CUDA_STANDIN)
#error "the stand-in's device shim needs -DXPB_CUDA_STANDIN=1"
#endif
#if defined(__CUDACC__)
#error "the stand-in's device shim is for a host compiler, not nvcc"
#endif

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

// The toolkit declares the built-in variables in device_launch_parameters.h for nvcc only;
// keep it out, the stand-in defines them below.
#define __DEVICE_LAUNCH_PARAMETERS_H__

#undef __global__
#define __global__
#undef __device__
#define __device__
#undef __host__
#define __host__
#undef __shared__
#define __shared__ static
#undef __constant__
#define __constant__
#undef __managed__
#define __managed__
#undef __launch_bounds__
#define __launch_bounds__(...)

#include "xpbsi/device_functions.hpp"
#include "xpbsi/launch.hpp"

#define threadIdx (static_cast<const uint3 &>(::xpbsi::detail::t_builtins.thread_idx))
#define blockIdx (static_cast<const uint3 &>(::xpbsi::detail::t_builtins.block_idx))
#define blockDim (static_cast<const uint3 &>(::xpbsi::detail::t_builtins.block_dim))
#define gridDim (static_cast<const uint3 &>(::xpbsi::detail::t_builtins.grid_dim))
constexpr int warpSize = 32;

// min and max of device code, for the types kernels mix (CUDA Math API, Integer and
// Single/Double Precision Mathematical Functions).
inline int min(int a, int b)
{
    return a < b ? a : b;
}
inline int max(int a, int b)
{
    return a > b ? a : b;
}
inline unsigned min(unsigned a, unsigned b)
{
    return a < b ? a : b;
}
inline unsigned max(unsigned a, unsigned b)
{
    return a > b ? a : b;
}
inline long min(long a, long b)
{
    return a < b ? a : b;
}
inline long max(long a, long b)
{
    return a > b ? a : b;
}
inline unsigned long min(unsigned long a, unsigned long b)
{
    return a < b ? a : b;
}
inline unsigned long max(unsigned long a, unsigned long b)
{
    return a > b ? a : b;
}
inline long long min(long long a, long long b)
{
    return a < b ? a : b;
}
inline long long max(long long a, long long b)
{
    return a > b ? a : b;
}
inline unsigned long long min(unsigned long long a, unsigned long long b)
{
    return a < b ? a : b;
}
inline unsigned long long max(unsigned long long a, unsigned long long b)
{
    return a > b ? a : b;
}
inline float min(float a, float b)
{
    return std::fmin(a, b);
}
inline float max(float a, float b)
{
    return std::fmax(a, b);
}
inline double min(double a, double b)
{
    return std::fmin(a, b);
}
inline double max(double a, double b)
{
    return std::fmax(a, b);
}

#endif
