/* Convolution steps on cuDNN's graph API: the choice of an execution plan for the step's
 * operation graph (glue/conv_graph.c), its variant pack and its execution.
 *
 * The engine heuristics (mode A, then the fallback list) propose configurations; those whose
 * numerical notes the precision policy refuses are dropped before anything is finalized
 * (plan/engines.c: no down-converted inputs, no reduced-precision reductions, no tensor cores
 * under fp32). The others are finalized into execution plans one at a time, with the handle
 * (CUDNN_ATTR_EXECUTION_PLAN_HANDLE, which every cuDNN 9 release accepts; deprecated in favour
 * of device-property descriptors in later 9.x), and each plan is *run* once on the step's real
 * operands before it may be chosen, so that a plan that finalizes but fails to execute is never
 * the step's plan. With timing on, every plan that ran is timed (best of three) and the fastest
 * is kept and remembered for the process (plan/tune_cache.h): the next compile of the shape
 * finalizes only that configuration. With timing off (XPB_CUDA_NO_TUNE) the first plan that
 * runs is kept. When no engine runs the fused graph, the convolution alone is planned and the
 * epilogue runs as one own kernel right after it (k_elem.cu), which is the same maths; a fused
 * plan that fails later, at the warm-up or in a stream capture, is replaced the same way
 * (cux_conv_prepare with allow_fused 0, called by glue/bind.c).
 *
 * Statuses: a descriptor cuDNN refuses while the graph is built is our error (XPB_INTERNAL),
 * never a reason to fall back; no engine for the graph is XPB_UNSUPPORTED; a candidate whose
 * failure lost the device's context (a sticky CUDA error) ends compile with XPB_DEVICE_ERROR.
 * Every descriptor is created at compile and kept until destroy: run() only calls
 * cudnnBackendExecute with a plan and a variant pack bound at compile. */
#include <stdio.h>
#include <string.h>

#include "glue/conv.h"
#include "glue/conv_graph.h"
#include "glue/status.h"
#include "glue/tuning.h"
#include "plan/engines.h"
#include "plan/plan_error.h"
#include "plan/tune_cache.h"

/* plan/engines.h restates these so that it needs no cuDNN header. */
_Static_assert(CUX_NOTE_TENSOR_CORE == (int)CUDNN_NUMERICAL_NOTE_TENSOR_CORE, "tensor core");
_Static_assert(CUX_NOTE_DOWN_CONVERT_INPUTS == (int)CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS,
               "down convert inputs");
_Static_assert(CUX_NOTE_REDUCED_PRECISION_REDUCTION ==
                   (int)CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION,
               "reduced precision reduction");

#define CUX_MAX_CANDIDATES 8
#define CUX_TUNE_RUNS 3
#define CUX_TUNE_WS_MAX ((size_t)1 << 30) /* candidates needing more workspace are skipped */

/* One engine configuration the heuristics proposed and the policy allows. */
struct candidate {
    cudnnBackendDescriptor_t cfg;  /* owned until chosen (then by the step) */
    cudnnBackendDescriptor_t plan; /* its finalized execution plan, or NULL */
    int64_t engine;                /* the engine's global index */
    int64_t ws;                    /* workspace bytes of the plan */
};

/* What the tuning cache remembers of a choice (padding zeroed). */
struct choice {
    int32_t index; /* position among the allowed candidates */
    int32_t reserved;
    int64_t engine; /* its engine's global index, checked on reuse */
};

/* How the candidates of one graph fared, for the message when none is usable. */
struct tally {
    int proposed, refused, finalized, ran;
    xpb_status worst; /* XPB_UNSUPPORTED, or XPB_INTERNAL once our parameters were refused */
    char last[CUX_ERR_SIZE];
    const char *refusal; /* why the policy refused the last refused engine (static) */
};

/* The engine of `cfg`: its global index and, NULL when the policy allows it, why not. Engines
 * whose notes cannot be read are refused. */
static const char *engine_refusal(const xpb_executable *exe, cudnnBackendDescriptor_t cfg,
                                  int64_t *global)
{
    cudnnBackendDescriptor_t engine;
    if (cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine) !=
        CUDNN_STATUS_SUCCESS)
        return "its engine descriptor could not be made";
    const char *why = "its numerical notes could not be read";
    int64_t n = 0;
    cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
    int codes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
    if (cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                 &n, &engine) != CUDNN_STATUS_SUCCESS ||
        cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n,
                                 global) != CUDNN_STATUS_SUCCESS ||
        cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                                 CUDNN_TYPE_NUMERICAL_NOTE, CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &n,
                                 notes) != CUDNN_STATUS_SUCCESS)
        goto destroy_engine;
    for (int64_t i = 0; i < n && i < CUDNN_NUMERICAL_NOTE_TYPE_COUNT; i++)
        codes[i] = (int)notes[i];
    why = cux_engine_refusal(
        exe->plan->opt.precision, codes,
        (int)(n < CUDNN_NUMERICAL_NOTE_TYPE_COUNT ? n : CUDNN_NUMERICAL_NOTE_TYPE_COUNT));
