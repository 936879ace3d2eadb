/* Memory descriptors: dense row-major and tagged descriptors of a tensor's shape, the tests and
 * transformations on them that the storage decisions and kernels need (is it row-major, the
 * same layout with another type or shape, axes 0 and 1 swapped), and where channels live in a
 * 4-D layout for the own kernels that walk one in place. Pure functions of oneDNN descriptors:
 * nothing here knows about executables. */
#include <string.h>

#include "odn.h"

int odn_channel_runs_of(const dnnl_memory_desc_t *md, odn_channel_runs *l)
{
    if (md->format_kind != dnnl_blocked || md->ndims != 4)
        return 0;
    const dnnl_blocking_desc_t *b = &md->format_desc.blocking;
    l->sn = b->strides[0];
    l->sh = b->strides[2];
    l->sw = b->strides[3];
    l->sg = b->strides[1];
    if (b->inner_nblks == 0) {
        int nhwc = b->strides[1] == 1 && md->dims[1] > 1; /* channels innermost */
        l->groups = nhwc ? 1 : md->padded_dims[1];
        l->vec = nhwc ? md->padded_dims[1] : 1;
        return 1;
    }
    if (b->inner_nblks == 1 && b->inner_idxs[0] == 1) {
        l->vec = b->inner_blks[0];
        l->groups = md->padded_dims[1] / l->vec;
        return 1;
    }
    return 0;
}

void odn_md_tag(dnnl_memory_desc_t *md, int ndims, const int64_t *dims, dnnl_data_type_t dt,
                dnnl_format_tag_t tag)
{
    dnnl_dims_t d = {0};
    for (int i = 0; i < ndims; i++)
        d[i] = dims[i];
    dnnl_memory_desc_init_by_tag(md, ndims, d, dt, tag);
}

static dnnl_format_tag_t plain_tag(int ndims)
{
    static const dnnl_format_tag_t tags[] = {dnnl_a,   dnnl_a,    dnnl_ab,
                                             dnnl_abc, dnnl_abcd, dnnl_abcde};
    return ndims >= 1 && ndims <= 5 ? tags[ndims] : dnnl_a;
}

void odn_md_plain(dnnl_memory_desc_t *md, const xpb_tensor_desc *t, dnnl_data_type_t dt)
{
    odn_md_tag(md, (int)t->ndim, t->dims, dt, plain_tag((int)t->ndim));
}

/* Element offset of logical index idx in a blocked descriptor. */
static int64_t blocked_offset(const dnnl_memory_desc_t *md, const int64_t *idx)
{
    const dnnl_blocking_desc_t *b = &md->format_desc.blocking;
    int64_t block[DNNL_MAX_NDIMS], off = md->offset0;
    for (int d = 0; d < md->ndims; d++)
        block[d] = 1;
    for (int j = 0; j < b->inner_nblks; j++)
        block[b->inner_idxs[j]] *= b->inner_blks[j];
    for (int d = 0; d < md->ndims; d++)
        off += idx[d] / block[d] * b->strides[d];
    /* inside the innermost block: a mixed-radix number over the blocks, the last fastest */
    int64_t rem[DNNL_MAX_NDIMS] = {0}, inner = 0;
    for (int d = 0; d < md->ndims; d++)
        rem[d] = idx[d] % block[d];
    for (int j = 0; j < b->inner_nblks; j++) {
        int d = (int)b->inner_idxs[j];
        block[d] /= b->inner_blks[j];
        inner = inner * b->inner_blks[j] + rem[d] / block[d];
        rem[d] %= block[d];
    }
    return off + inner;
}

int odn_md_is_plain(const dnnl_memory_desc_t *md)
{
    if (md->format_kind != dnnl_blocked)
        return 0;
    dnnl_memory_desc_t p;
    odn_md_tag(&p, md->ndims, md->dims, md->data_type, plain_tag(md->ndims));
    if (dnnl_memory_desc_equal(&p, md))
        return 1;
    /* Other descriptors may still place every element where row-major would, e.g. nChw16c
     * with H = W = 1 and C a multiple of 16 (a flattened feature map): check small ones. */
    int64_t n = 1;
    for (int d = 0; d < md->ndims; d++) {
        if (md->padded_dims[d] != md->dims[d])
            return 0;
        n *= md->dims[d];
    }
    if (n > (1 << 22) || dnnl_memory_desc_get_size(md) != dnnl_memory_desc_get_size(&p))
        return 0;
    int64_t idx[DNNL_MAX_NDIMS] = {0};
    for (int64_t i = 0; i < n; i++) {
        if (blocked_offset(md, idx) != i)
            return 0;
        for (int d = md->ndims - 1; d >= 0; d--) { /* next index, row-major */
            if (++idx[d] < md->dims[d])
                break;
            idx[d] = 0;
        }
    }
    return 1;
}

