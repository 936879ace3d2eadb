// Kernel launches (xpbsi/launch.hpp): the checks the runtime makes at launch (CUDA Runtime API,
// cudaLaunchKernel; driver_types.h, cudaErrorInvalidConfiguration: "a kernel launch is
// requesting resources that can never be satisfied by the current device. Requesting more
// shared memory per block than the device supports will trigger this error, as will requesting
// too many threads or blocks"), the grid as stream work, its blocks in a scrambled order (a
// kernel must not depend on the order of its blocks), and faults: a kernel that touches memory it
// may not (a guard page, freed memory, a stack overflow) ends with the sticky
// cudaErrorIllegalAddress, as it does on a GPU, and a trap or a deadlock with the sticky
// cudaErrorLaunchFailure.
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include "kernel_internal.hpp"
#include "rt_internal.hpp"
#include "xpbsi/standin.h"

namespace xpbsi
{

namespace
{

unsigned long long g_grids = 0;
// cudaFuncAttributeMaxDynamicSharedMemorySize by kernel (immortal: reachable at exit)
std::map<const void *, int> &g_max_dynamic_smem = *new std::map<const void *, int>;
struct sigaction g_prev_segv, g_prev_bus;

void on_fault(int sig, siginfo_t *si, void *)
{
    grid_run *r = t_run;
    if (r && r->in_kernel) {
        r->in_kernel = false;
        r->fault_addr = si->si_addr;
        r->fault_sig = sig;
        siglongjmp(r->fault_jmp, 1);
    }
    // not a kernel's: the fault repeats under the handler that was there before
    sigaction(sig, sig == SIGSEGV ? &g_prev_segv : &g_prev_bus, nullptr);
}

// The fault handler, installed for the time a grid runs (a test framework or a sanitizer may
// install its own between launches), and an alternate signal stack for this thread (a fiber
// that overflows its stack cannot run the handler on it).
void arm_fault_handler()
{
    thread_local bool alt = false;
    thread_local void *alt_stack = nullptr; // kept for the life of the thread
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &g_prev_segv);
    sigaction(SIGBUS, &sa, &g_prev_bus);
    if (!alt) {
        stack_t old;
        if (sigaltstack(nullptr, &old) == 0 && (old.ss_flags & SS_DISABLE)) {
            stack_t ss;
            ss.ss_size = 256 << 10;
            ss.ss_sp = alt_stack = malloc(ss.ss_size);
            ss.ss_flags = 0;
            if (ss.ss_sp)
                sigaltstack(&ss, nullptr);
        }
        alt = true;
    }
}

void disarm_fault_handler()
{
    sigaction(SIGSEGV, &g_prev_segv, nullptr);
    sigaction(SIGBUS, &g_prev_bus, nullptr);
}

uint64_t gcd(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

uint64_t seed()
{
    static const uint64_t s = [] {
        const char *v = getenv("XPB_STANDIN_SEED");
        return v && v[0] ? strtoull(v, nullptr, 0) : 1ull;
    }();
    return s;
}

// Runs the grid: its blocks in the order k -> (a * k + c) mod blocks, a permutation.
void run_grid(detail::kernel_job &job, const std::string &name, dim3 grid, dim3 block, size_t smem)
{
    grid_run r;
    r.job = &job;
    r.name = name;
    r.grid = grid;
    r.block = block;
    r.nthreads = block.x * block.y * block.z;
    r.fibers.resize(r.nthreads);
    r.warps.resize((r.nthreads + 31) / 32);
    r.order.resize(r.nthreads);
    r.dyn.assign(smem, 0xFF);
    r.rng = seed() ^ (++g_grids * 0x2545F4914F6CDD1Dull);
    r.in_kernel = false;
    r.fault_addr = nullptr;
    r.fault_sig = 0;
    detail::t_builtins.block_dim = block;
    detail::t_builtins.grid_dim = grid;
    uint64_t blocks = (uint64_t)grid.x * grid.y * grid.z;
    uint64_t a = next_random(r.rng) % blocks | 1, c = next_random(r.rng) % blocks;
    while (gcd(a, blocks) != 1)
        a++;
    arm_fault_handler();
    grid_run *outer = t_run;
    t_run = &r;
    static thread_local uint64_t k; // survives the jump back from a fault
    k = 0;
    if (sigsetjmp(r.fault_jmp, 1) == 0) {
        for (; k < blocks; k++) {
            uint64_t b = (uint64_t)(((unsigned __int128)a * k + c) % blocks);
            uint3 bidx = {(unsigned)(b % grid.x), (unsigned)(b / grid.x % grid.y),
                          (unsigned)(b / ((uint64_t)grid.x * grid.y))};
            r.in_kernel = true;
            bool ok = run_block(r, bidx);
            r.in_kernel = false;
            if (!ok) {
                make_sticky(cudaErrorLaunchFailure, "%s: %s", name.c_str(), r.failure.c_str());
                break;
            }
        }
    } else {
        const uint3 b = detail::t_builtins.block_idx, t = detail::t_builtins.thread_idx;
        make_sticky(cudaErrorIllegalAddress, "%s: block (%u,%u,%u) thread (%u,%u,%u): %s at %p, %s",
                    name.c_str(), b.x, b.y, b.z, t.x, t.y, t.z,
                    r.fault_sig == SIGBUS ? "bus error" : "invalid access", r.fault_addr,
                    describe(r.fault_addr).c_str());
    }
    disarm_fault_handler();
    t_run = outer;
}

cudaError_t check_config(const void *fn, dim3 g, dim3 b, size_t smem, std::string &why)
{
    char buf[200];
    uint64_t threads = (uint64_t)b.x * b.y * b.z;
    if (b.x == 0 || b.y == 0 || b.z == 0 || b.x > 1024 || b.y > 1024 || b.z > 64 || threads > 1024)
        snprintf(buf, sizeof buf, "block (%u,%u,%u): at most (1024,1024,64) and 1024 threads", b.x,
                 b.y, b.z);
    else if (g.x == 0 || g.y == 0 || g.z == 0 || g.x > 0x7fffffffu || g.y > 65535 || g.z > 65535)
        snprintf(buf, sizeof buf, "grid (%u,%u,%u): at most (2^31-1,65535,65535), none zero", g.x,
                 g.y, g.z);
    else {
        auto it = g_max_dynamic_smem.find(fn);
        size_t limit = it != g_max_dynamic_smem.end() ? (size_t)it->second : device().smem_block;
        if (smem <= limit)
            return cudaSuccess;
        snprintf(buf, sizeof buf,
                 "%zu bytes of dynamic shared memory: the limit is %zu (more than %zu needs "
                 "cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize), up to %zu)",
                 smem, limit, device().smem_block, device().smem_optin);
    }
    why = buf;
    return cudaErrorInvalidConfiguration;
}

} // namespace

namespace detail
{

void launch_grid(std::shared_ptr<kernel_job> job, dim3 grid, dim3 block, size_t dynamic_smem,
                 cudaStream_t stream)
{
    XPBSI_LOCK;
    if (enter() != cudaSuccess)
        return;
    CUstream_st *st = resolve(stream);
    if (!st) {
        record(cudaErrorInvalidResourceHandle);
        return;
    }
    std::string name = kernel_name(job->function()), why;
    if (cudaError_t e = check_config(job->function(), grid, block, dynamic_smem, why)) {
        diag("launch of %s refused: %s", name.c_str(), why.c_str());
        if (st->cap)
            invalidate(*st->cap, e, "a kernel launch");
        record(e);
        return;
    }
    work_ptr w = make_work(name, [job, name, grid, block, dynamic_smem] {
        run_grid(*job, name, grid, block, dynamic_smem);
    });
    record(enqueue(stream, w));
}

} // namespace detail

} // namespace xpbsi

extern "C" {

unsigned long long xpbsi_grids_executed(void)
{
    XPBSI_LOCK;
    return xpbsi::g_grids;
}

cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value)
{
    XPBSI_API_ENTER;
    if (!func)
        return xpbsi::record(cudaErrorInvalidDeviceFunction);
    if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) {
        if (value < 0 || (size_t)value > xpbsi::device().smem_optin)
            return xpbsi::record(cudaErrorInvalidValue);
        xpbsi::g_max_dynamic_smem[func] = value;
        return cudaSuccess;
    }
    if (attr == cudaFuncAttributePreferredSharedMemoryCarveout)
        return value >= -1 && value <= 100 ? cudaSuccess : xpbsi::record(cudaErrorInvalidValue);
    return xpbsi::record(cudaErrorInvalidValue);
}

} // extern "C"
