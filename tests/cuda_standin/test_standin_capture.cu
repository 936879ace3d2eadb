/* Stream capture and graphs on the stand-in (CUDA Runtime API, Stream Management and Graph
 * Management; CUDA Programming Guide, Stream Capture): captured work is recorded, not run (a
 * graph that is never launched computes nothing), runs at each cudaGraphLaunch with the
 * arguments of its capture, and the rules of capture are enforced: potentially unsafe calls by
 * capture mode, synchronisation of a capturing stream, the legacy stream's implicit dependency,
 * forks that are never joined, waits on events from outside the capture, ending from another
 * thread, querying a captured event.
 * Compiled as the plugin's kernels are: a .cu file with the device shim force-included
 * (xpb_cuda_standin_kernels). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <thread>

extern "C" {
#include <cmocka.h>
}

#include "xpbsi/standin.h"

__global__ void k_add(int *x, int n, int v)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        x[i] += v;
}

static int *fresh(int n)
{
    int *d = nullptr;
    assert_int_equal(cudaMalloc(reinterpret_cast<void **>(&d), n * sizeof(int)), cudaSuccess);
    assert_int_equal(cudaMemset(d, 0, n * sizeof(int)), cudaSuccess);
    return d;
}

static int first(const int *d)
{
    int h = -1;
    assert_int_equal(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
    return h;
}

static cudaStream_t stream(unsigned flags = cudaStreamNonBlocking)
{
    cudaStream_t s = nullptr;
    assert_int_equal(cudaStreamCreateWithFlags(&s, flags), cudaSuccess);
    return s;
}

static void test_capture_records_launch_runs(void **state)
{
    (void)state;
    int *x = fresh(100);
    int host[100];
    cudaStream_t s = stream();
    unsigned long long before = xpbsi_grids_executed();
    int v = 5;
    assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    xpbsi::launch(k_add, 2, 32, 0, s)(x, 100, v);
    v = 1000; // the graph keeps the argument of its capture
    assert_int_equal(cudaMemsetAsync(x + 99, 0xFF, sizeof(int), s), cudaSuccess);
    assert_int_equal(cudaMemcpyAsync(host, x, sizeof host, cudaMemcpyDeviceToHost, s), cudaSuccess);
    cudaStreamCaptureStatus st;
    assert_int_equal(cudaStreamIsCapturing(s, &st), cudaSuccess);
    assert_int_equal(st, cudaStreamCaptureStatusActive);
    cudaGraph_t g = nullptr;
    assert_int_equal(cudaStreamEndCapture(s, &g), cudaSuccess);
    assert_non_null(g);
    // nothing ran
    assert_int_equal(xpbsi_grids_executed(), before);
    assert_int_equal(first(x), 0);
    cudaGraphExec_t e = nullptr;
    assert_int_equal(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
    assert_int_equal(cudaGraphDestroy(g), cudaSuccess); // the executable keeps its own copy
    assert_int_equal(cudaGraphUpload(e, s), cudaSuccess);
    assert_int_equal(cudaGraphLaunch(e, s), cudaSuccess);
    assert_int_equal(cudaGraphLaunch(e, s), cudaSuccess);
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
    assert_int_equal(xpbsi_grids_executed(), before + 2);
    assert_int_equal(first(x), 10);
    assert_int_equal(host[0], 10); // the captured copy ran too
    assert_int_equal(host[99], -1);
    assert_int_equal(cudaGraphExecDestroy(e), cudaSuccess);
    assert_int_equal(cudaGraphLaunch(e, s), cudaErrorInvalidValue);
    cudaGetLastError();
    cudaStreamDestroy(s);
    cudaFree(x);
}

static void end_invalidated(cudaStream_t s)
{
    cudaGraph_t g = reinterpret_cast<cudaGraph_t>(0x1);
    assert_int_equal(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
    assert_null(g);
    cudaGetLastError();
}

static void test_unsafe_calls_by_mode(void **state)
{
    (void)state;
    cudaStream_t s = stream();
    void *p = nullptr;
    assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    assert_int_equal(cudaMalloc(&p, 64), cudaErrorStreamCaptureUnsupported);
    cudaStreamCaptureStatus st;
    assert_int_equal(cudaStreamIsCapturing(s, &st), cudaSuccess);
    assert_int_equal(st, cudaStreamCaptureStatusInvalidated);
    end_invalidated(s);
    // relaxed: allowed
    assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed), cudaSuccess);
    assert_int_equal(cudaMalloc(&p, 64), cudaSuccess);
    cudaGraph_t g = nullptr;
    assert_int_equal(cudaStreamEndCapture(s, &g), cudaSuccess);
    cudaGraphDestroy(g);
    cudaFree(p);
    // a thread in relaxed interaction mode may call it during a global capture
    assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    assert_int_equal(cudaThreadExchangeStreamCaptureMode(&mode), cudaSuccess);
    assert_int_equal(cudaMalloc(&p, 64), cudaSuccess);
    assert_int_equal(cudaThreadExchangeStreamCaptureMode(&mode), cudaSuccess);
    assert_int_equal(mode, cudaStreamCaptureModeRelaxed);
    assert_int_equal(cudaStreamEndCapture(s, &g), cudaSuccess);
    cudaGraphDestroy(g);
    cudaFree(p);
    cudaStreamDestroy(s);
}

static void test_synchronising_a_capture(void **state)
{
    (void)state;
    cudaStream_t s = stream();
    assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    assert_int_equal(cudaStreamSynchronize(s), cudaErrorStreamCaptureUnsupported);
    end_invalidated(s);
    assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    assert_int_equal(cudaStreamQuery(s), cudaErrorStreamCaptureUnsupported);
    end_invalidated(s);
    // work after the invalidation is refused too
    int *x = fresh(4);
    assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    assert_int_equal(cudaStreamSynchronize(s), cudaErrorStreamCaptureUnsupported);
    assert_int_equal(cudaMemsetAsync(x, 0, 4, s), cudaErrorStreamCaptureInvalidated);
    end_invalidated(s);
    cudaStreamDestroy(s);
    cudaFree(x);
}

static void test_legacy_stream_and_blocking_captures(void **state)
{
    (void)state;
    int *x = fresh(4);
    cudaStream_t blocking = stream(cudaStreamDefault), nonblocking = stream();
    assert_int_equal(cudaStreamBeginCapture(blocking, cudaStreamCaptureModeRelaxed), cudaSuccess);
    assert_int_equal(cudaMemsetAsync(x, 0, 4, 0), cudaErrorStreamCaptureImplicit);
    end_invalidated(blocking);
    assert_int_equal(cudaStreamBeginCapture(nonblocking, cudaStreamCaptureModeRelaxed),
                     cudaSuccess);
    assert_int_equal(cudaMemsetAsync(x, 0, 4, 0), cudaSuccess); // no implicit dependency
    cudaGraph_t g = nullptr;
    assert_int_equal(cudaStreamEndCapture(nonblocking, &g), cudaSuccess);
    cudaGraphDestroy(g);
    // capture on the legacy stream itself is not allowed
    assert_int_equal(cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal),
                     cudaErrorStreamCaptureUnsupported);
    cudaGetLastError();
    cudaStreamDestroy(blocking);
    cudaStreamDestroy(nonblocking);
    cudaFree(x);
}

static void test_fork_and_join(void **state)
{
    (void)state;
    int *x = fresh(64), *y = fresh(64);
    cudaStream_t a = stream(), b = stream();
    cudaEvent_t fork_e, join_e;
    cudaEventCreateWithFlags(&fork_e, cudaEventDisableTiming);
    cudaEventCreateWithFlags(&join_e, cudaEventDisableTiming);
    // joined: the side stream's work is part of the graph
    assert_int_equal(cudaStreamBeginCapture(a, cudaStreamCaptureModeGlobal), cudaSuccess);
    xpbsi::launch(k_add, 1, 64, 0, a)(x, 64, 1);
    assert_int_equal(cudaEventRecord(fork_e, a), cudaSuccess);
    assert_int_equal(cudaEventQuery(fork_e), cudaErrorCapturedEvent); // and invalidates...
    cudaGetLastError();
    cudaGraph_t g = nullptr;
    end_invalidated(a);
    assert_int_equal(cudaStreamBeginCapture(a, cudaStreamCaptureModeGlobal), cudaSuccess);
    xpbsi::launch(k_add, 1, 64, 0, a)(x, 64, 1);
    assert_int_equal(cudaEventRecord(fork_e, a), cudaSuccess);
    assert_int_equal(cudaStreamWaitEvent(b, fork_e, 0), cudaSuccess); // b joins the capture
    xpbsi::launch(k_add, 1, 64, 0, b)(y, 64, 7);
    assert_int_equal(cudaEventRecord(join_e, b), cudaSuccess);
    assert_int_equal(cudaStreamWaitEvent(a, join_e, 0), cudaSuccess);
    assert_int_equal(cudaStreamEndCapture(a, &g), cudaSuccess);
    assert_int_equal(first(y), 0);
    cudaGraphExec_t e = nullptr;
    assert_int_equal(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
    assert_int_equal(cudaGraphLaunch(e, a), cudaSuccess);
    assert_int_equal(first(x), 1);
    assert_int_equal(first(y), 7);
    cudaGraphExecDestroy(e);
    cudaGraphDestroy(g);
    // unjoined: b's last work never joins a
    assert_int_equal(cudaStreamBeginCapture(a, cudaStreamCaptureModeGlobal), cudaSuccess);
    assert_int_equal(cudaEventRecord(fork_e, a), cudaSuccess);
    assert_int_equal(cudaStreamWaitEvent(b, fork_e, 0), cudaSuccess);
    xpbsi::launch(k_add, 1, 64, 0, b)(y, 64, 7);
    assert_int_equal(cudaStreamEndCapture(a, &g), cudaErrorStreamCaptureUnjoined);
    cudaGetLastError();
    // b left the capture with it: it runs work at once again
    xpbsi::launch(k_add, 1, 64, 0, b)(y, 64, 1);
    assert_int_equal(first(y), 8);
    cudaEventDestroy(fork_e);
    cudaEventDestroy(join_e);
    cudaStreamDestroy(a);
    cudaStreamDestroy(b);
    cudaFree(x);
    cudaFree(y);
}

static void test_external_events_and_threads(void **state)
{
    (void)state;
    cudaStream_t s = stream(), other = stream();
    cudaEvent_t done;
    cudaEventCreate(&done);
    assert_int_equal(cudaEventRecord(done, other), cudaSuccess);
    assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    assert_int_equal(cudaStreamWaitEvent(s, done, cudaEventWaitExternal), cudaSuccess);
    assert_int_equal(cudaStreamWaitEvent(s, done, 0), cudaErrorStreamCaptureIsolation);
    end_invalidated(s);
    // a global-mode capture is ended by the thread that began it
    assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    cudaError_t from_other = cudaSuccess;
    std::thread t([&] {
        cudaGraph_t g = nullptr;
        from_other = cudaStreamEndCapture(s, &g);
    });
    t.join();
    assert_int_equal(from_other, cudaErrorStreamCaptureWrongThread);
    cudaGraph_t g = nullptr;
    assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaErrorIllegalState);
    assert_int_equal(cudaStreamEndCapture(s, &g), cudaSuccess);
    assert_int_equal(cudaStreamEndCapture(s, &g), cudaErrorIllegalState);
    cudaGetLastError();
    cudaGraphDestroy(g);
    cudaEventDestroy(done);
    cudaStreamDestroy(s);
    cudaStreamDestroy(other);
}

static void test_graphs_in_graphs_and_bad_launches(void **state)
{
    (void)state;
    int *x = fresh(32);
    cudaStream_t s = stream();
    cudaGraph_t inner = nullptr, outer = nullptr;
    cudaGraphExec_t ie = nullptr, oe = nullptr;
    assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    xpbsi::launch(k_add, 1, 32, 0, s)(x, 32, 2);
    assert_int_equal(cudaStreamEndCapture(s, &inner), cudaSuccess);
    assert_int_equal(cudaGraphInstantiate(&ie, inner, 0), cudaSuccess);
    assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    assert_int_equal(cudaGraphLaunch(ie, s), cudaSuccess); // recorded as a child graph
    assert_int_equal(cudaGraphLaunch(ie, s), cudaSuccess);
    assert_int_equal(cudaStreamEndCapture(s, &outer), cudaSuccess);
    assert_int_equal(first(x), 0);
    assert_int_equal(cudaGraphInstantiate(&oe, outer, 0), cudaSuccess);
    assert_int_equal(cudaGraphLaunch(oe, s), cudaSuccess);
    assert_int_equal(first(x), 4);
    // a launch the device refuses invalidates the capture
    assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    xpbsi::launch(k_add, 1, 2048, 0, s)(x, 32, 2);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidConfiguration);
    end_invalidated(s);
    cudaGraphExecDestroy(ie);
    cudaGraphExecDestroy(oe);
    cudaGraphDestroy(inner);
    cudaGraphDestroy(outer);
    cudaStreamDestroy(s);
    cudaFree(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capture_records_launch_runs),
        cmocka_unit_test(test_unsafe_calls_by_mode),
        cmocka_unit_test(test_synchronising_a_capture),
        cmocka_unit_test(test_legacy_stream_and_blocking_captures),
        cmocka_unit_test(test_fork_and_join),
        cmocka_unit_test(test_external_events_and_threads),
        cmocka_unit_test(test_graphs_in_graphs_and_bad_launches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
