/* The NCCL stand-in, loaded with dlopen as the plugin loads NCCL, with two ranks that are two
 * processes: sum and average all-reduces (out of place and in place), one captured into a graph
 * (nothing is reduced until the graph is launched), a non-blocking initialisation polled with
 * ncclCommGetAsyncError, and a rank that aborts, which the other rank's collective reports as an
 * asynchronous error. */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

struct nccl_api {
    ncclResult_t (*get_unique_id)(ncclUniqueId *);
    ncclResult_t (*init_rank)(ncclComm_t *, int, ncclUniqueId, int);
    ncclResult_t (*init_rank_config)(ncclComm_t *, int, ncclUniqueId, int, ncclConfig_t *);
    ncclResult_t (*all_reduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
                               ncclComm_t, cudaStream_t);
    ncclResult_t (*async_error)(ncclComm_t, ncclResult_t *);
    ncclResult_t (*destroy)(ncclComm_t);
    ncclResult_t (*abort_comm)(ncclComm_t);
};

static struct nccl_api api;

static int setup(void **state)
{
    (void)state;
    void *h = dlopen(XPBSI_NCCL_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return -1;
    /* function pointers through void *: POSIX guarantees the conversion for dlsym */
    *(void **)&api.get_unique_id = dlsym(h, "ncclGetUniqueId");
    *(void **)&api.init_rank = dlsym(h, "ncclCommInitRank");
    *(void **)&api.init_rank_config = dlsym(h, "ncclCommInitRankConfig");
    *(void **)&api.all_reduce = dlsym(h, "ncclAllReduce");
    *(void **)&api.async_error = dlsym(h, "ncclCommGetAsyncError");
    *(void **)&api.destroy = dlsym(h, "ncclCommDestroy");
    *(void **)&api.abort_comm = dlsym(h, "ncclCommAbort");
    return api.get_unique_id && api.all_reduce && api.abort_comm ? 0 : -1;
}

#define N 3000

/* Runs rank(r, id) in two processes; 0 when both exit 0. */
static int two_ranks(int (*rank)(int, ncclUniqueId), ncclUniqueId id)
{
    fflush(stderr);
    pid_t pid[2];
    for (int r = 0; r < 2; r++) {
        pid[r] = fork();
        if (pid[r] == 0)
            _exit(rank(r, id));
    }
    int bad = 0;
    for (int r = 0; r < 2; r++) {
        int status = 0;
        waitpid(pid[r], &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "rank %d: status %d\n", r, status);
            bad = 1;
        }
    }
    return bad;
}

static int reduce_rank(int r, ncclUniqueId id)
{
    ncclComm_t comm = NULL;
    if (api.init_rank(&comm, 2, id, r) != ncclSuccess)
        return 2;
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    float h[N], *send = NULL, *recv = NULL;
    for (int i = 0; i < N; i++)
        h[i] = (float)(i + 1000 * r);
    cudaMalloc((void **)&send, sizeof h);
    cudaMalloc((void **)&recv, sizeof h);
    cudaMemcpy(send, h, sizeof h, cudaMemcpyHostToDevice);
    if (api.all_reduce(send, recv, N, ncclFloat32, ncclSum, comm, s) != ncclSuccess)
        return 3;
    cudaMemcpy(h, recv, sizeof h, cudaMemcpyDeviceToHost);
    for (int i = 0; i < N; i++)
        if (h[i] != (float)(2 * i + 1000))
            return 4;
    /* in place, the average, captured: reduced only when the graph is launched */
    cudaGraph_t g;
    cudaGraphExec_t e;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    if (api.all_reduce(recv, recv, N, ncclFloat32, ncclAvg, comm, s) != ncclSuccess)
        return 5;
    if (cudaStreamEndCapture(s, &g) != cudaSuccess || cudaGraphInstantiate(&e, g, 0))
        return 6;
    cudaMemcpy(h, recv, sizeof h, cudaMemcpyDeviceToHost);
    if (h[1] != 1002.0f)
        return 7; /* not yet reduced */
    if (r == 1) { /* different values on each rank before the average */
        for (int i = 0; i < N; i++)
            h[i] = 0.0f;
        cudaMemcpy(recv, h, sizeof h, cudaMemcpyHostToDevice);
    }
    cudaGraphLaunch(e, s);
    cudaStreamSynchronize(s);
    cudaMemcpy(h, recv, sizeof h, cudaMemcpyDeviceToHost);
    for (int i = 0; i < N; i++)
        if (h[i] != (float)(2 * i + 1000) / 2.0f)
            return 8;
    ncclResult_t async = ncclInternalError;
    if (api.async_error(comm, &async) != ncclSuccess || async != ncclSuccess)
        return 9;
    return api.destroy(comm) == ncclSuccess ? 0 : 10;
}

static void test_all_reduce(void **state)
{
    (void)state;
    ncclUniqueId id;
    assert_int_equal(api.get_unique_id(&id), ncclSuccess);
    assert_int_equal(two_ranks(reduce_rank, id), 0);
}

static int nonblocking_rank(int r, ncclUniqueId id)
{
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclComm_t comm = NULL;
    ncclResult_t res = api.init_rank_config(&comm, 2, id, r, &config);
    if (res != ncclInProgress && res != ncclSuccess)
        return 2;
    float x = (float)(r + 1), *d = NULL;
    cudaMalloc((void **)&d, sizeof x);
    cudaMemcpy(d, &x, sizeof x, cudaMemcpyHostToDevice);
    if (res == ncclInProgress &&
        api.all_reduce(d, d, 1, ncclFloat32, ncclSum, comm, NULL) != ncclInvalidUsage)
        return 3; /* a collective before the initialisation completed */
    do
        api.async_error(comm, &res);
    while (res == ncclInProgress);
    if (res != ncclSuccess || api.all_reduce(d, d, 1, ncclFloat32, ncclSum, comm, NULL))
        return 4;
    cudaMemcpy(&x, d, sizeof x, cudaMemcpyDeviceToHost);
    return x == 3.0f && api.destroy(comm) == ncclSuccess ? 0 : 5;
}

static void test_nonblocking_init(void **state)
{
    (void)state;
    ncclUniqueId id;
    assert_int_equal(api.get_unique_id(&id), ncclSuccess);
    assert_int_equal(two_ranks(nonblocking_rank, id), 0);
}

static int abort_rank(int r, ncclUniqueId id)
{
    ncclComm_t comm = NULL;
    if (api.init_rank(&comm, 2, id, r) != ncclSuccess)
        return 2;
    if (r == 1)
        return api.abort_comm(comm) == ncclSuccess ? 0 : 3;
    float x = 1.0f, *d = NULL;
    cudaMalloc((void **)&d, sizeof x);
    cudaMemcpy(d, &x, sizeof x, cudaMemcpyHostToDevice);
    if (api.all_reduce(d, d, 1, ncclFloat32, ncclSum, comm, NULL) != ncclSuccess)
        return 4; /* enqueued: the failure is asynchronous */
    ncclResult_t async = ncclSuccess;
    api.async_error(comm, &async);
    return async == ncclRemoteError ? 0 : 5;
}

static void test_abort_is_an_async_error(void **state)
{
    (void)state;
    ncclUniqueId id;
    assert_int_equal(api.get_unique_id(&id), ncclSuccess);
    assert_int_equal(two_ranks(abort_rank, id), 0);
}

int main(void)
{
    setenv("XPB_STANDIN_NCCL_TIMEOUT", "30", 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_reduce),
        cmocka_unit_test(test_nonblocking_init),
        cmocka_unit_test(test_abort_is_an_async_error),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