destroy_engine:
    cudnnBackendDestroyDescriptor(engine);
    return why;
}

/* The configurations the heuristics propose for `graph` (mode A, then the fallback list when A
 * has none the policy allows), the allowed ones into cand[0..*n). */
static xpb_status propose(struct cux_conv_builder *b, cudnnBackendDescriptor_t graph,
                          struct candidate *cand, int *n, struct tally *t)
{
    static const cudnnBackendHeurMode_t modes[2] = {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK};
    *n = 0;
    for (int m = 0; m < 2 && *n == 0; m++) {
        cudnnBackendDescriptor_t heur, got[CUX_MAX_CANDIDATES];
        int64_t count = 0;
        CUX_CUDNN(b->exe, b->op,
                  cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur),
                  "engine heuristics");
        cudnnStatus_t s = cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph);
        if (s == CUDNN_STATUS_SUCCESS)
            s = cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1,
                                         &modes[m]);
        if (s == CUDNN_STATUS_SUCCESS)
            s = cudnnBackendFinalize(heur);
        int made = 0;
        while (s == CUDNN_STATUS_SUCCESS && made < CUX_MAX_CANDIDATES &&
               cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &got[made]) ==
                   CUDNN_STATUS_SUCCESS)
            made++;
        if (s == CUDNN_STATUS_SUCCESS && made > 0)
            s = cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                         CUDNN_TYPE_BACKEND_DESCRIPTOR, made, &count, got);
        if (s != CUDNN_STATUS_SUCCESS)
            count = 0; /* this mode has nothing for the graph; try the next */
        for (int64_t i = 0; i < made; i++) {
            int64_t engine = -1;
            const char *why = i < count ? engine_refusal(b->exe, got[i], &engine) : "";
            t->proposed += i < count;
            if (why) {
                t->refused += i < count;
                if (i < count)
                    t->refusal = why;
                cudnnBackendDestroyDescriptor(got[i]);
                continue;
            }
            cand[*n].cfg = got[i];
            cand[*n].plan = NULL;
            cand[*n].engine = engine;
            cand[(*n)++].ws = 0;
        }
        cudnnBackendDestroyDescriptor(heur);
    }
    return XPB_OK;
}

/* Finalizes candidate `c`'s execution plan (engine configuration and handle): XPB_OK, or why not
 * (XPB_UNSUPPORTED: cuDNN cannot run it, or it needs more workspace than CUX_TUNE_WS_MAX;
 * XPB_INTERNAL: cuDNN called our parameters invalid), the message in exe->err. */
static xpb_status finalize(struct cux_conv_builder *b, struct candidate *c)
{
    xpb_executable *exe = b->exe;
    CUX_CUDNN(exe, b->op,
              cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &c->plan),
              "execution plan");
    cudnnStatus_t s = cudnnBackendSetAttribute(c->plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c->cfg);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnBackendSetAttribute(c->plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE,
                                     1, &exe->be->cudnn);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnBackendFinalize(c->plan);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnBackendGetAttribute(c->plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                     CUDNN_TYPE_INT64, 1, NULL, &c->ws);
    xpb_status st = XPB_OK;
    if (s != CUDNN_STATUS_SUCCESS)
        st = cux_cudnn_error(exe->err, exe->prog, b->op, s, "execution plan of an engine");
    else if ((size_t)c->ws > CUX_TUNE_WS_MAX)
        st = cux_error_msg(exe->err, XPB_UNSUPPORTED,
                           "engine %lld needs %lld bytes of workspace (more than 1 GiB)",
                           (long long)c->engine, (long long)c->ws);
    if (st != XPB_OK) {
        cudnnBackendDestroyDescriptor(c->plan);
        c->plan = NULL;
    }
    return st;
}

/* A variant pack of c's operands with workspace `ws` (owned by the caller). */
static xpb_status make_pack(xpb_executable *exe, uint32_t op, const cux_conv_run *c, void *ws,
                            cudnnBackendDescriptor_t *out)
{
    CUX_CUDNN(exe, op, cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, out),
              "variant pack");
    void *ptrs[5];
    memcpy(ptrs, c->ptrs, sizeof ptrs);
    cudnnStatus_t s = cudnnBackendSetAttribute(*out, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
                                               CUDNN_TYPE_INT64, c->n_uids, c->uids);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnBackendSetAttribute(*out, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                     CUDNN_TYPE_VOID_PTR, c->n_uids, ptrs);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnBackendSetAttribute(*out, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR,
                                     1, &ws);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnBackendFinalize(*out);
    if (s != CUDNN_STATUS_SUCCESS) {
        cudnnBackendDestroyDescriptor(*out);
        *out = NULL;
        return cux_cudnn_error(exe->err, exe->prog, op, s, "variant pack");
    }
    return XPB_OK;
}

