/* Execution: creating the primitives and memory objects of planned steps (once, at compile),
 * running the steps of a phase, per-op profiles and memory statistics. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "odn.h"

static size_t scratch_need(const odn_step *steps, uint32_t n)
{
    size_t need = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (steps[i].kind != ODN_STEP_PRIM)
            continue;
        const dnnl_memory_desc_t *md = odn_pd_md(steps[i].pd, dnnl_query_scratchpad_md);
        size_t b = md ? dnnl_memory_desc_get_size(md) : 0;
        if (b > need)
            need = b;
    }
    return need;
}

/* One scratchpad for all primitives: steps run one at a time. */
static xpb_status allocate_scratch(xpb_executable *exe)
{
    if (exe->scratch)
        return XPB_OK;
    size_t a = scratch_need(exe->steps, exe->n_steps), b = scratch_need(exe->prep, exe->n_prep);
    size_t need = a > b ? a : b;
    if (!need)
        return XPB_OK;
    void *p = NULL;
    if (posix_memalign(&p, 4096, need) != 0)
        return odn_fail(exe, XPB_OUT_OF_MEMORY, "compile: cannot allocate a %zu-byte scratchpad",
                        need);
    memset(p, 0, need);
    exe->scratch = p;
    exe->scratch_bytes = need;
    return XPB_OK;
}

xpb_status odn_finalize_steps(xpb_executable *exe, odn_step *steps, uint32_t n)
{
    xpb_status st = allocate_scratch(exe);
    if (st != XPB_OK)
        return st;
    for (uint32_t i = 0; i < n; i++) {
        odn_step *s = &steps[i];
        exe->cur_op = s->op;
        for (uint32_t k = 0; k < s->n; k++)
            s->o[k].ptr = exe->bufs[s->o[k].buf].ptr;
        if (s->kind != ODN_STEP_PRIM)
            continue;
        s->nargs = 0;
        for (uint32_t k = 0; k < s->n; k++) {
            ODN_TRY(exe,
                    dnnl_memory_create(&s->o[k].mem, &s->o[k].md, exe->be->engine, s->o[k].ptr),
                    "memory object");
            s->args[s->nargs++] = (dnnl_exec_arg_t){s->o[k].arg, s->o[k].mem};
        }
        const dnnl_memory_desc_t *sp = odn_pd_md(s->pd, dnnl_query_scratchpad_md);
        if (sp && dnnl_memory_desc_get_size(sp) > 0) {
            ODN_TRY(exe, dnnl_memory_create(&s->scratch_mem, sp, exe->be->engine, exe->scratch),
                    "scratchpad memory object");
            s->args[s->nargs++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, s->scratch_mem};
        }
        ODN_TRY(exe, dnnl_primitive_create(&s->prim, s->pd), "primitive creation");
    }
    exe->cur_op = ODN_NONE;
    return XPB_OK;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

xpb_status odn_exec_steps(xpb_executable *exe, odn_step *steps, uint32_t begin, uint32_t end)
{
    for (uint32_t i = begin; i < end; i++) {
        odn_step *s = &steps[i];
        double t0 = exe->profiling ? now_seconds() : 0.0;
        if (s->kind == ODN_STEP_PRIM) {
            dnnl_status_t r = dnnl_primitive_execute(s->prim, exe->be->stream, s->nargs, s->args);
            if (r != dnnl_success) {
                char label[256];
                odn_op_label(exe, s->op, label, sizeof label);
                return odn_fail(exe, XPB_DEVICE_ERROR, "run: %s: oneDNN execute: %s", label,
                                dnnl_status2str(r));
            }
        } else {
            xpb_status st = s->fn(s);
            if (st != XPB_OK) {
                char label[256];
                odn_op_label(exe, s->op, label, sizeof label);
                return odn_fail(exe, st, "run: %s: %s", label, s->why ? s->why : xpb_strerror(st));
            }
        }
        s->calls++;
        if (exe->profiling && s->op < exe->prog->n_ops) {
            /* oneDNN's CPU stream runs a primitive to completion inside execute() */
            exe->op_seconds[s->op] += now_seconds() - t0;
        }
    }
    return XPB_OK;
}

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
        const xpb_phase *ph = &p->phases[phase];
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
    uint64_t bytes = exe->arena_bytes + exe->scratch_bytes + exe->host_bytes;
    if (XPB_HAS_MEMBER(out, xpb_memory_stats, bytes_in_use))
        out->bytes_in_use = bytes;
    if (XPB_HAS_MEMBER(out, xpb_memory_stats, peak_bytes))
        out->peak_bytes = bytes;
    return XPB_OK;
}

