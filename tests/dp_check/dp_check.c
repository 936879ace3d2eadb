/* dp_check MODEL BACKEND BATCH STEPS BUCKET_MB REFERENCE TOLERANCE, under mpirun -np N: trains
 * MODEL data-parallel on BACKEND, every rank at batch BATCH on its shard, for STEPS steps
 * (gradients averaged by the program's ALL_REDUCE ops in buckets of BUCKET_MB MiB), and checks
 * on every rank the loss (the mean over the ranks), the averaged gradients of the last step and
 * the updated parameters against the single-process reference, computed by each rank itself:
 *   combined  one process at batch N x BATCH on the same samples (the samples of the N shards):
 *             right for models without batch norm, for any number of steps;
 *   shards    the mean of N single-process steps at batch BATCH, one per shard (losses,
 *             gradients and updates averaged): right for batch norm, whose statistics stay per
 *             rank as in PyTorch's DistributedDataParallel; one step only (SGD's first update
 *             is linear in the gradient). Each rank's running statistics are checked against
 *             its own shard's run too.
 * Errors are norm-relative, ||x - ref|| / ||ref||, per tensor; the worst must stay below
 * TOLERANCE. The averaged gradients must also be the same on every rank, bit for bit (or the
 * replicas would drift apart). Prints one line per rank ("dp_check rank R/N ...: OK" or "... FAIL")
 * and exits 0 or 1; DP_CHECK_VERBOSE=1 prints every tensor's error too. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parallel/agree.h"
#include "plugin/loader.h"
#include "program/model_program.h"
#include "parallel/parallel.h"
#include "run/session.h"
#include "scenario/run_config.h"

/* The tensors of one training run: the last step's gradients, the parameters and the state
 * (running statistics) after it, by name. */
typedef struct snapshot {
    uint32_t n;
    const char **names; /* the program's, valid while mp lives */
    uint32_t *roles;    /* GRAD, PARAM (its change) or STATE */
    float **data;       /* malloc'ed each */
    int64_t *numel;
    double loss; /* of the last step */
    xpb_model_program *mp;
} snapshot;

typedef struct run_spec {
    const xpb_model_api *model;
    const xpb_backend_api *backend;
    xpb_run_config cfg;
    const xpb_communicator *comm;
    uint32_t shards, shard; /* the data's view of the global batch */
    uint32_t steps;
} run_spec;

static int kept(const xpb_tensor_desc *d)
{
    return d->dtype == XPB_DTYPE_F32 &&
           (d->role == XPB_ROLE_GRAD || d->role == XPB_ROLE_PARAM ||
            (d->role == XPB_ROLE_STATE && strstr(d->name, "running_")));
}

/* Reads the kept tensors of the session into s. */
static xpb_status capture(snapshot *s, xpb_session *ses, xpb_err *err)
{
    const xpb_model_program *mp = s->mp;
    for (uint32_t t = 0; t < mp->n_tensors; t++) {
        const xpb_tensor_desc *d = &mp->tensors[t];
        if (!kept(d))
            continue;
        uint32_t k = s->n++;
        s->names[k] = d->name;
        s->roles[k] = d->role;
        s->numel[k] = xpb_tensor_numel(d);
        if (!(s->data[k] = malloc(xpb_tensor_bytes(d))))
            return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
        xpb_status st = xpb_session_read(ses, t, s->data[k], err);
        if (st)
            return st;
    }
    return XPB_OK;
}

static xpb_status run(snapshot *s, const run_spec *spec, xpb_err *err)
{
    memset(s, 0, sizeof *s);
    xpb_program_options po = xpb_run_config_program(&spec->cfg);
    xpb_status st = xpb_model_program_create(&s->mp, spec->model, &po, err);
    if (st)
        return st;
    s->mp->data_shards = spec->shards;
    s->mp->data_shard = spec->shard;
    uint32_t n = s->mp->n_tensors;
    s->names = calloc(n, sizeof *s->names);
    s->roles = calloc(n, sizeof *s->roles);
    s->data = calloc(n, sizeof *s->data);
    s->numel = calloc(n, sizeof *s->numel);
    if (!s->names || !s->roles || !s->data || !s->numel)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    xpb_compile_options o = {.struct_size = sizeof o,
                             .precision = XPB_PRECISION_FP32,
                             .fusion = 1,
                             .threads = 1,
                             .keep_all = 1,
                             .comm = spec->comm};
    xpb_session ses;
    if ((st = xpb_session_open(&ses, spec->backend, 0, s->mp, &o, err)))
        return st;
    for (uint32_t i = 0; i < spec->steps && st == XPB_OK; i++)
        st = xpb_session_step(&ses, NULL, err);
    if (st == XPB_OK)
        st = xpb_session_loss(&s->loss, &ses, 0, err);
    if (st == XPB_OK)
        st = capture(s, &ses, err);
    xpb_session_close(&ses);
    return st;
}

