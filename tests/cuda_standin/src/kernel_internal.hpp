// The state of a running grid, shared by the block scheduler (kernel_exec.cpp) and the launcher
// (kernel_launch.cpp).
#ifndef XPBSI_KERNEL_INTERNAL_HPP
#define XPBSI_KERNEL_INTERNAL_HPP

#include <csetjmp>
#include <cstdint>
#include <string>
#include <vector>

#include "fiber.hpp"
#include "xpbsi/launch.hpp"

namespace xpbsi
{

enum class fstate : unsigned char { ready, barrier, warp, done };

struct fiber {
    fiber_context ctx;
    uint3 tid;
    uint32_t linear; // x + y * bx + z * bx * by: lane = linear % 32, warp = linear / 32
    fstate state;
    int stack; // the stack it runs on, -1 before it first runs
};

// What a lane brought to a warp-synchronous operation, and what it gets back.
struct warp_slot {
    uint32_t mask; // the lanes the caller named
    int op;        // detail::warp_op
    int src;       // shuffle: the source lane, -1 for the caller's own value
    int pred;      // ballot: the predicate
    size_t size;
    unsigned char val[16];
    unsigned char res[16];
};

struct warp_state {
    uint32_t exists;  // lanes of this warp that the block has
    uint32_t exited;  // lanes whose thread returned
    uint32_t waiting; // lanes inside a warp-synchronous operation
    warp_slot lane[32];
};

struct grid_run {
    detail::kernel_job *job;
    std::string name;
    dim3 grid, block;
    uint32_t nthreads;
    std::vector<fiber> fibers;
    std::vector<warp_state> warps;
    std::vector<uint32_t> order;  // the order the scheduler tries the fibers in this round
    std::vector<int> free_stacks; // stacks no running fiber holds: a thread that returns gives
                                  // its stack to the next one, so a kernel without barriers
                                  // runs every thread of a block on one warm stack
    std::vector<unsigned char> dyn;
    uint32_t live;       // threads that have not returned
    uint32_t at_barrier; // threads waiting in __syncthreads
    uint32_t bar_count;  // __syncthreads_count: predicates of this barrier
    uint32_t bar_and, bar_or;
    uint32_t bar_result_count, bar_result_and, bar_result_or; // of the last released barrier
    fiber_context sched;
    fiber *current;
    uint64_t rng;
    std::string failure; // why the block cannot go on (a trap, undefined behaviour)
    sigjmp_buf fault_jmp;
    volatile bool in_kernel;
    void *fault_addr;
    int fault_sig;
};

extern __thread grid_run *t_run __attribute__((tls_model("initial-exec")));

// Runs every thread of the block blockIdx = bidx to completion; false when the block failed
// (r.failure says why).
bool run_block(grid_run &r, uint3 bidx);
uint64_t next_random(uint64_t &state);

} // namespace xpbsi

#endif
