/* The "parallel" object of a run's metrics (see parallel_record.h). */
#include "run/parallel_record.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parallel/agree.h"
#include "parallel/comm_cost.h"
#include "results/results.h"
#include "results/schema_version.h"
#include "results/view.h"
#include "results/view_config.h"
#include "run/run_record.h"
#include "run/stats.h"

/* Timed repetitions of the standalone all-reduce. */
#define COMM_COST_REPS 5

/* Where one rank ran, gathered from every rank. Fixed size. */
typedef struct rank_place {
    char host[64];
    char device[128];
    uint32_t device_index, local_rank, threads, pad_;
} rank_place;

/* The config keys a baseline run must share with the run it is the baseline of. */
static const char *const baseline_keys[] = {"model",     "variant", "mode",   "batch",
                                            "precision", "backend", "fusion", "threads",
                                            "transfer",  "params"};

/* Whether `run` of a baseline file is the one-rank run of configuration `want`. */
static int baseline_matches(const struct xpb_results_run *run,
                            const struct xpb_results_config *want)
{
    int64_t ws = run->config.world_size;
    if (!run->ok || !run->has_config || (ws != XPB_RESULTS_NO_INT && ws != 1))
        return 0;
    for (size_t k = 0; k < sizeof baseline_keys / sizeof *baseline_keys; k++)
        if (!xpb_results_config_same_key(&run->config, want, baseline_keys[k], 0))
            return 0;
    return 1;
}

void xpb_scaling_baseline_from_file(xpb_scaling_baseline *out, const char *file,
                                    const xpb_run_config *cfg)
{
    char path[1024];
    const char *slash = cfg->file ? strrchr(cfg->file, '/') : NULL;
    *out = (xpb_scaling_baseline){.throughput = NAN};
    if (slash)
        snprintf(path, sizeof path, "%.*s/%s", (int)(slash - cfg->file), cfg->file, file);
    else
        snprintf(path, sizeof path, "%s", file);
    snprintf(out->file, sizeof out->file, "%.511s", path);
    xpb_err err = {{0}};
    json_t *doc = NULL, *want = json_pack("{so}", "config", xpb_run_config_json(cfg));
    struct xpb_results_doc view = {0};
    struct xpb_results_run wanted;
    xpb_arena arena = {0};
    if (xpb_results_load(&doc, path, &err) != XPB_OK) {
        snprintf(out->reason, sizeof out->reason, "the baseline file: %.480s", err.msg);
        goto free_docs;
    }
    if (!want || xpb_results_view(&view, doc) != XPB_OK ||
        xpb_results_view_run(&wanted, &arena, want, XPB_RESULTS_SCHEMA_VERSION) != XPB_OK) {
        snprintf(out->reason, sizeof out->reason, "out of memory reading %.400s", path);
        goto free_docs;
    }
    for (size_t i = 0; i < view.n_runs; i++)
        if (baseline_matches(&view.runs[i], &wanted.config)) {
            out->throughput = view.runs[i].metrics.throughput.median;
            goto free_docs;
        }
    snprintf(out->reason, sizeof out->reason,
             "%.300s has no finished one-rank run of this configuration", path);
free_docs:
    xpb_arena_free(&arena);
    xpb_results_view_free(&view);
    json_decref(want);
    json_decref(doc);
}

/* This rank's place, gathered from every rank into `all` (size entries). */
static xpb_status gather_places(rank_place *all, xpb_parallel *par, const xpb_run_config *cfg,
                                const xpb_session *s, xpb_err *err)
{
    rank_place me = {.device_index = cfg->device,
                     .local_rank = par->comm.local_rank,
                     .threads = s->info.threads};
    snprintf(me.host, sizeof me.host, "%.63s", par->host);
    snprintf(me.device, sizeof me.device, "%.127s", s->info.name);
    return xpb_parallel_gather(par, &me, all, sizeof me, "the rank layout", err);
}

/* Rank r's entry of "ranks": where it ran, its throughput over the timed steps and its
 * median step (from every rank's step times, which every rank has). */
