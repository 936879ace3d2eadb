/* The CUDA runtime stand-in seen from C, as the plugin's host code sees it: the device it
 * reports, device memory that is distinguishable from host memory (NaN-filled when fresh, copies
 * refused when their direction or range is wrong, frees checked), pinned memory, poison, streams
 * and events with their handle checks and timing, and the last-error rules (cudaGetLastError
 * resets, cudaPeekAtLastError does not). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <cuda_runtime_api.h>

#include "xpbsi/standin.h"

static void test_device(void **state)
{
    (void)state;
    int n = -1, dev = -1, clock = 0;
    assert_int_equal(cudaGetDeviceCount(&n), cudaSuccess);
    assert_int_equal(n, 1);
    assert_int_equal(cudaSetDevice(0), cudaSuccess);
    assert_int_equal(cudaSetDevice(1), cudaErrorInvalidDevice);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidDevice);
    assert_int_equal(cudaGetDevice(&dev), cudaSuccess);
    assert_int_equal(dev, 0);
    struct cudaDeviceProp p;
    assert_int_equal(cudaGetDeviceProperties(&p, 0), cudaSuccess);
    assert_int_equal(p.major * 10 + p.minor, xpbsi_compute_capability());
    const char *cc = getenv("XPB_STANDIN_CC");
    if (cc && strcmp(cc, "7.5") == 0)
        assert_int_equal(p.multiProcessorCount, 40);
    assert_int_equal(p.warpSize, 32);
    assert_int_equal(p.maxThreadsPerBlock, 1024);
    assert_int_equal(cudaDeviceGetAttribute(&clock, cudaDevAttrClockRate, 0), cudaSuccess);
    assert_true(clock > 0);
    char bus[32];
    assert_int_equal(cudaDeviceGetPCIBusId(bus, sizeof bus, 0), cudaSuccess);
    assert_string_equal(bus, "0000:01:00.0");
    int v = 0;
    assert_int_equal(cudaRuntimeGetVersion(&v), cudaSuccess);
    assert_int_equal(v, CUDART_VERSION);
    assert_string_equal(cudaGetErrorName(cudaErrorIllegalAddress), "cudaErrorIllegalAddress");
    assert_string_equal(cudaGetErrorName(cudaSuccess), "cudaSuccess");
}

static void test_fresh_memory_is_nan(void **state)
{
    (void)state;
    float *d = NULL, h[64];
    assert_int_equal(cudaMalloc((void **)&d, sizeof h), cudaSuccess);
    assert_true(((uintptr_t)d % 256) == 0);
    assert_true(xpbsi_is_device_range(d, sizeof h));
    assert_false(xpbsi_is_device_range(d, sizeof h + 1));
    assert_int_equal(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
    for (int i = 0; i < 64; i++)
        assert_true(isnan(h[i]));
    size_t free_b = 0, total = 0;
    assert_int_equal(cudaMemGetInfo(&free_b, &total), cudaSuccess);
    assert_true(free_b < total);
    assert_int_equal(cudaFree(d), cudaSuccess);
}

static void test_copy_directions_and_ranges(void **state)
{
    (void)state;
    char *d = NULL, *d2 = NULL, h[100], h2[100];
    memset(h, 7, sizeof h);
    assert_int_equal(cudaMalloc((void **)&d, 100), cudaSuccess);
    assert_int_equal(cudaMalloc((void **)&d2, 100), cudaSuccess);
    assert_int_equal(cudaMemcpy(d, h, 100, cudaMemcpyHostToDevice), cudaSuccess);
    assert_int_equal(cudaMemcpy(d2, d, 100, cudaMemcpyDeviceToDevice), cudaSuccess);
    assert_int_equal(cudaMemcpy(h2, d2, 100, cudaMemcpyDefault), cudaSuccess);
    assert_memory_equal(h, h2, 100);
    /* the direction must match the pointers */
    assert_int_equal(cudaMemcpy(h2, d, 100, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
    assert_int_equal(cudaMemcpy(d, h, 100, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
    assert_int_equal(cudaMemcpy(d, h, 100, cudaMemcpyDeviceToDevice), cudaErrorInvalidValue);
    assert_int_equal(cudaMemcpy(d, h, 100, (enum cudaMemcpyKind)7),
                     cudaErrorInvalidMemcpyDirection);
    /* a device range must stay inside its allocation */
    assert_int_equal(cudaMemcpy(d + 50, h, 51, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
    assert_int_equal(cudaMemsetAsync(d + 1, 0, 100, 0), cudaErrorInvalidValue);
    assert_int_equal(cudaMemsetAsync(h, 0, 10, 0), cudaErrorInvalidValue); /* not device */
    assert_int_equal(cudaMemsetAsync(d, 3, 100, 0), cudaSuccess);
    assert_int_equal(cudaMemcpyAsync(h2, d, 100, cudaMemcpyDeviceToHost, 0), cudaSuccess);
    for (int i = 0; i < 100; i++)
        assert_int_equal(h2[i], 3);
    /* frees: twice, inside, a host pointer */
    assert_int_equal(cudaFree(d + 4), cudaErrorInvalidValue);
    assert_int_equal(cudaFree(h), cudaErrorInvalidValue);
    assert_int_equal(cudaFree(d), cudaSuccess);
    assert_int_equal(cudaFree(d), cudaErrorInvalidValue);
    assert_int_equal(cudaMemcpy(h2, d, 10, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
    assert_int_equal(cudaFree(NULL), cudaSuccess);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
    assert_int_equal(cudaFree(d2), cudaSuccess);
}

static void test_pinned_memory(void **state)
{
    (void)state;
    float *p = NULL, *d = NULL;
    assert_int_equal(cudaHostAlloc((void **)&p, 16 * sizeof(float), cudaHostAllocDefault),
                     cudaSuccess);
    assert_int_equal(cudaHostAlloc((void **)&p, 16, 0x80), cudaErrorInvalidValue);
    assert_true(isnan(p[3]));
    for (int i = 0; i < 16; i++)
        p[i] = (float)i;
    assert_int_equal(cudaMalloc((void **)&d, 16 * sizeof(float)), cudaSuccess);
    assert_int_equal(cudaMemcpy(d, p, 16 * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
    assert_false(xpbsi_is_device_range(p, 4));
    assert_int_equal(cudaFree(p), cudaErrorInvalidValue);     /* pinned is not device memory */
    assert_int_equal(cudaFreeHost(d), cudaErrorInvalidValue); /* and the other way round */
    assert_int_equal(cudaFreeHost(p), cudaSuccess);
    assert_int_equal(cudaFree(d), cudaSuccess);
    cudaGetLastError();
}

static void test_poison(void **state)
{
    (void)state;
    float *d = NULL, h[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    assert_int_equal(cudaMalloc((void **)&d, sizeof h), cudaSuccess);
    assert_int_equal(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice), cudaSuccess);
    xpbsi_poison(d + 2, 3 * sizeof(float));
    assert_int_equal(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
    assert_true(h[1] == 2.0f && isnan(h[2]) && isnan(h[4]) && h[5] == 6.0f);
    assert_int_equal(xpbsi_poison_async(d, sizeof(float), 0), cudaSuccess);
    assert_int_equal(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
    assert_true(isnan(h[0]));
    assert_int_equal(xpbsi_poison_async(h, sizeof(float), 0), cudaErrorInvalidValue);
    cudaGetLastError();
    cudaFree(d);
}

static void test_streams_and_events(void **state)
{
    (void)state;
    cudaStream_t s = NULL;
    cudaEvent_t a = NULL, b = NULL, untimed = NULL;
    assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    assert_int_equal(cudaStreamCreateWithFlags(&s, 0x10), cudaErrorInvalidValue);
    assert_int_equal(cudaEventCreate(&a), cudaSuccess);
    assert_int_equal(cudaEventCreate(&b), cudaSuccess);
    assert_int_equal(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming), cudaSuccess);
    float ms = -1.0f;
    /* never recorded */
    assert_int_equal(cudaEventElapsedTime(&ms, a, b), cudaErrorInvalidResourceHandle);
    assert_int_equal(cudaEventRecord(a, s), cudaSuccess);
    assert_int_equal(cudaEventRecord(b, s), cudaSuccess);
    assert_int_equal(cudaEventRecord(untimed, s), cudaSuccess);
    assert_int_equal(cudaEventSynchronize(b), cudaSuccess);
    assert_int_equal(cudaEventElapsedTime(&ms, a, b), cudaSuccess);
    assert_true(ms >= 0.0f);
    assert_int_equal(cudaEventElapsedTime(&ms, a, untimed), cudaErrorInvalidResourceHandle);
    assert_int_equal(cudaStreamWaitEvent(s, b, 0), cudaSuccess);
    assert_int_equal(cudaStreamQuery(s), cudaSuccess);
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
    assert_int_equal(cudaEventDestroy(untimed), cudaSuccess);
    assert_int_equal(cudaEventDestroy(untimed), cudaErrorInvalidResourceHandle);
    assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
    /* a destroyed stream is no stream */
    assert_int_equal(cudaStreamSynchronize(s), cudaErrorInvalidResourceHandle);
    assert_int_equal(cudaMemsetAsync(NULL, 0, 0, s), cudaSuccess); /* nothing to do */
    assert_int_equal(cudaStreamDestroy(NULL), cudaErrorInvalidResourceHandle);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    cudaGetLastError();
}

static void test_last_error_rules(void **state)
{
    (void)state;
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    assert_int_equal(cudaMalloc(NULL, 4), cudaErrorInvalidValue);
    assert_int_equal(cudaPeekAtLastError(), cudaErrorInvalidValue);
    assert_int_equal(cudaPeekAtLastError(), cudaErrorInvalidValue);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    /* a later success does not clear it */
    int n;
    assert_int_equal(cudaSetDevice(7), cudaErrorInvalidDevice);
    assert_int_equal(cudaGetDeviceCount(&n), cudaSuccess);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidDevice);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device),
        cmocka_unit_test(test_fresh_memory_is_nan),
        cmocka_unit_test(test_copy_directions_and_ranges),
        cmocka_unit_test(test_pinned_memory),
        cmocka_unit_test(test_poison),
        cmocka_unit_test(test_streams_and_events),
        cmocka_unit_test(test_last_error_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
