// Kernel launches on the CPU stand-in (tests only; tests/cuda_standin/README.md).
//
//     #include "xpbsi/launch.hpp"
//     xpbsi::launch(kernel, grid, block, dynamic_smem, stream)(arg1, arg2, ...);
//
// is what `kernel<<<grid, block, dynamic_smem, stream>>>(arg1, arg2, ...)` does under nvcc:
// launch() checks nothing yet and returns a callable; calling it converts the arguments to the
// kernel's parameter types, copies them (kernel parameters are passed by value, and a graph
// replays the values of the launch it captured), checks the configuration as the runtime does
// (a bad one sets the calling thread's last error, cudaErrorInvalidConfiguration, and launches
// nothing) and enqueues the grid on the stream: run at once, or recorded into the graph while
// the stream captures. Every block runs with its real geometry; its threads are fibers, so
// __syncthreads() is a barrier and warp operations wait for their lanes.
//
// Inside a kernel (compiled with device_shim.hpp): threadIdx, blockIdx, blockDim, gridDim and
// warpSize are those of the running thread, and xpbsi::dynamic_shared<T>() is the block's
// dynamic shared memory (what `extern __shared__ T name[]` names under nvcc).
#ifndef XPBSI_LAUNCH_HPP
#define XPBSI_LAUNCH_HPP

#include <cuda_runtime_api.h>
#include <vector_types.h>

#include <cstddef>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

namespace xpbsi
{

// The built-in variables of the thread that runs now (set by the scheduler at every switch).
// Plain data, so that they can live in static thread-local storage: kernels read them all the
// time, and a __thread variable with the initial-exec model is one load, where a C++
// thread_local costs a call (and __tls_get_addr in a shared object) per read.
struct builtins {
    uint3 thread_idx;
    uint3 block_idx;
    uint3 block_dim;
    uint3 grid_dim;
};

namespace detail
{

extern __thread builtins t_builtins __attribute__((tls_model("initial-exec")));

// A launch whose arguments are bound: run_thread() runs the kernel body for the current thread.
class kernel_job
{
  public:
    explicit kernel_job(const void *fn) : fn_(fn) {}
    virtual ~kernel_job() = default;
    virtual void run_thread() = 0;
    const void *function() const
    {
        return fn_;
    }

  private:
    const void *fn_;
};

// Validates the configuration, records errors as the runtime does and enqueues the grid.
void launch_grid(std::shared_ptr<kernel_job> job, dim3 grid, dim3 block, size_t dynamic_smem,
                 cudaStream_t stream);

// The block's dynamic shared memory (0xFF bytes at the start of each block: undefined on a GPU),
// owned by the running grid and valid while its block runs; NULL outside a kernel.
void *dynamic_smem();
size_t dynamic_smem_size();

// What the device functions (device_functions.hpp) ask of the scheduler.
enum warp_op { WARP_SHFL = 0, WARP_BALLOT = 1, WARP_SYNC = 2 };
// __syncthreads: waits until every thread of the block that has not returned arrives.
void syncthreads();
// __syncthreads_count/_and/_or: the barrier, and the reduction of pred over the block.
int syncthreads_reduce(int pred, int which); // which: 0 count, 1 and, 2 or
// A warp-synchronous operation: waits until every lane named in mask that has not returned
// arrives with the same mask, then writes the result (size bytes) to out. Shuffle: src is the
// source lane or -1 for the caller's value; the value of a lane that does not take part is
// undefined (0xFF bytes here). Ballot: out gets two uint32: the ballot and the lanes present.
void warp_exchange(unsigned mask, int op, const void *value, size_t size, int src, int pred,
                   void *out);
// Lets the other threads of the block run (__nanosleep, spin loops).
void yield_thread();
// Ends the grid with cudaErrorLaunchFailure (sticky), naming why: a trap, an assertion, a use of
// a device function the stand-in finds undefined.
[[noreturn]] void device_trap(const char *why);

template <typename... P> class bound_job : public kernel_job
{
  public:
    bound_job(void (*k)(P...), std::tuple<std::decay_t<P>...> args)
        : kernel_job(reinterpret_cast<const void *>(k)), k_(k), args_(std::move(args))
    {
    }
    void run_thread() override
    {
        // each thread receives its own copy of the parameters, as on a GPU
        std::tuple<std::decay_t<P>...> mine = args_;
        std::apply(k_, mine);
    }

  private:
    void (*k_)(P...);
    std::tuple<std::decay_t<P>...> args_;
};

} // namespace detail

template <typename... P> class launcher
{
  public:
    launcher(void (*k)(P...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream)
        : k_(k), grid_(grid), block_(block), smem_(smem), stream_(stream)
    {
    }
    template <typename... A> void operator()(A &&...args) const
    {
        static_assert(sizeof...(A) == sizeof...(P), "a kernel launch needs one argument per "
                                                    "parameter of the kernel");
        auto job = std::make_shared<detail::bound_job<P...>>(
            k_, std::tuple<std::decay_t<P>...>(std::forward<A>(args)...));
        detail::launch_grid(std::move(job), grid_, block_, smem_, stream_);
    }

  private:
    void (*k_)(P...);
    dim3 grid_, block_;
    size_t smem_;
    cudaStream_t stream_;
};

// The launch of `kernel` with this configuration; call the result with the kernel's arguments.
template <typename... P>
launcher<P...> launch(void (*kernel)(P...), dim3 grid, dim3 block, size_t dynamic_smem = 0,
                      cudaStream_t stream = 0)
{
    return launcher<P...>(kernel, grid, block, dynamic_smem, stream);
}

// The dynamic shared memory of the running block as an array of T (see detail::dynamic_smem).
template <typename T> T *dynamic_shared()
{
    return static_cast<T *>(detail::dynamic_smem());
}

} // namespace xpbsi

#endif
