// Fiber stacks and context switches (fiber.hpp).
#include "fiber.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define XPBSI_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define XPBSI_ASAN 1
#endif
#endif
#if defined(XPBSI_ASAN)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

#if defined(__x86_64__)
// void xpbsi_fiber_switch(void **save_sp, void *load_sp): pushes the callee-saved registers and
// the floating-point control state on the current stack, stores the stack pointer in *save_sp,
// loads load_sp and pops the same from there (System V AMD64 ABI, "Registers": rbx, rbp, r12-r15
// are preserved across calls, as are the control bits of MXCSR and the x87 control word).
asm(R"(
    .text
    .globl xpbsi_fiber_switch
    .hidden xpbsi_fiber_switch
    .type xpbsi_fiber_switch,@function
xpbsi_fiber_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size xpbsi_fiber_switch, .-xpbsi_fiber_switch
)");
extern "C" void xpbsi_fiber_switch(void **save_sp, void *load_sp);
#endif

namespace xpbsi
{

namespace
{

#if defined(XPBSI_ASAN)
thread_local const void *t_main_bottom = nullptr;
thread_local size_t t_main_size = 0;
#endif

size_t stack_bytes()
{
    static const size_t bytes = [] {
        const char *v = getenv("XPB_STANDIN_STACK_KB");
        size_t kb = v && atol(v) > 0 ? (size_t)atol(v) : 0;
#if defined(XPBSI_ASAN)
        if (!kb)
            kb = 512;
#else
        if (!kb)
            kb = 128;
#endif
        return kb << 10;
    }();
    return bytes;
}

// AddressSanitizer's fiber protocol around a switch from one stack to another: announce the
// stack we go to (and whether the one we leave dies), then, once back, finish the switch.
void *before_switch(const fiber_context &to, bool from_dying)
{
#if defined(XPBSI_ASAN)
    void *fake = nullptr;
    const void *bottom = to.stack_bottom ? to.stack_bottom : t_main_bottom;
    size_t size = to.stack_bottom ? to.stack_size : t_main_size;
    __sanitizer_start_switch_fiber(from_dying ? nullptr : &fake, bottom, size);
    return fake;
#else
    (void)to;
    (void)from_dying;
    return nullptr;
#endif
}

void after_switch(void *fake)
{
#if defined(XPBSI_ASAN)
    __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#else
    (void)fake;
#endif
}

} // namespace

fiber_stack stack_for(size_t i)
{
    static std::vector<fiber_stack> &pool =
        *new std::vector<fiber_stack>; // immortal: reachable at exit
    while (pool.size() <= i) {
        size_t page = (size_t)sysconf(_SC_PAGESIZE), len = stack_bytes() + page;
        void *p = mmap(nullptr, len, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) {
            fprintf(stderr, "xpbsi: cannot map a %zu-byte fiber stack\n", len);
            abort();
        }
        mprotect(p, page, PROT_NONE); // the guard page: a stack overflow faults
        pool.push_back({static_cast<char *>(p) + page, stack_bytes()});
    }
    return pool[i];
}

#if defined(__x86_64__)
void fiber_context::init(const fiber_stack &st, void (*entry)())
{
    stack_bottom = st.base;
    stack_size = st.size;
#if defined(XPBSI_ASAN)
    // the frames of the stack's previous fiber never returned: their redzones are still marked
    __asan_unpoison_memory_region(st.base, st.size);
#endif
    uintptr_t top = ((uintptr_t)st.base + st.size) & ~(uintptr_t)15;
    // From the top: a zero return address for entry's own frame, entry's address for `ret`
    // (16-byte aligned, so that entry starts with rsp = 8 mod 16 as after a call), six zeroed
    // registers, then MXCSR (0x1F80: all exceptions masked, round to nearest) and the x87
    // control word (0x037F: the same, extended precision).
    uint64_t *ret_slot = reinterpret_cast<uint64_t *>(top - 16);
    ret_slot[1] = 0;
    ret_slot[0] = reinterpret_cast<uint64_t>(entry);
    uint64_t *sp = ret_slot - 7;
    memset(sp, 0, 7 * sizeof(uint64_t));
    uint32_t ctl[2] = {0x1F80u, 0x037Fu};
    memcpy(sp, ctl, sizeof ctl);
    sp_ = sp;
}

void fiber_context::swap(fiber_context &from, fiber_context &to, bool from_dying)
{
    void *fake = before_switch(to, from_dying);
    xpbsi_fiber_switch(&from.sp_, to.sp_);
    after_switch(fake);
}
#else
void fiber_context::init(const fiber_stack &st, void (*entry)())
{
    stack_bottom = st.base;
    stack_size = st.size;
#if defined(XPBSI_ASAN)
    __asan_unpoison_memory_region(st.base, st.size);
#endif
    getcontext(&uc_);
    uc_.uc_stack.ss_sp = st.base;
    uc_.uc_stack.ss_size = st.size;
    uc_.uc_link = nullptr;
    makecontext(&uc_, entry, 0);
}

void fiber_context::swap(fiber_context &from, fiber_context &to, bool from_dying)
{
    void *fake = before_switch(to, from_dying);
    swapcontext(&from.uc_, &to.uc_);
    after_switch(fake);
}
#endif

void fiber_context::started()
{
#if defined(XPBSI_ASAN)
    __sanitizer_finish_switch_fiber(nullptr, &t_main_bottom, &t_main_size);
#endif
}

} // namespace xpbsi
