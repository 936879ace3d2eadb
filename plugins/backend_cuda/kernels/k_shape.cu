// Op set 3's data movement and element-wise kernels (kernels.h "Op set 3" lists the operands):
// PERMUTE and EXPAND (gathers through strides), BCAST_ADD and BCAST_MUL (numpy broadcasting),
// SUM_TO (the reduction that undoes a broadcast), SCALE, GELU and its backward, EMBED and its
// backward. Every operand is row-major (CUX_PLAIN); the element type is read at run time.
//
// The broadcasting kernels walk their output in row-major order and find each operand's element
// through per-dim strides (0 along a dim the operand broadcasts), set up on the host as a walk:
// dims of size 1 dropped and neighbouring dims that are contiguous in every operand merged, so
// that an operand of the output's own shape costs no division and a bias row one.
//
// No kernel here uses atomics to accumulate, so every result is the same from run to run:
// SUM_TO gathers each output element's preimages in a fixed order into a double, and
// EMBED_BWD gives every (row, column) of the weight's gradient to one thread, which walks the
// positions in order.
#include "kernels/k_common.cuh"

namespace
{

// ---- walks: an output's elements with their offsets in up to two operands ----

// Up to four dims, outermost first, and each dim's element stride in operand 0 and 1.
struct walk {
    int nd;
    int64_t dim[4];
    int64_t st[2][4];
};

// The offsets in operands 0 and 1 of element i (row-major) of the walk.
__device__ __forceinline__ void walk_offsets(const walk &w, int64_t i, int64_t *o0, int64_t *o1)
{
    int64_t a = 0, b = 0;
    // A fixed trip count: nvcc unrolls the loop, and constant indices keep the walk in
    // registers (a loop to nd would copy it to local memory).
    for (int k = 3; k > 0; k--) {
        if (k < w.nd) {
            int64_t q = i % w.dim[k];
            i /= w.dim[k];
            a += q * w.st[0][k];
            b += q * w.st[1][k];
        }
    }
    if (w.nd > 0) { // the outermost dim needs no modulo
        a += i * w.st[0][0];
        b += i * w.st[1][0];
    }
    *o0 = a;
    *o1 = b;
}

// The offset in operand 0 alone.
__device__ __forceinline__ int64_t walk_offset(const walk &w, int64_t i)
{
    int64_t a = 0;
    for (int k = 3; k > 0; k--) {
        if (k < w.nd) {
            a += (i % w.dim[k]) * w.st[0][k];
            i /= w.dim[k];
        }
    }
    return w.nd > 0 ? a + i * w.st[0][0] : a;
}

// y[i] = x[j]: the bits when both have one type (int32 ids survive, 16-bit values skip the
// round trip through fp32), else converted through fp32.
__device__ __forceinline__ void copy_elem(const cux_tview &x, int64_t j, const cux_tview &y,
                                          int64_t i)
{
    if (x.type != y.type)
        cux_st(y, i, cux_ld(x, j));
    else if (x.type == CUX_F16 || x.type == CUX_BF16)
        static_cast<uint16_t *>(y.p)[i] = static_cast<const uint16_t *>(x.p)[j];
    else
        static_cast<uint32_t *>(y.p)[i] = static_cast<const uint32_t *>(x.p)[j];
}

// An index of EMBED(_BWD) as stored (int32; another type is read as its fp32 value, and a value
// that is no integer in range of int32 as -1, which is outside every weight).
__device__ __forceinline__ int64_t load_index(const cux_tview &v, int64_t p)
{
    if (v.type == CUX_I32)
        return static_cast<const int32_t *>(v.p)[p];
    float f = cux_ld(v, p);
    return f >= -2147483648.0f && f < 2147483648.0f ? static_cast<int64_t>(f) : -1;
}

// ---- kernels ----

// PERMUTE, EXPAND: y[i] = x[offset of i in x].
__global__ void k_gather(cux_tview x, cux_tview y, walk w)
{
    CUX_FOR(i, cux_numel(y))
    copy_elem(x, walk_offset(w, i), y, i);
}

// BCAST_ADD, BCAST_MUL: y = a + b or a * b in fp32 (as PyTorch's element-wise kernels).
__global__ void k_bcast(cux_tview a, cux_tview b, cux_tview y, walk w, int mul)
{
    CUX_FOR(i, cux_numel(y))
    {
        int64_t ja, jb;
        walk_offsets(w, i, &ja, &jb);
        float u = cux_ld(a, ja), v = cux_ld(b, jb);
        cux_st(y, i, mul ? u * v : u + v);
    }
}

// SUM_TO's split of x's dims: the ones y keeps (output element j, row-major over them, is y's
// element j) and the ones summed away (reduced element r), each a walk with x's strides; and
// the block's shape: `lanes` output elements (a power of two), each summed by
// CUX_THREADS / lanes slices. r_fast puts a block's slices of one output element on
// neighbouring threads (reads are contiguous along r when x's innermost dim is summed away),
// else its lanes (contiguous along j).
struct sum_map {
    walk kept, red;
    int64_t ny, nr;
    int lanes, r_fast;
};

// Output element j = the sum of x over its preimages r = 0 .. nr-1, in double: slice s adds
// r = s, s + S, s + 2S, ... in that order, then slice 0 adds the S slices' sums in order. The
// order depends on the shapes alone, so the result is the same on every run (with S = 1 it is
// cpu_ref's order, x row-major, and the same bits).
__global__ void k_sum_to(cux_tview x, cux_tview y, sum_map m)
{
    __shared__ double part[CUX_THREADS];
    const int lanes = m.lanes, slices = CUX_THREADS / lanes;
    const int t = threadIdx.x;
    const int lane = m.r_fast ? t / slices : t % lanes;
    const int slice = m.r_fast ? t % slices : t / lanes;
    const int64_t groups = (m.ny + lanes - 1) / lanes;
    for (int64_t g = blockIdx.x; g < groups; g += gridDim.x) { // uniform across the block
        int64_t j = g * lanes + lane;
        double acc = 0.0;
        if (j < m.ny) {
            int64_t base = walk_offset(m.kept, j);
            for (int64_t r = slice; r < m.nr; r += slices)
                acc += cux_ld(x, base + walk_offset(m.red, r));
        }
        part[slice * lanes + lane] = acc;
        __syncthreads();
        if (slice == 0 && j < m.ny) {
            double s = 0.0;
            for (int k = 0; k < slices; k++)
                s += part[k * lanes + lane];
            cux_st(y, j, static_cast<float>(s));
        }
        __syncthreads(); // part is rewritten by the next group
    }
}

// SCALE: y = value * x in fp32 (as PyTorch multiplies by a Python number).
__global__ void k_scale(cux_tview x, cux_tview y, float value)
{
    CUX_FOR(i, cux_numel(y))
    cux_st(y, i, value * cux_ld(x, cux_same(y, x, i)));
}

__global__ void k_gelu(cux_tview x, cux_tview y, int tanh_approx)
{
    CUX_FOR(i, cux_numel(y))
    cux_st(y, i, cux_gelu(cux_ld(x, cux_same(y, x, i)), tanh_approx));
}

__global__ void k_gelu_bwd(cux_tview dy, cux_tview x, cux_tview dx, int tanh_approx)
{
    CUX_FOR(i, cux_numel(dx))
    {
        float g = cux_ld(dy, cux_same(dx, dy, i));
        cux_st(dx, i, cux_gelu_bwd(g, cux_ld(x, cux_same(dx, x, i)), tanh_approx));
    }
}

// EMBED: y[p, d] = weight[indices[p], d]; a position whose index lies outside [0, V) is
// recorded (once, by its column 0) and gets a row of zeros.
__global__ void k_embed(cux_tview idx, cux_tview weight, cux_tview y, int64_t V, int64_t D,
                        cux_phase_rec *rec, int32_t op)
{
    CUX_FOR(i, cux_numel(y))
    {
        int64_t p = i / D, d = i % D;
        int64_t v = load_index(idx, p);
        if (v < 0 || v >= V) {
            if (d == 0 && rec)
                cux_error(rec, CUX_ERR_INDEX, op, p, v);
            cux_st(y, i, 0.0f);
            continue;
        }
        copy_elem(weight, v * D + d, y, i);
    }
}

// EMBED_BWD, first pass: dweight = 0 (the padding row and unused rows stay so), and every
// index outside [0, V) recorded.
__global__ void k_embed_bwd_init(cux_tview idx, cux_tview dw, int64_t V, cux_phase_rec *rec,
                                 int32_t op)
{
    CUX_FOR(i, cux_numel(dw))
    cux_st(dw, i, 0.0f);
    CUX_FOR(p, cux_numel(idx))
    {
        int64_t v = load_index(idx, p);
        if ((v < 0 || v >= V) && rec)
            cux_error(rec, CUX_ERR_INDEX, op, p, v);
    }
}

// EMBED_BWD, second pass: block `part` owns the rows [part * rows, (part + 1) * rows) of
// dweight, all columns, so no two blocks write one element, and within the block thread t owns
// the columns t, t + CUX_THREADS, ... The block walks the positions in chunks of CUX_THREADS:
// each thread tests one position, the positions whose index is one of the block's rows are
// listed in order (a ballot and a prefix count), and every thread walks the list for its
// columns. A run of neighbouring positions with one index (within one chunk) is summed in
// double and added to the row once. Chunks and runs are fixed by the indices alone, so the
// result depends neither on the split into parts nor on the device; where a row's positions are
// one run (unique indices, or repeats side by side) it is cpu_ref's double sum rounded once.
// Positions of the padding row (pad >= 0) and out-of-range ones add nothing.
__global__ void k_embed_bwd_acc(cux_tview dy, cux_tview idx, cux_tview dw, int64_t V, int64_t D,
                                int64_t rows, int64_t pad)
{
    __shared__ int64_t list_v[CUX_THREADS]; // the listed positions' indices
    __shared__ int list_p[CUX_THREADS];     // and their places in the chunk
    __shared__ int warp_n[CUX_THREADS / 32];
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
    const int64_t P = cux_numel(idx), parts = (V + rows - 1) / rows;
    for (int64_t part = blockIdx.x; part < parts; part += gridDim.x) { // uniform across the block
        const int64_t v0 = part * rows, v1 = v0 + rows < V ? v0 + rows : V;
        for (int64_t c0 = 0; c0 < P; c0 += CUX_THREADS) {
            int64_t v = c0 + t < P ? load_index(idx, c0 + t) : -1;
            bool mine = v >= v0 && v < v1 && v != pad;
            unsigned ballot = __ballot_sync(0xffffffffu, mine);
            if (lane == 0)
                warp_n[warp] = __popc(ballot);
            __syncthreads();
            int before = 0, count = 0;
            for (int k = 0; k < CUX_THREADS / 32; k++) {
                before += k < warp ? warp_n[k] : 0;
                count += warp_n[k];
            }
            if (mine) {
                int slot = before + __popc(ballot & ((1u << lane) - 1u));
                list_v[slot] = v;
                list_p[slot] = t;
            }
            __syncthreads();
            for (int64_t d = t; d < D && count > 0; d += CUX_THREADS) {
                int64_t cur = list_v[0];
                int last = list_p[0];
                double acc = cux_ld(dy, (c0 + last) * D + d);
                for (int k = 1; k <= count; k++) { // k == count: flush the last run
                    if (k == count || list_v[k] != cur || list_p[k] != last + 1) {
                        int64_t o = cur * D + d;
                        cux_st(dw, o, static_cast<float>(static_cast<double>(cux_ld(dw, o)) + acc));
                        if (k == count)
                            break;
                        cur = list_v[k];
                        acc = 0.0;
                    }
                    last = list_p[k];
                    acc += cux_ld(dy, (c0 + last) * D + d);
                }
            }
            __syncthreads(); // the list is rewritten by the next chunk
        }
    }
}

// ---- host side: walks from the views ----

// The logical dim k (< v.ndim) of a view.
int64_t dim_of(const cux_tview &v, int k)
{
    return k == 0 ? v.n : k == 1 ? v.c : k == 2 ? v.h : v.w;
}

// The row-major element strides of a view's ndim dims.
void strides_of(const cux_tview &v, int64_t st[4])
{
    int64_t s = 1;
    for (int k = v.ndim - 1; k >= 0; k--) {
        st[k] = s;
        s *= dim_of(v, k);
    }
}

// The walk over `nd` dims `dim` (outermost first) with strides st[0], st[1] in `nops` operands:
// dims of size 1 dropped, an inner dim merged into the one before it where that one's stride is
// the inner's times its size in every operand (a broadcast dim, stride 0, merges with another).
walk simplify(int nd, const int64_t *dim, const int64_t (*st)[4], int nops)
{
    walk w = {};
    for (int k = 0; k < nd; k++) {
        if (dim[k] == 1)
            continue;
        bool merge = w.nd > 0;
        for (int o = 0; o < nops && merge; o++)
            merge = w.st[o][w.nd - 1] == st[o][k] * dim[k];
        if (merge) {
            w.dim[w.nd - 1] *= dim[k];
            for (int o = 0; o < nops; o++)
                w.st[o][w.nd - 1] = st[o][k];
        } else {
            w.dim[w.nd] = dim[k];
            for (int o = 0; o < nops; o++)
                w.st[o][w.nd] = st[o][k];
            w.nd++;
        }
    }
    return w;
}

// The strides in `in` of the dims of `out` under broadcasting (dims aligned from the last; a
// dim `in` lacks, or of size 1 where out's is not, has stride 0). False when `in` does not
// broadcast to `out`.
bool bcast_strides(const cux_tview &in, const cux_tview &out, int64_t st[4])
{
    if (in.ndim < 1 || in.ndim > out.ndim || out.ndim > 4)
        return false;
    int64_t own[4];
    strides_of(in, own);
    for (int k = 0; k < out.ndim; k++) {
        int ki = k - (out.ndim - in.ndim); // in's dim aligned with out's dim k
        int64_t d = ki >= 0 ? dim_of(in, ki) : 1;
        if (d != 1 && d != dim_of(out, k))
            return false;
        st[k] = d == 1 ? 0 : own[ki];
    }
    return true;
}

bool plain(const cux_tview &v)
{
    return v.p && v.layout == CUX_PLAIN && v.ndim >= 1 && v.ndim <= 4;
}

// SUM_TO's map of x onto y (y broadcasts to x), and the block shape: false when y does not
// broadcast to x. The shape depends on the shapes alone (not on the device), so the order of
// the additions, and the result, are the same on every device.
bool sum_to_map(const cux_tview &x, const cux_tview &y, sum_map *m)
{
    int64_t yst[4];
    if (!bcast_strides(y, x, yst))
        return false;
    int64_t xst[4], kd[4], ks[2][4] = {}, rd[4], rs[2][4] = {};
    strides_of(x, xst);
    int nk = 0, nr = 0;
    for (int k = 0; k < x.ndim; k++) {
        int64_t d = dim_of(x, k);
        if (d == 1)
            continue;
        if (yst[k] != 0) { // y keeps the dim
            kd[nk] = d;
            ks[0][nk++] = xst[k];
        } else {
            rd[nr] = d;
            rs[0][nr++] = xst[k];
        }
    }
    m->kept = simplify(nk, kd, ks, 1);
    m->red = simplify(nr, rd, rs, 1);
    m->ny = cux_numel(y);
    m->nr = cux_numel(x) / (m->ny > 0 ? m->ny : 1);
    // Innermost dim of x summed away: a block's slices read neighbouring elements of one output
    // element's preimages, as many slices as the preimages fill (up to the whole block). Kept:
    // its lanes read neighbouring output elements, and long sums are split into up to 32
    // slices (lanes stay >= 8, a full 32-byte sector of fp32) while there are few blocks.
    m->r_fast = m->red.nd > 0 && m->red.st[0][m->red.nd - 1] == 1;
    int64_t slices = 1;
    if (m->r_fast) {
        while (slices < CUX_THREADS && slices < m->nr)
            slices *= 2;
    } else {
        while (slices < CUX_THREADS / 8 && slices * 2 <= m->nr &&
               (m->ny + CUX_THREADS / slices - 1) / (CUX_THREADS / slices) < 256)
            slices *= 2;
    }
    m->lanes = static_cast<int>(CUX_THREADS / slices);
    return true;
}

cudaError_t launch_permute(const cux_kparams &kp, cudaStream_t s)
{
    const cux_tview &x = kp.t[CUX_T_IN], &y = kp.t[CUX_T_OUT];
    if (!plain(x) || !plain(y) || x.ndim != y.ndim)
        return cudaErrorInvalidValue;
    int64_t xst[4], dim[4], st[2][4] = {};
    strides_of(x, xst);
    unsigned seen = 0;
    for (int d = 0; d < y.ndim; d++) {
        int k = kp.a3.perm[d];
        if (k >= x.ndim || (seen & (1u << k)) || dim_of(x, k) != dim_of(y, d))
            return cudaErrorInvalidValue;
        seen |= 1u << k;
        dim[d] = dim_of(y, d);
        st[0][d] = xst[k];
    }
    walk w = simplify(y.ndim, dim, st, 1);
    XPB_LAUNCH(k_gather, cux_blocks(cux_numel(y), kp.sm_count), CUX_THREADS, 0, s)(x, y, w);
    return cudaGetLastError();
}

cudaError_t launch_broadcast(const cux_kparams &kp, cudaStream_t s)
{
    const cux_tview &a = kp.t[CUX_T_IN], &b = kp.t[CUX_T_IN + 1], &y = kp.t[CUX_T_OUT];
    bool binary = kp.kernel != CUX_K_EXPAND;
    int64_t dim[4], st[2][4] = {};
    if (!plain(a) || !plain(y) || !bcast_strides(a, y, st[0]))
        return cudaErrorInvalidValue;
    if (binary && (!plain(b) || !bcast_strides(b, y, st[1])))
        return cudaErrorInvalidValue;
    for (int k = 0; k < y.ndim; k++)
        dim[k] = dim_of(y, k);
    walk w = simplify(y.ndim, dim, st, binary ? 2 : 1);
    unsigned g = cux_blocks(cux_numel(y), kp.sm_count);
    if (binary)
        XPB_LAUNCH(k_bcast, g, CUX_THREADS, 0, s)(a, b, y, w, kp.kernel == CUX_K_BCAST_MUL);
    else
        XPB_LAUNCH(k_gather, g, CUX_THREADS, 0, s)(a, y, w);
    return cudaGetLastError();
}

cudaError_t launch_sum_to(const cux_kparams &kp, cudaStream_t s)
{
    const cux_tview &x = kp.t[CUX_T_IN], &y = kp.t[CUX_T_OUT];
    sum_map m;
    if (!plain(x) || !plain(y) || !sum_to_map(x, y, &m))
        return cudaErrorInvalidValue;
    int64_t groups = (m.ny + m.lanes - 1) / m.lanes;
    XPB_LAUNCH(k_sum_to, cux_blocks(groups * CUX_THREADS, kp.sm_count), CUX_THREADS, 0, s)
    (x, y, m);
    return cudaGetLastError();
}

// Element-wise: SCALE, GELU, GELU_BWD (operands of one element count).
cudaError_t launch_elementwise(const cux_kparams &kp, cudaStream_t s)
{
    const cux_tview &in0 = kp.t[CUX_T_IN], &in1 = kp.t[CUX_T_IN + 1], &y = kp.t[CUX_T_OUT];
    bool two = kp.kernel == CUX_K_GELU_BWD;
    if (!in0.p || !y.p || cux_numel(in0) != cux_numel(y) ||
        (two && (!in1.p || cux_numel(in1) != cux_numel(y))))
        return cudaErrorInvalidValue;
    unsigned g = cux_blocks(cux_numel(y), kp.sm_count);
    int tanh_approx = kp.a3.approximate == XPB_GELU_TANH;
    if (kp.kernel == CUX_K_SCALE)
        XPB_LAUNCH(k_scale, g, CUX_THREADS, 0, s)(in0, y, kp.attrs.value);
    else if (kp.kernel == CUX_K_GELU)
        XPB_LAUNCH(k_gelu, g, CUX_THREADS, 0, s)(in0, y, tanh_approx);
    else
        XPB_LAUNCH(k_gelu_bwd, g, CUX_THREADS, 0, s)(in0, in1, y, tanh_approx);
    return cudaGetLastError();
}

cudaError_t launch_embed(const cux_kparams &kp, cudaStream_t s)
{
    const cux_tview &idx = kp.t[CUX_T_IN], &w = kp.t[CUX_T_IN + 1], &y = kp.t[CUX_T_OUT];
    if (!plain(idx) || !plain(w) || !plain(y) || w.ndim != 2)
        return cudaErrorInvalidValue;
    int64_t V = w.n, D = w.c;
    if (D < 1 || cux_numel(y) != cux_numel(idx) * D)
        return cudaErrorInvalidValue;
    XPB_LAUNCH(k_embed, cux_blocks(cux_numel(y), kp.sm_count), CUX_THREADS, 0, s)
    (idx, w, y, V, D, kp.rec, kp.op);
    return cudaGetLastError();
}

cudaError_t launch_embed_bwd(const cux_kparams &kp, cudaStream_t s)
{
    const cux_tview &dy = kp.t[CUX_T_IN], &idx = kp.t[CUX_T_IN + 1], &dw = kp.t[CUX_T_OUT];
    if (!plain(dy) || !plain(idx) || !plain(dw) || dw.ndim != 2)
        return cudaErrorInvalidValue;
    int64_t V = dw.n, D = dw.c;
    if (V < 1 || D < 1 || cux_numel(dy) != cux_numel(idx) * D)
        return cudaErrorInvalidValue;
    int64_t pad = (kp.a3.index_flags & XPB_INDEX_PADDING) ? kp.a3.padding_idx : -1;
    // Rows per part: about four blocks per multiprocessor, since every block walks all the
    // positions. The split does not change the result (k_embed_bwd_acc).
    int64_t parts = static_cast<int64_t>(kp.sm_count > 0 ? kp.sm_count : 80) * 4;
    if (parts > V)
        parts = V;
    int64_t rows = (V + parts - 1) / parts;
    parts = (V + rows - 1) / rows;
    XPB_LAUNCH(k_embed_bwd_init, cux_blocks(cux_numel(dw), kp.sm_count), CUX_THREADS, 0, s)
    (idx, dw, V, kp.rec, kp.op);
    if (cudaPeekAtLastError() != cudaSuccess)
        return cudaGetLastError();
    XPB_LAUNCH(k_embed_bwd_acc, static_cast<unsigned>(parts), CUX_THREADS, 0, s)
    (dy, idx, dw, V, D, rows, pad);
    return cudaGetLastError();
}

} // namespace

cudaError_t cux_launch_shape(const cux_kparams &kp, cudaStream_t s)
{
    switch (kp.kernel) {
    case CUX_K_PERMUTE:
        return launch_permute(kp, s);
    case CUX_K_BCAST_ADD:
    case CUX_K_BCAST_MUL:
    case CUX_K_EXPAND:
        return launch_broadcast(kp, s);
    case CUX_K_SUM_TO:
        return launch_sum_to(kp, s);
    case CUX_K_SCALE:
    case CUX_K_GELU:
    case CUX_K_GELU_BWD:
        return launch_elementwise(kp, s);
    case CUX_K_EMBED:
        return launch_embed(kp, s);
    case CUX_K_EMBED_BWD:
        return launch_embed_bwd(kp, s);
    default:
        return cudaErrorInvalidValue;
    }
}
