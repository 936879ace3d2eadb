/* Running a compiled program and what it reports afterwards: run() executes the steps of one
 * phase (after the prep steps when a host write made folded weights stale; oneDNN's CPU stream
 * and the own kernels finish their work inside the call, so synchronize has nothing left to
 * wait for), profile_read gives the per-op times collected then, memory_stats the arena and
 * scratchpad compile allocated. */
#include "odn.h"

xpb_status odn_run(xpb_executable *exe, uint32_t phase)
{
    if (!exe)
        return XPB_INVALID_ARGUMENT;
    const xpb_program *p = exe->prog;
    if (phase >= p->n_phases)
        return odn_fail(exe, XPB_INVALID_ARGUMENT,
                        "run: phase %u does not exist (the program has %u phases)", phase,
                        p->n_phases);
    odn_set_threads(exe->threads);
    xpb_status st;
    if (exe->prep_stale) {
        if ((st = odn_exec_steps(exe, exe->prep, 0, exe->n_prep)) != XPB_OK)
            return st;
        exe->prep_stale = 0;
    }
    st = odn_exec_steps(exe, exe->steps, exe->phase_begin[phase], exe->phase_end[phase]);
    if (st != XPB_OK)
        return st;
    if (exe->profiling) {
        const xpb_phase *ph = xpb_program_phase(p, phase);
        for (uint32_t i = ph->first_op; i < ph->first_op + ph->n_ops; i++)
            exe->op_calls[i]++;
    }
    return XPB_OK;
}

xpb_status odn_profile_read(xpb_executable *exe, xpb_op_profile *out, uint32_t capacity,
                            uint32_t *count)
{
    if (!exe)
        return XPB_INVALID_ARGUMENT;
    if (!count || (capacity && !out))
        return odn_fail(exe, XPB_INVALID_ARGUMENT,
                        "profile_read: count is NULL, or out is NULL with capacity %u", capacity);
    if (!exe->profiling)
        return odn_fail(exe, XPB_INVALID_ARGUMENT,
                        "profile_read: the executable was compiled without profiling");
    uint32_t n = exe->prog->n_ops;
    for (uint32_t i = 0; i < n && i < capacity; i++) {
        out[i].op = i;
        out[i].fused_into = exe->fuse[i].into == ODN_NONE ? XPB_NO_TENSOR : exe->fuse[i].into;
        out[i].calls = exe->op_calls[i];
        out[i].seconds = exe->op_seconds[i];
    }
    *count = n;
    return XPB_OK;
}

xpb_status odn_memory_stats(xpb_executable *exe, xpb_memory_stats *out)
{
    if (!exe)
        return XPB_INVALID_ARGUMENT;
    if (!out)
        return odn_fail(exe, XPB_INVALID_ARGUMENT, "memory_stats: out is NULL");
    /* Everything is allocated at compile and held until destroy: in use = peak. */
    uint64_t bytes = exe->arena_bytes + exe->scratch_bytes;
    if (XPB_HAS_MEMBER(out, xpb_memory_stats, bytes_in_use))
        out->bytes_in_use = bytes;
    if (XPB_HAS_MEMBER(out, xpb_memory_stats, peak_bytes))
        out->peak_bytes = bytes;
    return XPB_OK;
}
