/* Kernels on the stand-in (xpbsi/launch.hpp, xpbsi/device_shim.hpp): every block with its real
 * geometry, threads as fibers. A block reduction that depends on __syncthreads gives the right
 * sum with the barriers and a wrong one without them (the fibers expose the race); warp
 * shuffles, votes, atomics and dynamic shared memory behave as the CUDA Programming Guide says;
 * bad launch configurations set the last error; an out-of-bounds access and a deadlock make the
 * context's error sticky (checked in a child process, since a sticky error cannot be undone).
 * Compiled as the plugin's kernels are: a .cu file with the device shim force-included
 * (xpb_cuda_standin_kernels). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

extern "C" {
#include <cmocka.h>
}

#include "xpbsi/standin.h"

#define THREADS 256

// ---- kernels ----

__global__ void k_block_sum(const float *x, int n, float *out, int with_barriers)
{
    __shared__ float s[THREADS];
    int t = threadIdx.x;
    float v = 0.0f;
    for (int i = blockIdx.x * blockDim.x + t; i < n; i += gridDim.x * blockDim.x)
        v += x[i];
    s[t] = v;
    if (with_barriers)
        __syncthreads();
    for (int step = THREADS / 2; step > 0; step >>= 1) {
        if (t < step)
            s[t] += s[t + step];
        if (with_barriers)
            __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
}

__global__ void k_warp_sums(const int *x, int *down, int *xr, int *up, int *idx, int *half)
{
    int lane = threadIdx.x & 31, v = x[threadIdx.x];
    int a = v, b = v;
    for (int o = 16; o > 0; o >>= 1) {
        a += __shfl_down_sync(0xffffffffu, a, o);
        b += __shfl_xor_sync(0xffffffffu, b, o);
    }
    int scan = v; // inclusive prefix sum with __shfl_up_sync
    for (int o = 1; o < 32; o <<= 1) {
        int y = __shfl_up_sync(0xffffffffu, scan, o);
        if (lane >= o)
            scan += y;
    }
    int w = threadIdx.x >> 5;
    if (lane == 0)
        down[w] = a;
    xr[threadIdx.x] = b;
    up[threadIdx.x] = scan;
    idx[threadIdx.x] = __shfl_sync(0xffffffffu, v, 31 - lane); // reversed
    // width 8: each group of 8 lanes sums its own values
    int h = v;
    for (int o = 4; o > 0; o >>= 1)
        h += __shfl_xor_sync(0xffffffffu, h, o, 8);
    half[threadIdx.x] = h;
}

__global__ void k_votes(const int *pred, unsigned *ballot, int *any, int *all)
{
    int p = pred[threadIdx.x];
    unsigned b = __ballot_sync(0xffffffffu, p);
    int a = __any_sync(0xffffffffu, p), l = __all_sync(0xffffffffu, p);
    if ((threadIdx.x & 31) == 0) {
        ballot[threadIdx.x >> 5] = b;
        any[threadIdx.x >> 5] = a;
        all[threadIdx.x >> 5] = l;
    }
}

__global__ void k_atomics(int *count, unsigned *maxv, unsigned *flag, int *winners)
{
    atomicAdd(count, 1);
    atomicMax(maxv, blockIdx.x * blockDim.x + threadIdx.x);
    if (atomicCAS(flag, 0u, 1u) == 0u)
        atomicAdd(winners, 1);
}

// Every (block, thread) of a 3-D launch writes its linear id at its own place.
__global__ void k_geometry(int *seen)
{
    unsigned bx = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    unsigned tx = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    unsigned per = blockDim.x * blockDim.y * blockDim.z;
    atomicAdd(&seen[bx * per + tx], 1);
}

__global__ void k_dynamic(int *out)
{
    int *s = xpbsi::dynamic_shared<int>();
    s[threadIdx.x] = threadIdx.x * 2;
    __syncthreads();
    out[threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}

__global__ void k_early_exit(int n, int *out)
{
    if ((int)threadIdx.x >= n)
        return; // returned threads count as arrived at later barriers
    __syncthreads();
    out[threadIdx.x] = 1;
}

__global__ void k_param_copy(int base, int *out)
{
    base += threadIdx.x; // each thread has its own copy of the parameter
    __syncthreads();
    out[threadIdx.x] = base;
}

__global__ void k_out_of_bounds(float *x, int n)
{
    x[n + threadIdx.x * 1024] = 1.0f;
}

// Lanes 0-15 wait at the block barrier for lanes 16-31, which wait in a shuffle for lanes 0-15.
__global__ void k_deadlock(int *out)
{
    if (threadIdx.x < 16)
        __syncthreads();
    else
        out[0] = __shfl_sync(0xffffffffu, 1, 0);
}

// ---- helpers ----

template <typename T> T *dev(size_t n)
{
    void *p = nullptr;
    assert_int_equal(cudaMalloc(&p, n * sizeof(T)), cudaSuccess);
    return static_cast<T *>(p);
}

template <typename T> std::vector<T> back(const T *d, size_t n)
{
    std::vector<T> h(n);
    assert_int_equal(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return h;
}

template <typename T> void put(T *d, const std::vector<T> &h)
{
    assert_int_equal(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice),
                     cudaSuccess);
}

// Runs fn in a child process and returns its exit status (a sticky error cannot be undone).
static int in_child(void (*fn)(void))
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        fn();
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

// ---- tests ----

static void block_sum(int with_barriers, float *got, float *want)
{
    const int n = 40000, blocks = 13;
    std::vector<float> h(n);
    for (int i = 0; i < n; i++)
        h[i] = (float)(i % 17) - 8.0f;
    float *x = dev<float>(n), *out = dev<float>(blocks);
    put(x, h);
    xpbsi::launch(k_block_sum, blocks, THREADS, 0, 0)(x, n, out, with_barriers);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    std::vector<float> o = back(out, blocks);
    *got = 0.0f;
    for (float v : o)
        *got += v;
    *want = 0.0f;
    for (float v : h)
        *want += v;
    cudaFree(x);
    cudaFree(out);
}

static void test_block_reduction_needs_barriers(void **state)
{
    (void)state;
    float got, want;
    block_sum(1, &got, &want);
    assert_float_equal(got, want, 0.0f);
    block_sum(0, &got, &want);
    fprintf(stderr, "without __syncthreads: %g instead of %g\n", got, want);
    assert_true(got != want); // the fibers ran in an order that exposes the missing barriers
}

static void test_warp_shuffles(void **state)
{
    (void)state;
    const int n = 64;
    std::vector<int> h(n);
    for (int i = 0; i < n; i++)
        h[i] = i * 3 + 1;
    int *x = dev<int>(n), *down = dev<int>(2), *xr = dev<int>(n), *up = dev<int>(n),
        *idx = dev<int>(n), *half = dev<int>(n);
    put(x, h);
    xpbsi::launch(k_warp_sums, 1, n)(x, down, xr, up, idx, half);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    std::vector<int> d = back(down, 2), r = back(xr, n), u = back(up, n), ix = back(idx, n),
                     hf = back(half, n);
    for (int w = 0; w < 2; w++) {
        int sum = 0, run = 0;
        for (int l = 0; l < 32; l++)
            sum += h[w * 32 + l];
        assert_int_equal(d[w], sum);
        for (int l = 0; l < 32; l++) {
            run += h[w * 32 + l];
            assert_int_equal(r[w * 32 + l], sum); // xor butterfly: all lanes
            assert_int_equal(u[w * 32 + l], run); // inclusive scan
            assert_int_equal(ix[w * 32 + l], h[w * 32 + 31 - l]);
            int g = (l / 8) * 8, gs = 0;
            for (int k = 0; k < 8; k++)
                gs += h[w * 32 + g + k];
            assert_int_equal(hf[w * 32 + l], gs);
        }
    }
}

static void test_votes(void **state)
{
    (void)state;
    std::vector<int> p(96, 0);
    for (int i = 0; i < 32; i++)
        p[i] = i % 3 == 0; // warp 0: some
    for (int i = 32; i < 64; i++)
        p[i] = 1; // warp 1: all
    int *pred = dev<int>(96), *any = dev<int>(3), *all = dev<int>(3);
    unsigned *ballot = dev<unsigned>(3);
    put(pred, p);
    xpbsi::launch(k_votes, 1, 96)(pred, ballot, any, all);
    std::vector<unsigned> b = back(ballot, 3);
    std::vector<int> a = back(any, 3), l = back(all, 3);
    unsigned want0 = 0;
    for (int i = 0; i < 32; i++)
        want0 |= (unsigned)p[i] << i;
    assert_int_equal(b[0], want0);
    assert_int_equal(b[1], 0xffffffffu);
    assert_int_equal(b[2], 0u);
    assert_int_equal(a[0], 1);
    assert_int_equal(l[0], 0);
    assert_int_equal(a[1], 1);
    assert_int_equal(l[1], 1);
    assert_int_equal(a[2], 0);
    assert_int_equal(l[2], 0);
}

static void test_atomics(void **state)
{
    (void)state;
    int *count = dev<int>(1), *winners = dev<int>(1);
    unsigned *maxv = dev<unsigned>(1), *flag = dev<unsigned>(1);
    cudaMemset(count, 0, sizeof(int));
    cudaMemset(winners, 0, sizeof(int));
    cudaMemset(maxv, 0, sizeof(unsigned));
    cudaMemset(flag, 0, sizeof(unsigned));
    xpbsi::launch(k_atomics, 7, 100)(count, maxv, flag, winners);
    assert_int_equal(back(count, 1)[0], 700);
    assert_int_equal(back(maxv, 1)[0], 699u);
    assert_int_equal(back(winners, 1)[0], 1);
}

static void test_geometry_3d(void **state)
{
    (void)state;
    dim3 grid(3, 2, 2), block(5, 3, 2);
    size_t total = 3 * 2 * 2 * 5 * 3 * 2;
    int *seen = dev<int>(total);
    cudaMemset(seen, 0, total * sizeof(int));
    xpbsi::launch(k_geometry, grid, block)(seen);
    std::vector<int> s = back(seen, total);
    for (size_t i = 0; i < total; i++)
        assert_int_equal(s[i], 1);
}

static void test_dynamic_shared_memory(void **state)
{
    (void)state;
    int *out = dev<int>(128);
    xpbsi::launch(k_dynamic, 2, 128, 128 * sizeof(int), 0)(out);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    std::vector<int> o = back(out, 128);
    for (int i = 0; i < 128; i++)
        assert_int_equal(o[i], (127 - i) * 2);
}

static void test_exited_threads_and_parameters(void **state)
{
    (void)state;
    int *out = dev<int>(64);
    cudaMemset(out, 0, 64 * sizeof(int));
    xpbsi::launch(k_early_exit, 1, 64)(40, out);
    std::vector<int> o = back(out, 64);
    for (int i = 0; i < 64; i++)
        assert_int_equal(o[i], i < 40);
    xpbsi::launch(k_param_copy, 1, 64)(1000, out);
    o = back(out, 64);
    for (int i = 0; i < 64; i++)
        assert_int_equal(o[i], 1000 + i);
}

static void test_bad_configurations(void **state)
{
    (void)state;
    int *out = dev<int>(1);
    unsigned long long before = xpbsi_grids_executed();
    xpbsi::launch(k_early_exit, 1, 1025)(1, out);
    assert_int_equal(cudaPeekAtLastError(), cudaErrorInvalidConfiguration);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidConfiguration);
    assert_int_equal(cudaGetLastError(), cudaSuccess); // not sticky: reset by the first read
    xpbsi::launch(k_early_exit, dim3(1, 1, 1), dim3(2, 2, 65))(1, out);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidConfiguration);
    xpbsi::launch(k_early_exit, dim3(0, 1, 1), 32)(1, out);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidConfiguration);
    xpbsi::launch(k_dynamic, 1, 32, 64 << 10, 0)(out);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidConfiguration);
    assert_int_equal(xpbsi_grids_executed(), before);
    if (xpbsi_compute_capability() >= 80) { // opt-in beyond 48 KiB
        assert_int_equal(cudaFuncSetAttribute(reinterpret_cast<const void *>(k_dynamic),
                                              cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              64 << 10),
                         cudaSuccess);
        int *big = dev<int>(32);
        xpbsi::launch(k_dynamic, 1, 32, 64 << 10, 0)(big);
        assert_int_equal(cudaGetLastError(), cudaSuccess);
        cudaFree(big);
    }
    cudaStream_t s = reinterpret_cast<cudaStream_t>(0x1234);
    xpbsi::launch(k_early_exit, 1, 32, 0, s)(1, out);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidResourceHandle);
    cudaFree(out);
}

static void out_of_bounds_child(void)
{
    float *x = nullptr;
    cudaMalloc(&x, 100 * sizeof(float));
    xpbsi::launch(k_out_of_bounds, 1, 32)(x, 100);
    cudaError_t e = cudaDeviceSynchronize();
    void *p = nullptr;
    // sticky: the launch's error is returned by every later call, and is not reset by reading it
    bool ok = e == cudaErrorIllegalAddress && cudaMalloc(&p, 16) == cudaErrorIllegalAddress &&
              cudaGetLastError() == cudaErrorIllegalAddress &&
              cudaGetLastError() == cudaErrorIllegalAddress;
    _exit(ok ? 0 : 1);
}

static void test_out_of_bounds_is_sticky(void **state)
{
    (void)state;
    assert_int_equal(in_child(out_of_bounds_child), 0);
}

static void deadlock_child(void)
{
    int *out = nullptr;
    cudaMalloc(&out, sizeof(int));
    xpbsi::launch(k_deadlock, 1, 32)(out);
    _exit(cudaStreamSynchronize(0) == cudaErrorLaunchFailure ? 0 : 1);
}

static void test_deadlock_fails_the_launch(void **state)
{
    (void)state;
    assert_int_equal(in_child(deadlock_child), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_block_reduction_needs_barriers),
        cmocka_unit_test(test_warp_shuffles),
        cmocka_unit_test(test_votes),
        cmocka_unit_test(test_atomics),
        cmocka_unit_test(test_geometry_3d),
        cmocka_unit_test(test_dynamic_shared_memory),
        cmocka_unit_test(test_exited_threads_and_parameters),
        cmocka_unit_test(test_bad_configurations),
        cmocka_unit_test(test_out_of_bounds_is_sticky),
        cmocka_unit_test(test_deadlock_fails_the_launch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
