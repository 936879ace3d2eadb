/* Implementation choice by measurement. oneDNN lists the implementations it has for an
 * operation in a fixed priority order, which is not always the fastest one for a given shape:
 * in 2.6 the AMX backward-weights convolution, first in line for bf16, can be several times
 * slower than the AVX512-BF16 or GEMM-based ones on the small feature maps at the end of VGG
 * and ResNet when its activations come in NHWC. Under bf16-mixed, the backward convolutions
 * time each candidate once on scratch memory, plus the reorders that would bring their inputs
 * from the layouts the tensors have, and keep the fastest (fp32's first choice,
 * jit:avx512_core, is the fastest there; XPB_ONEDNN_NO_TUNE=1 turns tuning off). Inference's
 * forward convolutions on small maps and the inner product's backward data are timed in fp32
 * too (the callers say why). The reference implementations are never candidates. Everything
 * happens at compile time. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "odn.h"

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Every argument a convolution-like primitive may take. */
static const int tuned_args[] = {DNNL_ARG_SRC,       DNNL_ARG_WEIGHTS,  DNNL_ARG_BIAS,
                                 DNNL_ARG_DST,       DNNL_ARG_DIFF_SRC, DNNL_ARG_DIFF_WEIGHTS,
                                 DNNL_ARG_DIFF_BIAS, DNNL_ARG_DIFF_DST, DNNL_ARG_WORKSPACE,
                                 DNNL_ARG_SCRATCHPAD};

/* Seconds one reorder from `from` into memory `to` takes; a negative value when impossible. */
static double time_reorder(xpb_executable *exe, const dnnl_memory_desc_t *from, dnnl_memory_t to)
{
    const dnnl_memory_desc_t *to_md = NULL;
    dnnl_memory_get_memory_desc(to, &to_md);
    dnnl_primitive_desc_t pd = NULL;
    dnnl_primitive_t prim = NULL;
    dnnl_memory_t src = NULL;
    double t = -1.0;
    if (dnnl_reorder_primitive_desc_create(&pd, from, exe->be->engine, to_md, exe->be->engine,
                                           NULL) != dnnl_success ||
        dnnl_primitive_create(&prim, pd) != dnnl_success ||
        dnnl_memory_create(&src, from, exe->be->engine, DNNL_MEMORY_ALLOCATE) != dnnl_success)
        goto out;
    void *p = NULL;
    dnnl_memory_get_data_handle(src, &p);
    memset(p, 0, dnnl_memory_desc_get_size(from));
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, to}};
    for (int r = 0; r < ODN_TUNE_RUNS; r++) {
        double t0 = now_seconds();
        if (dnnl_primitive_execute(prim, exe->be->stream, 2, args) != dnnl_success ||
            dnnl_stream_wait(exe->be->stream) != dnnl_success) {
            t = -1.0; /* and release what was made */
            break;
        }
        double dt = now_seconds() - t0;
        if (t < 0.0 || dt < t)
            t = dt;
    }
out:
    if (src)
        dnnl_memory_destroy(src);
    if (prim)
        dnnl_primitive_destroy(prim);
    if (pd)
        dnnl_primitive_desc_destroy(pd);
    return t;
}

/* Seconds one execution of `pd` takes on freshly allocated, zeroed memory, plus the reorders
 * that bring arguments args[k] from want[k] (the layouts the tensors have) into the layouts
 * the candidate wants; a negative value when it cannot run. */
static double time_pd(xpb_executable *exe, const_dnnl_primitive_desc_t pd, const int *wargs,
                      const dnnl_memory_desc_t *const *want, int n_want, double give_up);

double odn_time_pd(xpb_executable *exe, const_dnnl_primitive_desc_t pd, const int *wargs,
                   const dnnl_memory_desc_t *const *want, int n_want)
{
    return time_pd(exe, pd, wargs, want, n_want, 0.0);
}

/* odn_time_pd that stops after the first run slower than `give_up` seconds (0: never): a
 * candidate that slow has lost already, and the slow ISAs can take seconds per run. */