void odn_md_swap01(dnnl_memory_desc_t *out, const dnnl_memory_desc_t *in)
{
    static const int perm[DNNL_MAX_NDIMS] = {1, 0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    if (in->format_kind == dnnl_format_kind_any) {
        int64_t d[DNNL_MAX_NDIMS];
        for (int i = 0; i < in->ndims; i++)
            d[i] = in->dims[perm[i]];
        odn_md_tag(out, in->ndims, d, in->data_type, dnnl_format_tag_any);
        return;
    }
    dnnl_memory_desc_permute_axes(out, in, perm);
}

void odn_md_like(dnnl_memory_desc_t *out, const dnnl_memory_desc_t *ref, int ndims,
                 const int64_t *dims, dnnl_data_type_t dt)
{
    static const dnnl_format_tag_t tags4[] = {dnnl_abcd, dnnl_aBcd16b, dnnl_aBcd8b,
                                              dnnl_acdb, dnnl_aBcd32b, dnnl_aBcd4b};
    static const dnnl_format_tag_t tags2[] = {dnnl_ab, dnnl_ba};
    const dnnl_format_tag_t *tags = ndims == 4 ? tags4 : tags2;
    size_t n = ndims == 4   ? sizeof tags4 / sizeof tags4[0]
               : ndims == 2 ? sizeof tags2 / sizeof tags2[0]
                            : 0;
    for (size_t i = 0; ref && ref->ndims == ndims && i < n; i++) {
        dnnl_memory_desc_t cand;
        int64_t rd[DNNL_MAX_NDIMS];
        for (int k = 0; k < ndims; k++)
            rd[k] = ref->dims[k];
        odn_md_tag(&cand, ndims, rd, ref->data_type, tags[i]);
        if (dnnl_memory_desc_equal(&cand, ref)) {
            odn_md_tag(out, ndims, dims, dt, tags[i]);
            return;
        }
    }
    odn_md_tag(out, ndims, dims, dt, plain_tag(ndims));
}

void odn_md_retype(dnnl_memory_desc_t *out, const dnnl_memory_desc_t *in, dnnl_data_type_t dt)
{
    *out = *in;
    out->data_type = dt; /* strides count elements: the layout stays the same */
}

void odn_md_padded(dnnl_memory_desc_t *out, uint32_t n, const int64_t *dims, int ndims,
                   dnnl_data_type_t dt)
{
    int64_t d[DNNL_MAX_NDIMS];
    int lead = ndims - (int)n;
    for (int i = 0; i < ndims; i++)
        d[i] = i < lead ? 1 : dims[i - lead];
    odn_md_tag(out, ndims, d, dt, plain_tag(ndims));
}

void odn_md_matrix(dnnl_memory_desc_t *out, uint32_t n, const int64_t *dims, int transposed,
                   int ndims, dnnl_data_type_t dt)
{
    dnnl_dims_t d, st;
    int lead = ndims - (int)n;
    int64_t stride = 1;
    for (int i = ndims - 1; i >= 0; i--) { /* row-major strides of the padded shape */
        d[i] = i < lead ? 1 : dims[i - lead];
        st[i] = stride;
        stride *= d[i];
    }
    if (transposed) { /* the same bytes, the last two dims swapped */
        dnnl_dim_t t = d[ndims - 1];
        d[ndims - 1] = d[ndims - 2];
        d[ndims - 2] = t;
        t = st[ndims - 1];
        st[ndims - 1] = st[ndims - 2];
        st[ndims - 2] = t;
    }
    dnnl_memory_desc_init_by_strides(out, ndims, d, dt, st);
}