/* One execution of a candidate (tuning.h's cux_candidate_run). */
struct execution {
    uint32_t op;
    cudnnBackendDescriptor_t plan, pack;
};

static xpb_status execute(xpb_executable *exe, void *ctx)
{
    const struct execution *x = ctx;
    CUX_CUDNN(exe, x->op, cudnnBackendExecute(exe->be->cudnn, x->plan, x->pack),
              "cudnnBackendExecute (trial run)");
    return XPB_OK;
}

/* Candidate `c` run once (and timed when `timed`) with a variant pack on the tuning scratch;
 * *seconds as cux_try_candidate gives it. */
static xpb_status try_plan(struct cux_conv_builder *b, const struct candidate *c, int timed,
                           double *seconds)
{
    xpb_executable *exe = b->exe;
    struct execution x = {b->op, c->plan, NULL};
    xpb_status st = cux_tune_scratch(exe, (size_t)c->ws);
    if (st == XPB_OK)
        st = make_pack(exe, b->op, b->c, exe->tune_ws, &x.pack);
    if (st != XPB_OK)
        return st;
    st = cux_try_candidate(exe, b->op, execute, &x, timed ? CUX_TUNE_RUNS : 0, seconds);
    cudnnBackendDestroyDescriptor(x.pack);
    return st;
}

/* The cached choice of `key` among cand[0..n): its position, or -1 (none, or the heuristics now
 * answer differently). */
static int cached(const xpb_executable *exe, const struct cux_conv_key *key,
                  const struct candidate *cand, int n)
{
    struct choice ch;
    if (!cux_tune_find(CUX_TUNE_CONV, exe->be->device, key, sizeof *key, &ch, sizeof ch) ||
        ch.index < 0 || ch.index >= n || cand[ch.index].engine != ch.engine)
        return -1;
    return ch.index;
}

/* Finalizes and runs the candidates in the heuristics' order: the first that runs, or with
 * timing the fastest of all that run; -1 when none ran (why in t). XPB_DEVICE_ERROR and
 * XPB_OUT_OF_MEMORY stop the search. */
static xpb_status search(struct cux_conv_builder *b, struct candidate *cand, int n, int *pick,
                         struct tally *t)
{
    int tuning = cux_tuning_on();
    double best = -1.0;
    *pick = -1;
    for (int i = 0; i < n && !(*pick >= 0 && !tuning); i++) {
        double sec = 0.0;
        xpb_status st = finalize(b, &cand[i]);
        if (st == XPB_OK) {
            t->finalized++;
            st = try_plan(b, &cand[i], tuning, &sec);
        }
        if (st == XPB_DEVICE_ERROR || st == XPB_OUT_OF_MEMORY)
            return st;
        if (st != XPB_OK) {
            if (st == XPB_INTERNAL)
                t->worst = XPB_INTERNAL;
            snprintf(t->last, sizeof t->last, "%s", b->exe->err);
            if (cand[i].plan)
                cudnnBackendDestroyDescriptor(cand[i].plan);
            cand[i].plan = NULL;
            continue;
        }
        t->ran++;
        if (*pick < 0 || sec < best) {
            best = sec;
            *pick = i;
        }
    }
    return XPB_OK;
}

/* The message when no candidate of a graph is usable: XPB_INTERNAL when cuDNN called our
 * parameters invalid, else XPB_UNSUPPORTED (the caller may fall back to the unfused graph). */
static xpb_status none_usable(struct cux_conv_builder *b, const struct cux_conv_key *key,
                              const struct tally *t)
{
    char label[256];
    cux_op_label(b->exe->prog, b->op, label, sizeof label);
    const char *what = key->fused ? "this convolution with its epilogue" : "this convolution";
    if (t->proposed == t->refused)
        return cux_error_msg(b->exe->err, XPB_UNSUPPORTED,
                             "%s: no cuDNN engine for %s under this precision policy (%d proposed, "
                             "all refused%s%s)",
                             label, what, t->proposed, t->refusal ? ": the last one " : "",
                             t->refusal ? t->refusal : "");
    return cux_error_msg(b->exe->err, t->worst,
                         "%s: no cuDNN engine ran %s (%d allowed, %d finalized, none executed); "
                         "the last failure: %s",
                         label, what, t->proposed - t->refused, t->finalized, t->last);
}

/* Chooses the execution plan of `graph`: the cached choice (only it is finalized), else the
 * first or fastest candidate that runs. On success c->plan is set and the chosen configuration
 * kept in c->descs. */