static double time_pd(xpb_executable *exe, const_dnnl_primitive_desc_t pd, const int *wargs,
                      const dnnl_memory_desc_t *const *want, int n_want, double give_up)
{
    enum { N_ARGS = sizeof tuned_args / sizeof tuned_args[0] };
    dnnl_primitive_t prim = NULL;
    dnnl_memory_t mem[N_ARGS] = {NULL};
    dnnl_exec_arg_t args[N_ARGS];
    int n = 0;
    double t = -1.0, extra = 0.0;
    if (dnnl_primitive_create(&prim, pd) != dnnl_success)
        return -1.0;
    for (int k = 0; k < N_ARGS; k++) {
        const dnnl_memory_desc_t *md =
            dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md, tuned_args[k]);
        if (!md || md->ndims == 0 || dnnl_memory_desc_get_size(md) == 0)
            continue;
        if (dnnl_memory_create(&mem[n], md, exe->be->engine, DNNL_MEMORY_ALLOCATE) != dnnl_success)
            goto out;
        void *p = NULL;
        dnnl_memory_get_data_handle(mem[n], &p);
        memset(p, 0, dnnl_memory_desc_get_size(md)); /* page faults happen here, not below */
        args[n] = (dnnl_exec_arg_t){tuned_args[k], mem[n]};
        for (int w = 0; w < n_want; w++)
            if (want[w] && wargs[w] == tuned_args[k] && !dnnl_memory_desc_equal(md, want[w])) {
                double r = time_reorder(exe, want[w], mem[n]);
                if (r < 0.0)
                    goto out;
                extra += r;
            }
        n++;
    }
    for (int r = 0; r < ODN_TUNE_RUNS; r++) { /* the best of a few: load spikes only add */
        double t0 = now_seconds();
        if (dnnl_primitive_execute(prim, exe->be->stream, n, args) != dnnl_success ||
            dnnl_stream_wait(exe->be->stream) != dnnl_success) {
            t = -1.0;
            break;
        }
        double dt = now_seconds() - t0;
        if (t < 0.0 || dt < t)
            t = dt;
        if (give_up > 0.0 && dt > give_up)
            break;
    }
    if (t >= 0.0)
        t += extra;
out:
    for (int k = 0; k < n; k++)
        dnnl_memory_destroy(mem[k]);
    dnnl_primitive_destroy(prim);
    return t;
}

static int acceptable(const_dnnl_primitive_desc_t pd)
{
    const char *impl = "";
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    return impl && strncmp(impl, "ref", 3) != 0;
}

/* Decisions already made in this process (the same layer shape appears many times in a
 * model: CycleGAN applies each generator three times), by kind and key bytes. */
typedef struct memo_entry {
    int kind, value;
    size_t size;
    unsigned char *key; /* owned; kept for the process */
} memo_entry;

static memo_entry *memo;
static size_t memo_count, memo_cap;
static pthread_mutex_t memo_lock = PTHREAD_MUTEX_INITIALIZER;

int odn_memo_find(int kind, const void *key, size_t size, int *value)
{
    int found = 0;
    pthread_mutex_lock(&memo_lock);
    for (size_t i = 0; i < memo_count && !found; i++)
        if (memo[i].kind == kind && memo[i].size == size && memcmp(memo[i].key, key, size) == 0) {
            *value = memo[i].value;
            found = 1;
        }
    pthread_mutex_unlock(&memo_lock);
    return found;
}

void odn_memo_add(int kind, const void *key, size_t size, int value)
{
    unsigned char *copy = malloc(size ? size : 1);
    if (!copy)
        return; /* only a cache: the decision is made again next time */
    memcpy(copy, key, size);
    pthread_mutex_lock(&memo_lock);
    if (memo_count == memo_cap) {
        size_t cap = memo_cap ? 2 * memo_cap : 32;
        memo_entry *e = realloc(memo, cap * sizeof *e);
        if (e) {
            memo = e;
            memo_cap = cap;
        }
    }
    if (memo_count < memo_cap) {
        memo[memo_count++] = (memo_entry){kind, value, size, copy};
        copy = NULL;
    }
    pthread_mutex_unlock(&memo_lock);
    free(copy);
}

/* Which post-ops (kinds and eltwise algorithms, up to 8) an implementation list was made
 * with: they change which implementations accept the operation, so positions differ. */
static uint64_t post_ops_key(const_dnnl_post_ops_t po)
{
    uint64_t key = 0;
    int n = po ? dnnl_post_ops_len(po) : 0;
    for (int i = 0; i < n && i < 8; i++) {
        uint64_t part = (uint64_t)dnnl_post_ops_get_kind(po, i) & 0xf;
        float scale, alpha, beta;
        dnnl_alg_kind_t alg;
        if (dnnl_post_ops_get_kind(po, i) == dnnl_eltwise &&
            dnnl_post_ops_get_params_eltwise(po, i, &scale, &alg, &alpha, &beta) == dnnl_success)
            part |= ((uint64_t)alg & 0xfff) << 4;
        key = key << 8 ^ part ^ (key >> 56);
    }
    return key ^ (uint64_t)n << 60;
}

