// The threads of one block as fibers (CUDA C++ Programming Guide, Thread Hierarchy and
// Synchronization Functions; Warp Shuffle Functions; Warp Vote Functions). The scheduler runs
// the ready threads of the block one after another, in an order drawn anew for every round, each
// until it waits: in __syncthreads, which releases every waiting thread once all threads that
// have not returned arrived (threads that returned count as arrived, as on a GPU), or in a
// warp-synchronous operation, which releases the lanes named in its mask once all of them that
// have not returned arrived with the same mask. Nothing runs between two waits of a thread, so a
// kernel that reads what another thread writes without a barrier in between reads it before or
// after the write depending on the order: a missing barrier gives a wrong result, not a lucky
// one. A block whose threads all wait and none can be released is a deadlock: the launch fails.
#include <cstdio>
#include <cstring>

#include "kernel_internal.hpp"
#include "rt_internal.hpp"

namespace xpbsi
{

namespace detail
{
__thread builtins t_builtins __attribute__((tls_model("initial-exec")));
}

__thread grid_run *t_run __attribute__((tls_model("initial-exec"))) = nullptr;

uint64_t next_random(uint64_t &state)
{
    uint64_t z = (state += 0x9E3779B97F4A7C15ull); // splitmix64
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

namespace
{

void shuffle_order(grid_run &r)
{
    for (uint32_t i = r.nthreads; i > 1; i--) {
        uint32_t j = (uint32_t)(next_random(r.rng) % i);
        std::swap(r.order[i - 1], r.order[j]);
    }
}

// Switches from the running thread back to the scheduler; returns when it is run again.
void yield_to_scheduler(grid_run &r, fiber &f, bool dying = false)
{
    fiber_context::swap(f.ctx, r.sched, dying);
}

void entry()
{
    fiber_context::started();
    grid_run &r = *t_run;
    r.job->run_thread();
    r.current->state = fstate::done;
    yield_to_scheduler(r, *r.current, true);
    __builtin_unreachable();
}

void release_barrier(grid_run &r)
{
    if (r.at_barrier == 0 || r.at_barrier != r.live)
        return;
    for (fiber &f : r.fibers)
        if (f.state == fstate::barrier)
            f.state = fstate::ready;
    r.at_barrier = 0;
    r.bar_result_count = r.bar_count;
    r.bar_result_and = r.bar_and;
    r.bar_result_or = r.bar_or;
    r.bar_count = 0;
    r.bar_and = 1;
    r.bar_or = 0;
}

void release_group(grid_run &r, uint32_t w, uint32_t group)
{
    warp_state &ws = r.warps[w];
    uint32_t ballot = 0;
    for (int l = 0; l < 32; l++)
        if ((group >> l & 1u) && ws.lane[l].op == detail::WARP_BALLOT && ws.lane[l].pred)
            ballot |= 1u << l;
    for (int l = 0; l < 32; l++) {
        if (!(group >> l & 1u))
            continue;
        warp_slot &s = ws.lane[l];
        if (s.op == detail::WARP_SHFL) {
            if (s.src < 0)
                memcpy(s.res, s.val, s.size);
            else if ((group >> s.src & 1u) && ws.lane[s.src].op == detail::WARP_SHFL &&
                     ws.lane[s.src].size == s.size)
                memcpy(s.res, ws.lane[s.src].val, s.size);
            else // "If the target thread is inactive, the retrieved value is undefined."
                memset(s.res, 0xFF, s.size);
        } else if (s.op == detail::WARP_BALLOT) {
            uint32_t out[2] = {ballot, group};
            memcpy(s.res, out, sizeof out);
        }
        r.fibers[w * 32 + (uint32_t)l].state = fstate::ready;
    }
    ws.waiting &= ~group;
}

// Releases the lanes of warp w waiting with `mask` if every lane it names that has not returned
// waits with that same mask.
void try_release(grid_run &r, uint32_t w, uint32_t mask)
{
    warp_state &ws = r.warps[w];
    uint32_t need = mask & ws.exists & ~ws.exited;
    if (!need || (ws.waiting & need) != need)
        return;
    for (uint32_t b = need; b; b &= b - 1)
        if (ws.lane[__builtin_ctz(b)].mask != mask)
            return;
    release_group(r, w, need);
}

// After a lane of warp w returned: the groups it no longer holds back (one per distinct mask).
void release_warp(grid_run &r, uint32_t w)
{
    warp_state &ws = r.warps[w];
    uint32_t masks[32];
    int n = 0;
    for (uint32_t b = ws.waiting; b; b &= b - 1) {
        uint32_t m = ws.lane[__builtin_ctz(b)].mask;
        bool seen = false;
        for (int i = 0; i < n && !seen; i++)
            seen = masks[i] == m;
        if (!seen)
            masks[n++] = m;
    }
    for (int i = 0; i < n; i++)
        try_release(r, w, masks[i]);
}

// After thread f switched back: what its wait or its return releases.
void settle(grid_run &r, fiber &f)
{
    uint32_t w = f.linear / 32, bit = 1u << (f.linear % 32);
    switch (f.state) {
    case fstate::done:
        r.free_stacks.push_back(f.stack);
        r.live--;
        r.warps[w].exited |= bit;
        release_warp(r, w);
        release_barrier(r);
        break;
    case fstate::barrier:
        release_barrier(r);
        break;
    case fstate::warp:
        try_release(r, w, r.warps[w].lane[f.linear % 32].mask);
        break;
    case fstate::ready:
        break;
    }
}

void describe_deadlock(grid_run &r, uint3 b)
{
    char buf[512];
    int n = snprintf(buf, sizeof buf,
                     "block (%u,%u,%u): no thread can go on: %u of %u threads wait in "
                     "__syncthreads",
                     b.x, b.y, b.z, r.at_barrier, r.live);
    for (size_t w = 0; w < r.warps.size() && n < (int)sizeof buf - 80; w++) {
        const warp_state &ws = r.warps[w];
        if (!ws.waiting)
            continue;
        int l = __builtin_ctz(ws.waiting);
        uint32_t missing = ws.lane[l].mask & ws.exists & ~ws.exited & ~ws.waiting;
        n += snprintf(buf + n, sizeof buf - (size_t)n,
                      "; warp %zu: lanes %#x wait in a warp operation with mask %#x (lanes %#x "
                      "never arrive%s)",
                      w, ws.waiting, ws.lane[l].mask, missing,
                      missing ? "" : ", or arrive with another mask");
    }
    r.failure = buf;
}

} // namespace

bool run_block(grid_run &r, uint3 bidx)
{
    detail::t_builtins.block_idx = bidx;
    uint32_t n = r.nthreads, bx = r.block.x, by = r.block.y;
    r.live = n;
    r.at_barrier = 0;
    r.bar_count = r.bar_or = 0;
    r.bar_and = 1;
    for (size_t w = 0; w < r.warps.size(); w++) {
        uint32_t lanes = n - (uint32_t)w * 32 >= 32 ? 32 : n - (uint32_t)w * 32;
        r.warps[w].exists = lanes == 32 ? 0xFFFFFFFFu : (1u << lanes) - 1u;
        r.warps[w].exited = r.warps[w].waiting = 0;
    }
    for (uint32_t i = 0; i < n; i++) {
        fiber &f = r.fibers[i];
        f.linear = i;
        f.tid = uint3{i % bx, (i / bx) % by, i / (bx * by)};
        f.state = fstate::ready;
        f.stack = -1;
        r.order[i] = i;
    }
    r.free_stacks.clear();
    for (int i = (int)n - 1; i >= 0; i--)
        r.free_stacks.push_back(i);
    if (!r.dyn.empty())
        memset(r.dyn.data(), 0xFF, r.dyn.size());
    shuffle_order(r);
    while (r.live > 0) {
        bool ran = false;
        for (uint32_t k = 0; k < n; k++) {
            fiber &f = r.fibers[r.order[k]];
            if (f.state != fstate::ready)
                continue;
            ran = true;
            if (f.stack < 0) {
                f.stack = r.free_stacks.back();
                r.free_stacks.pop_back();
                f.ctx.init(stack_for((size_t)f.stack), entry);
            }
            r.current = &f;
            detail::t_builtins.thread_idx = f.tid;
            fiber_context::swap(r.sched, f.ctx);
            if (!r.failure.empty())
                return false;
            settle(r, f);
        }
        if (!ran) {
            describe_deadlock(r, bidx);
            return false;
        }
        if (r.live > 0)
            shuffle_order(r);
    }
    return true;
}

namespace detail
{

void *dynamic_smem()
{
    return t_run && !t_run->dyn.empty() ? t_run->dyn.data() : nullptr;
}

size_t dynamic_smem_size()
{
    return t_run ? t_run->dyn.size() : 0;
}

void syncthreads()
{
    grid_run &r = *t_run;
    fiber &f = *r.current;
    f.state = fstate::barrier;
    r.at_barrier++;
    yield_to_scheduler(r, f);
}

int syncthreads_reduce(int pred, int which)
{
    grid_run &r = *t_run;
    r.bar_count += pred ? 1u : 0u;
    r.bar_and &= pred ? 1u : 0u;
    r.bar_or |= pred ? 1u : 0u;
    syncthreads();
    return which == 0   ? (int)r.bar_result_count
           : which == 1 ? (int)r.bar_result_and
                        : (int)r.bar_result_or;
}

void warp_exchange(unsigned mask, int op, const void *value, size_t size, int src, int pred,
                   void *out)
{
    grid_run &r = *t_run;
    fiber &f = *r.current;
    uint32_t w = f.linear / 32, lane = f.linear % 32;
    if (!(mask >> lane & 1u)) {
        char why[160];
        snprintf(why, sizeof why,
                 "lane %u calls a warp-synchronous function with mask %#x, which does not name it "
                 "(undefined behaviour)",
                 lane, mask);
        device_trap(why);
    }
    warp_slot &s = r.warps[w].lane[lane];
    s.mask = mask;
    s.op = op;
    s.src = src;
    s.pred = pred;
    s.size = size;
    if (size)
        memcpy(s.val, value, size);
    r.warps[w].waiting |= 1u << lane;
    f.state = fstate::warp;
    yield_to_scheduler(r, f);
    if (out && op != WARP_SYNC)
        memcpy(out, s.res, op == WARP_BALLOT ? 2 * sizeof(uint32_t) : size);
}

void yield_thread()
{
    grid_run *r = t_run;
    if (r)
        yield_to_scheduler(*r, *r->current);
}

void device_trap(const char *why)
{
    grid_run &r = *t_run;
    fiber &f = *r.current;
    char buf[400];
    snprintf(buf, sizeof buf, "block (%u,%u,%u) thread (%u,%u,%u): %s", t_builtins.block_idx.x,
             t_builtins.block_idx.y, t_builtins.block_idx.z, f.tid.x, f.tid.y, f.tid.z, why);
    r.failure = buf;
    f.state = fstate::done;
    yield_to_scheduler(r, f, true);
    __builtin_unreachable();
}

} // namespace detail

} // namespace xpbsi