static xpb_status choose_plan(struct cux_conv_builder *b, cudnnBackendDescriptor_t graph,
                              const struct cux_conv_key *key)
{
    xpb_executable *exe = b->exe;
    cux_conv_run *c = b->c;
    struct candidate cand[CUX_MAX_CANDIDATES];
    struct tally t;
    memset(&t, 0, sizeof t);
    t.worst = XPB_UNSUPPORTED;
    int n = 0, pick = -1;
    xpb_status st = propose(b, graph, cand, &n, &t);
    if (st != XPB_OK)
        return st;
    int hit = cached(exe, key, cand, n);
    if (hit >= 0 && finalize(b, &cand[hit]) == XPB_OK)
        pick = hit; /* it ran when it was timed, in this process, on this device */
    else if ((st = search(b, cand, n, &pick, &t)) != XPB_OK)
        goto destroy_candidates;
    if (pick < 0) {
        st = none_usable(b, key, &t);
        goto destroy_candidates;
    }
    if (hit < 0 && cux_tuning_on()) {
        struct choice ch;
        memset(&ch, 0, sizeof ch);
        ch.index = pick;
        ch.engine = cand[pick].engine;
        cux_tune_add(CUX_TUNE_CONV, exe->be->device, key, sizeof *key, &ch, sizeof ch);
    }
    if (c->n_descs == CUX_CONV_MAX_DESCS) {
        st = cux_error_msg(exe->err, XPB_INTERNAL, "conv: too many cuDNN descriptors");
        goto destroy_candidates;
    }
    c->descs[c->n_descs++] = cand[pick].cfg;
    c->plan = cand[pick].plan;
    c->workspace = cand[pick].ws;
    snprintf(c->engine, sizeof c->engine, "cuDNN engine %lld", (long long)cand[pick].engine);
    cand[pick].cfg = cand[pick].plan = NULL;
destroy_candidates:
    for (int i = 0; i < n; i++) {
        if (cand[i].plan)
            cudnnBackendDestroyDescriptor(cand[i].plan);
        if (cand[i].cfg)
            cudnnBackendDestroyDescriptor(cand[i].cfg);
    }
    return st;
}

void cux_conv_free(cux_conv_run *c)
{
    if (c->varpack)
        cux_released_dnn(cudnnBackendDestroyDescriptor(c->varpack), "variant pack");
    if (c->plan)
        cux_released_dnn(cudnnBackendDestroyDescriptor(c->plan), "execution plan");
    for (int i = c->n_descs - 1; i >= 0; i--)
        cux_released_dnn(cudnnBackendDestroyDescriptor(c->descs[i]), "cuDNN descriptor");
    memset(c, 0, sizeof *c);
}

xpb_status cux_conv_prepare(xpb_executable *exe, uint32_t g, int allow_fused)
{
    cux_run_step *rs = &exe->steps[g];
    const cux_step *s = rs->step;
    struct cux_conv_builder b = {exe, &rs->conv, s->op};
    int wants_epilogue =
        s->bias.buf != CUX_NONE || s->resid.buf != CUX_NONE || s->act != CUX_ACT_NONE;
    xpb_status st = XPB_UNSUPPORTED;
    cux_conv_free(&rs->conv);
    /* First the graph with the epilogue; when no engine runs it, the convolution alone and the
     * epilogue kernel. Anything but "unsupported" is an error, not a reason to fall back. */
    for (int fused = wants_epilogue && allow_fused; fused >= 0; fused--) {
        cudnnBackendDescriptor_t graph;
        struct cux_conv_key key;
        st = cux_conv_graph(&b, s, fused, &graph);
        if (st == XPB_OK) {
            cux_conv_key(exe, s, fused, &key);
            st = choose_plan(&b, graph, &key);
        }
        if (st == XPB_OK)
            break;
        cux_conv_free(&rs->conv);
        if (st != XPB_UNSUPPORTED)
            return st;
    }
    if (st != XPB_OK)
        return st;
    rs->epilogue = wants_epilogue && !rs->conv.fused;
    rs->epilogue_bias = rs->epilogue;
    return XPB_OK;
}

xpb_status cux_conv_bind(xpb_executable *exe, cux_run_step *rs)
{
    if (rs->conv.varpack)
        cux_released_dnn(cudnnBackendDestroyDescriptor(rs->conv.varpack), "variant pack");
    rs->conv.varpack = NULL;
    return make_pack(exe, rs->step->op, &rs->conv, exe->workspace, &rs->conv.varpack);
}

xpb_status cux_conv_enqueue(xpb_executable *exe, cux_run_step *rs)
{
    CUX_CUDNN(exe, rs->step->op,
              cudnnBackendExecute(exe->be->cudnn, rs->conv.plan, rs->conv.varpack),
              "cudnnBackendExecute");
    return XPB_OK;
}