/* The memo key of a tuned operation: post-ops key, then the operation descriptor. */
typedef struct tune_key {
    uint64_t post_ops;
    unsigned char desc[sizeof(dnnl_convolution_desc_t) > sizeof(dnnl_deconvolution_desc_t)
                           ? sizeof(dnnl_convolution_desc_t)
                           : sizeof(dnnl_deconvolution_desc_t)];
} tune_key;

xpb_status odn_pd_tuned(dnnl_primitive_desc_t *out, xpb_executable *exe, const void *op_desc,
                        size_t desc_size, const_dnnl_post_ops_t po, unsigned flags,
                        const_dnnl_primitive_desc_t hint, const int *args,
                        const dnnl_memory_desc_t *const *want, int n_want, const char *what)
{
    xpb_status st = odn_pd_create(out, exe, op_desc, po, hint, what);
    if (st != XPB_OK || !(exe->bf16 || (flags & ODN_TUNE_FP32)) || getenv("XPB_ONEDNN_NO_TUNE"))
        return st;
    tune_key key;
    memset(&key, 0, sizeof key);
    key.post_ops = post_ops_key(po);
    int keyed = desc_size <= sizeof key.desc, cached = -1;
    if (keyed)
        memcpy(key.desc, op_desc, desc_size);
    if (keyed && !odn_memo_find(ODN_MEMO_TUNE, &key, sizeof key, &cached))
        cached = -1;
    if (cached == 0)
        return XPB_OK; /* oneDNN's first choice */
    dnnl_primitive_attr_t attr;
    if (dnnl_primitive_attr_create(&attr) != dnnl_success)
        return XPB_OK;
    dnnl_primitive_desc_iterator_t it = NULL;
    if (dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user) != dnnl_success ||
        (po && dnnl_primitive_attr_set_post_ops(attr, po) != dnnl_success) ||
        dnnl_primitive_desc_iterator_create(&it, op_desc, attr, exe->be->engine, hint) !=
            dnnl_success) {
        dnnl_primitive_attr_destroy(attr);
        return XPB_OK; /* keep oneDNN's first choice */
    }
    dnnl_primitive_desc_t best = NULL;
    double best_t = 0.0, first_t = -1.0;
    int pos = 0, best_pos = 0;
    do {
        if (cached > 0 && pos != cached) {
            pos++;
            continue;
        }
        dnnl_primitive_desc_t pd = dnnl_primitive_desc_iterator_fetch(it);
        if (!pd) {
            pos++;
            continue;
        }
        double t = cached > 0 ? 0.0
                   : acceptable(pd)
                       ? time_pd(exe, pd, args, want, n_want, best ? 2.0 * best_t : 0.0)
                       : -1.0;
        if (getenv("XPB_ONEDNN_DUMP") && cached < 0) {
            const char *impl = "?";
            dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
            fprintf(stderr, "cpu_onednn: tune op %u %s: #%d %s %.3f ms\n", exe->cur_op, what, pos,
                    impl, t * 1e3);
        }
        if (pos == 0)
            first_t = t;
        if (t >= 0.0 && (!best || t < best_t)) {
            if (best)
                dnnl_primitive_desc_destroy(best);
            best = pd;
            best_t = t;
            best_pos = pos;
        } else {
            dnnl_primitive_desc_destroy(pd);
        }
        pos++;
    } while ((cached < 0 || pos <= cached) &&
             dnnl_primitive_desc_iterator_next(it) == dnnl_success);
    dnnl_primitive_desc_iterator_destroy(it);
    dnnl_primitive_attr_destroy(attr);
    if (best && best_pos != 0 && (flags & ODN_TUNE_CLEAR_WIN) && cached < 0 && first_t >= 0.0 &&
        best_t > 0.75 * first_t) { /* not a clear win: oneDNN's first choice stays */
        dnnl_primitive_desc_destroy(best);
        best = NULL;
        if (keyed)
            odn_memo_add(ODN_MEMO_TUNE, &key, sizeof key, 0);
    }
    if (best) {
        dnnl_primitive_desc_destroy(*out);
        *out = best;
        if (cached < 0 && keyed)
            odn_memo_add(ODN_MEMO_TUNE, &key, sizeof key, best_pos);
    }
    return XPB_OK;
}
