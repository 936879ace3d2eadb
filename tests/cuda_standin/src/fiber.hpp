// Fibers for the threads of a block: stacks with a guard page, and a context switch that saves
// only what the calling convention asks a callee to keep (x86-64: six registers, MXCSR and the
// x87 control word; elsewhere ucontext), so that a grid of a million threads switches in tens of
// nanoseconds per thread instead of a system call. AddressSanitizer is told about every switch.
#ifndef XPBSI_FIBER_HPP
#define XPBSI_FIBER_HPP

#include <cstddef>

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

namespace xpbsi
{

struct fiber_stack {
    char *base; // lowest usable address (a PROT_NONE page lies below it)
    size_t size;
};

// The stack of thread slot i of a block (kept for the life of the process, reused by every
// block); aborts when the memory cannot be mapped.
fiber_stack stack_for(size_t i);

class fiber_context
{
  public:
    // Prepares this context to run entry() on `st` when it is first switched to. entry must
    // never return: it switches away for good instead.
    void init(const fiber_stack &st, void (*entry)());
    // Saves the running context in `from` and runs `to`. The stack bounds are those of `to`
    // (for AddressSanitizer); from_dying says that `from` will never run again.
    static void swap(fiber_context &from, fiber_context &to, bool from_dying = false);
    // Called first thing in entry(): completes the first switch into a fiber.
    static void started();

    const void *stack_bottom = nullptr; // of this context, when known
    size_t stack_size = 0;

  private:
#if defined(__x86_64__)
    void *sp_ = nullptr;
#else
    ucontext_t uc_;
#endif
};

} // namespace xpbsi

#endif