static void snapshot_free(snapshot *s)
{
    for (uint32_t k = 0; k < s->n; k++)
        free(s->data[k]);
    free(s->names);
    free(s->roles);
    free(s->data);
    free(s->numel);
    xpb_model_program_free(s->mp);
}

/* *mean = the mean of the n runs of one program `all` (names borrowed from all[0], which must
 * outlive it; free its data with mean_free). */
static xpb_status mean_of(snapshot *mean, const snapshot *all, uint32_t n)
{
    *mean = all[0];
    mean->mp = NULL;
    mean->loss = 0;
    mean->data = calloc(all[0].n, sizeof *mean->data);
    if (!mean->data)
        return XPB_OUT_OF_MEMORY;
    for (uint32_t k = 0; k < mean->n; k++)
        if (!(mean->data[k] = calloc((size_t)mean->numel[k], sizeof(float))))
            return XPB_OUT_OF_MEMORY;
    for (uint32_t s = 0; s < n; s++) {
        mean->loss += all[s].loss / n;
        for (uint32_t k = 0; k < mean->n; k++)
            for (int64_t i = 0; i < mean->numel[k]; i++)
                mean->data[k][i] += (float)((double)all[s].data[k][i] / n);
    }
    return XPB_OK;
}

static void mean_free(snapshot *mean)
{
    for (uint32_t k = 0; mean->data && k < mean->n; k++)
        free(mean->data[k]);
    free(mean->data);
}

/* FNV-1a over the bytes of every gradient of s. */
static uint64_t grads_hash(const snapshot *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint32_t k = 0; k < s->n; k++) {
        const unsigned char *b = (const unsigned char *)s->data[k];
        for (size_t i = 0; s->roles[k] == XPB_ROLE_GRAD && i < (size_t)s->numel[k] * 4; i++)
            h = (h ^ b[i]) * 0x100000001b3ull;
    }
    return h;
}

static double rel_error(const float *a, const float *b, int64_t n)
{
    double diff = 0, norm = 0;
    for (int64_t i = 0; i < n; i++) {
        diff += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        norm += (double)b[i] * b[i];
    }
    return norm > 0 ? sqrt(diff / norm) : sqrt(diff);
}

/* The worst error over the tensors of `role` into *worst, naming its tensor in *which. */
static void worst_of(double *worst, const char **which, const snapshot *dp, const snapshot *ref,
                     uint32_t role)
{
    *worst = 0;
    *which = "-";
    for (uint32_t k = 0; k < dp->n; k++) {
        uint32_t j = 0;
        while (j < ref->n && strcmp(ref->names[j], dp->names[k]) != 0)
            j++;
        if (dp->roles[k] != role || j == ref->n)
            continue;
        double e = rel_error(dp->data[k], ref->data[j], dp->numel[k]);
        if (getenv("DP_CHECK_VERBOSE"))
            fprintf(stderr, "  %s: %.3e (first %g vs %g)\n", dp->names[k], e, dp->data[k][0],
                    ref->data[j][0]);
        if (!(e <= *worst)) {
            *worst = e;
            *which = dp->names[k];
        }
    }
}

/* The data-parallel run across the ranks: *dp with its loss the mean of the ranks', and
 * whether every rank's averaged gradients are the same bits (*same). */
static xpb_status run_ranks(snapshot *dp, int *same, xpb_parallel *par, const run_spec *spec,
                            xpb_err *err)
{
    uint32_t N = par->comm.size;
    xpb_status st = run(dp, spec, err);
    uint64_t hash = st == XPB_OK ? grads_hash(dp) : 0, *hashes = calloc(N, sizeof *hashes);
    double *losses = calloc(N, sizeof *losses);
    *same = 1;
    if (!hashes || !losses)
        st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    if (st == XPB_OK &&
        (st = xpb_parallel_gather(par, &hash, hashes, sizeof hash, "the gradients", err)) == XPB_OK)
        for (uint32_t k = 0; k < N; k++)
            *same &= hashes[k] == hash;
    if (st == XPB_OK && (st = xpb_parallel_gather(par, &dp->loss, losses, sizeof dp->loss,
                                                  "the losses", err)) == XPB_OK) {
        dp->loss = 0;
        for (uint32_t k = 0; k < N; k++)
            dp->loss += losses[k] / N;
    }
    free(hashes);
    free(losses);
    return st;
}

/* The reference of one process (world size 1: no ALL_REDUCE) into *ref: one run at the
 * combined batch, or the mean of one run per shard (runs[0 .. N), kept for their names, which
 * the caller frees). The running statistics' error of this rank's own reference into *state. */
