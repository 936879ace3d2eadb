/* XPB_ONEDNN_DUMP: every step of a compiled program as text (op, primitive kind and oneDNN's
 * implementation or "kernel", operands with their buffers and layouts), printed by compile. */
#include <stdio.h>

#include "odn.h"

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
    fprintf(f, "cpu_onednn: %u steps, arena %.1f MiB (%s pages), scratchpad %.1f MiB, %u buffers\n",
            exe->n_steps, (double)exe->arena_bytes / 1048576.0, exe->arena_huge ? "huge" : "4 KiB",
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
