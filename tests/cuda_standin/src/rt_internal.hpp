// What the parts of the CUDA runtime stand-in share: the process lock, last and sticky errors,
// the device table, the memory map, stream work and stream capture, and the handle structures
// behind cudaStream_t, cudaEvent_t, cudaGraph_t and cudaGraphExec_t (declared opaque by NVIDIA's
// driver_types.h, defined here).
#ifndef XPBSI_RT_INTERNAL_HPP
#define XPBSI_RT_INTERNAL_HPP

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "xpbsi/stream_abi.h"

namespace xpbsi
{

// ---- rt_error.cpp ---------------------------------------------------------------------------
// One recursive lock around all stand-in state: the runtime is thread-safe as documented, and a
// simple lock keeps kernels (which run under it) from racing with API calls of other threads.
std::recursive_mutex &big_lock();
#define XPBSI_LOCK std::lock_guard<std::recursive_mutex> xpbsi_guard_(::xpbsi::big_lock())

// Records e as the calling thread's last error (CUDA Runtime API, cudaGetLastError: "the last
// error that has been produced by any of the runtime calls in the same host thread") unless it
// is cudaSuccess; returns e.
cudaError_t record(cudaError_t e);
// The process's sticky error (cudaSuccess while there is none). A sticky error (an illegal
// address, a launch failure) leaves the context unusable: every later call returns it.
cudaError_t sticky_error();
// Makes e the sticky error (the first one wins) and prints why on stderr.
void make_sticky(cudaError_t e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
// Prints "xpbsi: <message>" on stderr: what the stand-in refused and why, for the engineer who
// reads the failing test's output.
void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
// The common prologue of a runtime call: the sticky error, recorded, or cudaSuccess.
cudaError_t enter();
// The prologue of every runtime entry point: the lock, and the sticky error returned at once.
#define XPBSI_API_ENTER                                                                            \
    XPBSI_LOCK;                                                                                    \
    if (cudaError_t xpbsi_sticky_ = ::xpbsi::enter())                                              \
    return xpbsi_sticky_

// ---- rt_device.cpp --------------------------------------------------------------------------
struct device_spec {
    int major, minor;  // compute capability (XPB_STANDIN_CC)
    int sm_count;      // multiprocessors
    int clock_khz;     // SM clock
    size_t smem_block; // shared memory per block without opt-in (48 KiB)
    size_t smem_optin; // with cudaFuncAttributeMaxDynamicSharedMemorySize
    size_t smem_sm;    // per multiprocessor
    size_t total_mem;  // what cudaMalloc may hand out in total (XPB_STANDIN_MEM_MB)
    const char *like;  // the GPU whose numbers these are
};
const device_spec &device();
int device_count();
bool valid_device(int d);

// ---- rt_memory.cpp --------------------------------------------------------------------------
enum class mem_kind { none, device, pinned, freed };
struct mem_info {
    mem_kind kind;    // none: not an allocation of the stand-in (pageable host memory)
    const char *base; // the allocation (kind != none)
    size_t size;
};
// The allocation that contains p (freed ones are remembered, so that a use after cudaFree is
// named as such).
mem_info lookup(const void *p);
// Whether [p, p + bytes) lies inside one live allocation of `kind`.
bool within(const void *p, size_t bytes, mem_kind kind);
// Whether device code may address [p, p + bytes): device memory or pinned host memory (mapped
// into the device's address space under unified addressing).
bool addressable(const void *p, size_t bytes);
const char *kind_name(mem_kind k);
// Where p points, in words: inside, behind or in front of which allocation, or freed memory
// (for the diagnostics of a faulting kernel).
std::string describe(const void *p);
// Verifies the slack bytes behind every live device allocation (filled with a canary at
// cudaMalloc): a kernel that wrote past the end of an allocation, inside the last page, makes
// the error sticky like the illegal address it would be on a GPU.
void check_canaries();

// ---- kernel_names.cpp ----------------------------------------------------------------------
// The name of the function at fn (demangled), or "kernel at <address>".
std::string kernel_name(const void *fn);

// ---- rt_stream.cpp: stream work -------------------------------------------------------------
// One unit of stream work: a kernel grid, a copy, a memset, a library call. `run` executes it;
// it must not depend on host state that changes after it was enqueued (it is replayed by each
// launch of a graph it was captured into).
struct work_item {
    std::string what;
    std::function<void()> run;
    std::function<void()> release; // called when the work can never run again (may be empty)
    ~work_item();
};
using work_ptr = std::shared_ptr<work_item>;
work_ptr make_work(std::string what, std::function<void()> run);
// Runs w now (the stream is not capturing) or appends it to the stream's capture sequence.
// Validates the stream handle. Does not record the error (the caller does).
cudaError_t enqueue(cudaStream_t s, const work_ptr &w);
// Executes one unit of work now, unless the context already has a sticky error.
void execute(const work_item &w);
// For a potentially unsafe call (cudaThreadExchangeStreamCaptureMode in the CUDA Runtime API):
// cudaErrorStreamCaptureUnsupported, invalidating the capture that forbids it, or cudaSuccess.
cudaError_t check_unsafe(const char *api);
// cudaErrorStreamCaptureUnsupported when the stream (or the legacy stream's implicit
// synchronisation) makes a synchronous call illegal during a capture; invalidates it.
cudaError_t check_sync(cudaStream_t s, const char *api);
// Whether any capture sequence is active (kernels launched now are only recorded).
bool capturing(cudaStream_t s);

struct capture {
    unsigned long long id;
    cudaStreamCaptureMode mode;
    std::thread::id thread;
    struct CUstream_st *origin;
    std::vector<work_ptr> nodes;
    std::vector<struct CUstream_st *> members; // streams that joined (origin first)
    bool invalid = false;
    bool ended = false; // cudaStreamEndCapture happened
    std::string why;    // the first rule broken
};
// Invalidates c ("when any illegal operation is attempted during stream capture, any associated
// capture graphs are invalidated", CUDA Programming Guide, Stream Capture).
void invalidate(capture &c, cudaError_t e, const char *what);
// All active captures (for the potentially-unsafe-call rules).
std::vector<std::shared_ptr<capture>> &active_captures();
// A new graph holding `nodes` (rt_graph.cpp); the caller owns it (cudaGraphDestroy).
struct ::CUgraph_st *make_graph(std::vector<work_ptr> nodes);
// The stand-in stream behind a handle (cudaStreamLegacy, NULL and cudaStreamPerThread map to
// implicit streams); NULL when the handle is not a live stream. The runtime owns it (until
// cudaStreamDestroy, for the implicit ones for the life of the process or thread).
struct CUstream_st *resolve(cudaStream_t s);

} // namespace xpbsi

constexpr unsigned XPBSI_STREAM_MAGIC = 0x5354524du; // "STRM"
constexpr unsigned XPBSI_EVENT_MAGIC = 0x45564e54u;  // "EVNT"
constexpr unsigned XPBSI_GRAPH_MAGIC = 0x47525048u;  // "GRPH"
constexpr unsigned XPBSI_EXEC_MAGIC = 0x47455843u;   // "GEXC"

struct CUstream_st {
    const xpbsi_stream_abi *abi; // first member: include/xpbsi/stream_abi.h
    unsigned magic;
    unsigned flags;                      // cudaStreamNonBlocking ...
    bool implicit;                       // the legacy or the per-thread default stream
    bool unjoined;                       // captured work not yet joined back into the origin stream
    size_t cap_tail;                     // nodes of the capture when this stream last added one
    std::shared_ptr<xpbsi::capture> cap; // the capture sequence this stream belongs to
};

struct CUevent_st {
    unsigned magic;
    unsigned flags;
    bool recorded;                       // cudaEventRecord happened outside capture
    double ms;                           // when (the work before it is complete at once)
    std::shared_ptr<xpbsi::capture> cap; // last recorded inside this capture
    CUstream_st *cap_stream;
    size_t cap_tail;
};

struct CUgraph_st {
    unsigned magic;
    std::vector<xpbsi::work_ptr> nodes;
};

struct CUgraphExec_st {
    unsigned magic;
    std::vector<xpbsi::work_ptr> nodes;
};

#endif
