/* Steps, the unit run() executes: a oneDNN primitive or an own kernel with its operands.
 * Building the step lists (a step's operands, appending a step with the output reorders its
 * operands asked for, reorder steps), making them executable once the buffers are placed
 * (memory objects, primitives, the one scratchpad all primitives share), executing a range of
 * them (timed per op when profiling) and freeing them. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "odn.h"

void odn_step_init(odn_step *s, xpb_executable *exe, uint32_t kind)
{
    memset(s, 0, sizeof *s);
    s->op = exe->cur_op;
    s->kind = kind;
}

void odn_buf_operand_at(odn_step *s, int arg, uint32_t buf, size_t off,
                        const dnnl_memory_desc_t *md)
{
    if (s->n >= ODN_MAX_OPERANDS)
        abort(); /* a programming error of an op file: no op has that many operands */
    odn_operand *o = &s->o[s->n++];
    o->arg = arg;
    o->buf = buf;
    o->off = off;
    o->md = *md;
}

void odn_buf_operand(odn_step *s, int arg, uint32_t buf, const dnnl_memory_desc_t *md)
{
    odn_buf_operand_at(s, arg, buf, 0, md);
}

xpb_status odn_push_step(xpb_executable *exe, int list, odn_step *s)
{
    odn_step **arr = list == ODN_LIST_POST   ? &exe->post
                     : list == ODN_LIST_PREP ? &exe->prep
                                             : &exe->steps;
    uint32_t *n = list == ODN_LIST_POST   ? &exe->n_post
                  : list == ODN_LIST_PREP ? &exe->n_prep
                                          : &exe->n_steps;
    uint32_t *cap = list == ODN_LIST_POST   ? &exe->cap_post
                    : list == ODN_LIST_PREP ? &exe->cap_prep
                                            : &exe->cap_steps;
    if (*n == *cap) {
        uint32_t c = *cap ? 2 * *cap : 64;
        odn_step *a = realloc(*arr, c * sizeof *a);
        if (!a) {
            if (s->pd)
                dnnl_primitive_desc_destroy(s->pd);
            s->pd = NULL;
            return odn_fail(exe, XPB_OUT_OF_MEMORY, "compile: out of memory (steps)");
        }
        *arr = a;
        *cap = c;
    }
    (*arr)[(*n)++] = *s;
    return XPB_OK;
}

xpb_status odn_emit_reorder(xpb_executable *exe, int list, uint32_t src_buf,
                            const dnnl_memory_desc_t *src_md, uint32_t dst_buf,
                            const dnnl_memory_desc_t *dst_md)
{
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_PRIM);
    xpb_status st = odn_reorder_pd_create(&s.pd, exe, src_md, dst_md);
    if (st != XPB_OK)
        return st;
    odn_buf_operand(&s, DNNL_ARG_FROM, src_buf, src_md);
    odn_buf_operand(&s, DNNL_ARG_TO, dst_buf, dst_md);
    return odn_push_step(exe, list, &s);
}

xpb_status odn_commit(xpb_executable *exe, odn_step *s)
{
    xpb_status st = odn_push_step(exe, ODN_LIST_STEPS, s);
    for (uint32_t i = 0; i < exe->n_post; i++) {
        if (st == XPB_OK)
            st = odn_push_step(exe, ODN_LIST_STEPS, &exe->post[i]);
        else if (exe->post[i].pd)
            dnnl_primitive_desc_destroy(exe->post[i].pd);
    }
    exe->n_post = 0;
    return st;
}

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
            s->o[k].ptr = exe->bufs[s->o[k].buf].ptr + s->o[k].off;
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

void odn_step_free(odn_step *s)
{
    for (uint32_t k = 0; k < s->n; k++)
        if (s->o[k].mem)
            dnnl_memory_destroy(s->o[k].mem);
    if (s->scratch_mem)
        dnnl_memory_destroy(s->scratch_mem);
    if (s->prim)
        dnnl_primitive_destroy(s->prim);
    if (s->pd)
        dnnl_primitive_desc_destroy(s->pd);
    memset(s, 0, sizeof *s);
}