static json_t *rank_json(const xpb_timing *t, const xpb_run_config *cfg, const rank_place *p,
                         uint32_t r, double *column)
{
    double seconds = 0;
    for (size_t i = 0; i < t->n_steps; i++)
        seconds += column[i] = t->rank_seconds[i * t->ranks + r];
    xpb_summary sum = {0};
    if (t->n_steps)
        xpb_summarize(&sum, column, t->n_steps);
    json_t *j = json_object();
    json_object_set_new(j, "rank", json_integer(r));
    json_object_set_new(j, "host", json_string(p->host));
    json_object_set_new(j, "local_rank", json_integer(p->local_rank));
    json_object_set_new(j, "device", json_string(p->device));
    json_object_set_new(j, "device_index", json_integer(p->device_index));
    json_object_set_new(j, "threads", json_integer(p->threads));
    json_object_set_new(j, "throughput",
                        json_real(seconds > 0 ? (double)t->n_steps * cfg->batch / seconds : 0));
    json_object_set_new(j, "step_p50_s", json_real(sum.p50));
    return j;
}

/* "ranks" and the number of distinct hosts. */
static json_t *ranks_json(const xpb_timing *t, const xpb_run_config *cfg, const rank_place *all,
                          uint32_t *hosts)
{
    json_t *list = json_array();
    double *column = calloc(t->n_steps ? t->n_steps : 1, sizeof *column);
    *hosts = 0;
    for (uint32_t r = 0; column && r < t->ranks; r++) {
        int seen = 0;
        for (uint32_t k = 0; k < r; k++)
            seen |= strcmp(all[k].host, all[r].host) == 0;
        *hosts += !seen;
        json_array_append_new(list, rank_json(t, cfg, &all[r], r, column));
    }
    free(column);
    return list;
}

static json_t *num_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *communication_json(const xpb_comm_cost *c, double step_p50)
{
    json_t *j = json_object();
    json_object_set_new(j, "all_reduces", json_integer(c->buckets));
    json_object_set_new(j, "bytes_per_step", json_integer((json_int_t)c->bytes));
    json_object_set_new(j, "seconds_per_step", json_real(c->seconds));
    json_object_set_new(j, "share", step_p50 > 0 ? json_real(c->seconds / step_p50) : json_null());
    return j;
}

static json_t *baseline_json(const xpb_scaling_baseline *b)
{
    json_t *j = json_object();
    json_object_set_new(j, "throughput", num_or_null(b->throughput));
    json_object_set_new(j, "source", json_string(b->file[0] ? "file" : "measured"));
    json_object_set_new(j, "file", b->file[0] ? json_string(b->file) : json_null());
    json_object_set_new(j, "reason",
                        isfinite(b->throughput) ? json_null() : json_string(b->reason));
    return j;
}

xpb_status xpb_run_parallel_json(json_t **out, xpb_parallel *par, const xpb_timing *t,
                                 const xpb_run_config *cfg, const xpb_model_program *mp,
                                 const xpb_session *s, const json_t *run,
                                 const xpb_scaling_baseline *b, xpb_err *err)
{
    xpb_comm_cost cost;
    *out = NULL;
    rank_place *all = calloc(par->comm.size, sizeof *all);
    if (!all)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    xpb_status st = xpb_comm_cost_measure(&cost, par, &mp->program, COMM_COST_REPS, err);
    if (st == XPB_OK)
        st = gather_places(all, par, cfg, s, err);
    if (st != XPB_OK || par->comm.rank != 0)
        goto free_places;
    struct xpb_results_run view;
    xpb_arena arena = {0};
    double median = NAN, p50 = NAN;
    if (xpb_results_view_run(&view, &arena, run, XPB_RESULTS_SCHEMA_VERSION) == XPB_OK) {
        median = view.metrics.throughput.median;
        p50 = view.metrics.step_time_s.p50;
    }
    xpb_arena_free(&arena);
    double eff = b->throughput > 0 ? median / (par->comm.size * b->throughput) : NAN;
    uint32_t hosts;
    json_t *j = json_object();
    json_object_set_new(j, "world_size", json_integer(par->comm.size));
    json_object_set_new(j, "ranks", ranks_json(t, cfg, all, &hosts));
    json_object_set_new(j, "hosts", json_integer(hosts));
    json_object_set_new(j, "communication", communication_json(&cost, p50));
    json_object_set_new(j, "baseline", baseline_json(b));
    json_object_set_new(j, "scaling_efficiency", num_or_null(eff));
    *out = j;
free_places:
    free(all);
    return st;
}