/* A short text for a memory descriptor: data type, dims, and the blocking ("abcd", "aBcd16b"
 * style: outer dims by decreasing stride, inner blocks after). */
static void md_text(const dnnl_memory_desc_t *md, char *buf, size_t size)
{
    int n = snprintf(buf, size, "%s:", dnnl_dt2str(md->data_type));
    for (int i = 0; i < md->ndims && n < (int)size; i++)
        n += snprintf(buf + n, size - (size_t)n, "%s%lld", i ? "x" : "", (long long)md->dims[i]);
    if (md->format_kind != dnnl_blocked || n >= (int)size) {
        if (n < (int)size)
            snprintf(buf + n, size - (size_t)n, ":%s", dnnl_fmt_kind2str(md->format_kind));
        return;
    }
    const dnnl_blocking_desc_t *b = &md->format_desc.blocking;
    int order[DNNL_MAX_NDIMS], used[DNNL_MAX_NDIMS] = {0};
    for (int k = 0; k < md->ndims; k++) { /* outer dims by decreasing stride */
        int best = -1;
        for (int i = 0; i < md->ndims; i++)
            if (!used[i] && (best < 0 || b->strides[i] > b->strides[best]))
                best = i;
        used[best] = 1;
        order[k] = best;
    }
    char tag[64];
    int t = 0;
    for (int k = 0; k < md->ndims && t < 60; k++) {
        int blocked = 0;
        for (int j = 0; j < b->inner_nblks; j++)
            blocked |= b->inner_idxs[j] == order[k];
        tag[t++] = (char)((blocked ? 'A' : 'a') + order[k]);
    }
    for (int j = 0; j < b->inner_nblks && t < 56; j++)
        t += snprintf(tag + t, sizeof tag - (size_t)t, "%lld%c", (long long)b->inner_blks[j],
                      (char)('a' + b->inner_idxs[j]));
    tag[t] = '\0';
    snprintf(buf + n, size - (size_t)n, ":%s", tag);
}

void odn_dump_steps(const xpb_executable *exe, FILE *f)
{
    fprintf(f, "cpu_onednn: %u steps, arena %.1f MiB, scratchpad %.1f MiB, %u buffers\n",
            exe->n_steps, (double)exe->arena_bytes / 1048576.0,
            (double)exe->scratch_bytes / 1048576.0, exe->n_bufs);
    for (uint32_t i = 0; i < exe->n_steps; i++) {
        const odn_step *s = &exe->steps[i];
        char label[256];
        odn_op_label(exe, s->op, label, sizeof label);
        if (s->kind == ODN_STEP_PRIM) {
            const char *impl = "?";
            dnnl_primitive_kind_t k = dnnl_undefined_primitive;
            dnnl_primitive_desc_query(s->pd, dnnl_query_impl_info_str, 0, &impl);
            dnnl_primitive_desc_query(s->pd, dnnl_query_primitive_kind, 0, &k);
            fprintf(f, "%4u %-48s %s %s", i, label, dnnl_prim_kind2str(k), impl);
        } else {
            fprintf(f, "%4u %-48s kernel", i, label);
        }
        for (uint32_t k = 0; k < s->n; k++) {
            char md[160];
            md_text(&s->o[k].md, md, sizeof md);
            fprintf(f, " [%d]b%u=%s", s->o[k].arg, s->o[k].buf, md);
        }
        fputc('\n', f);
    }
}