static xpb_status run_reference(snapshot *ref, snapshot *runs, uint32_t *done, double *state,
                                const char **state_which, const snapshot *dp, run_spec spec,
                                int shards, uint32_t N, uint32_t rank, xpb_err *err)
{
    xpb_status st = XPB_OK;
    spec.comm = NULL;
    spec.cfg.world_size = 1;
    spec.cfg.rank = 0;
    if (!shards) {
        spec.cfg.batch *= N;
        spec.shards = 1;
        spec.shard = 0;
        st = run(&runs[(*done)++], &spec, err);
        *ref = runs[0];
        if (st == XPB_OK)
            worst_of(state, state_which, dp, ref, XPB_ROLE_STATE);
        return st;
    }
    for (uint32_t k = 0; k < N && st == XPB_OK; k++) {
        spec.shard = k;
        st = run(&runs[(*done)++], &spec, err);
    }
    if (st == XPB_OK && (st = mean_of(ref, runs, N)) != XPB_OK)
        xpb_err_set(err, st, "out of memory");
    if (st == XPB_OK) /* a rank's running statistics are its own shard's */
        worst_of(state, state_which, dp, &runs[rank], XPB_ROLE_STATE);
    return st;
}

int main(int argc, char **argv)
{
    if (argc != 8) {
        fprintf(stderr, "usage: dp_check MODEL BACKEND BATCH STEPS BUCKET_MB combined|shards "
                        "TOLERANCE (under mpirun)\n");
        return 2;
    }
    xpb_err err = {{0}};
    xpb_parallel *par = NULL;
    xpb_registry *registry = NULL;
    const char *dirs[1] = {XPB_TEST_PLUGIN_DIR};
    if (xpb_parallel_open(&par, &err) || !par) {
        fprintf(stderr, "dp_check: %s\n", par ? err.msg : "not launched as several ranks");
        return 1;
    }
    if (xpb_registry_load(&registry, dirs, 1, &err)) {
        fprintf(stderr, "dp_check: %s\n", err.msg);
        return 1;
    }
    uint32_t N = par->comm.size, r = par->comm.rank, batch = (uint32_t)atoi(argv[3]);
    int shards = strcmp(argv[6], "shards") == 0, same = 0;
    double tol = atof(argv[7]);
    run_spec spec = {.model = xpb_registry_model(registry, argv[1]),
                     .backend = xpb_registry_backend(registry, argv[2]),
                     .cfg = {.model = argv[1],
                             .backend = argv[2],
                             .batch = batch,
                             .mode = XPB_MODE_TRAIN,
                             .precision = XPB_PRECISION_FP32,
                             .fusion = 1,
                             .threads = 1,
                             .seed = 42,
                             .lr = NAN,
                             .momentum = NAN,
                             .weight_decay = NAN,
                             .parallel = XPB_PARALLEL_DATA,
                             .bucket_mb = atof(argv[5]),
                             .world_size = N,
                             .rank = r},
                     .comm = &par->comm,
                     .shards = N,
                     .shard = r,
                     .steps = (uint32_t)atoi(argv[4])};
    if (!spec.model || !spec.backend) {
        fprintf(stderr, "dp_check: model '%s' or backend '%s' is not loaded\n", argv[1], argv[2]);
        return 1;
    }
    snapshot dp, ref, *runs = calloc(N, sizeof *runs);
    double state_err = 0;
    const char *state_which = "-";
    uint32_t done = 0;
    xpb_status st = run_ranks(&dp, &same, par, &spec, &err);
    if (st == XPB_OK)
        st = run_reference(&ref, runs, &done, &state_err, &state_which, &dp, spec, shards, N, r,
                           &err);
    if (st) {
        fprintf(stderr, "dp_check rank %u: %s\n", r, err.msg);
        return 1;
    }
    double grad_err, param_err, loss_err = fabs(dp.loss - ref.loss) / fabs(ref.loss);
    const char *grad_which, *param_which;
    worst_of(&grad_err, &grad_which, &dp, &ref, XPB_ROLE_GRAD);
    worst_of(&param_err, &param_which, &dp, &ref, XPB_ROLE_PARAM);
    int ok = same && loss_err <= tol && grad_err <= tol && param_err <= tol && state_err <= tol;
    printf("dp_check rank %u/%u %s %s batch %u x %u, %s reference: loss %.9g (ref %.9g, rel err "
           "%.2e), gradients %.2e (%s, %s on every rank), parameters %.2e (%s), running stats %.2e "
           "(%s), tolerance %.0e: %s\n",
           r, N, argv[1], argv[2], N, batch, argv[6], dp.loss, ref.loss, loss_err, grad_err,
           grad_which, same ? "the same" : "NOT the same", param_err, param_which, state_err,
           state_which, tol, ok ? "OK" : "FAIL");
    fflush(stdout);
    if (shards)
        mean_free(&ref);
    for (uint32_t k = 0; k < done; k++)
        snapshot_free(&runs[k]);
    free(runs);
    snapshot_free(&dp);
    xpb_registry_free(registry);
    xpb_parallel_close(par);
    return ok ? 0 : 1;
}
