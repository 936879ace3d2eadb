/* One run of a scenario, from its configuration to its results object (see runner.h): build
 * the model program, optionally dump or verify the first step, open and compile on the
 * backend, warm up, time the repeats (measure.c) and record everything (run_record.c).
 * Compilation, initialisation and the first transfer happen before the clock. As one rank of
 * several (docs/distributed.md) the run first measures its one-rank baseline (rank 0 alone,
 * telling the others, who wait, that it is alive) unless the scenario names a file holding it,
 * every stage ends with an agreement of the ranks (agree.h, each with a deadline), and the
 * timed steps end with the "parallel" metrics (parallel_record.c). */
#include "run/runner.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results/schema_version.h"
#include "results/view.h"
#include "parallel/agree.h"
#include "machine/host_usage.h"
#include "run/measure.h"
#include "program/model_program.h"
#include "base/names.h"
#include "run/parallel_record.h"
#include "run/progress.h"
#include "run/rank_config.h"
#include "run/run_record.h"
#include "run/session.h"
#include "run/stream.h"
#include "run/tta.h"

/* What one run has made so far, released by run_free. */
typedef struct run_state {
    const xpb_run_config *cfg; /* &local */
    xpb_run_config local;      /* the scenario's run as this process runs it */
    const xpb_runner_opts *opts;
    int agreed;                          /* every rank agreed on the failure being returned */
    xpb_scaling_baseline baseline;       /* rank 0: the one-rank run, for the scaling efficiency */
    const xpb_plugin_descriptor *plugin; /* the backend's, NULL when not loaded */
    json_t *run, *config, *verification; /* the run object and two of its members */
    xpb_model_program *mp;
    xpb_session session;
    xpb_stream stream;
    xpb_timing timing;
    uint64_t rss_before; /* resident set before the run, after resetting its peak */
    int peak_reset;      /* 1: the kernel reset the peak, so the run's own peak is known */
    xpb_err err;
} run_state;

static void set_status(json_t *run, const char *status, const char *error)
{
    json_object_set_new(run, "status", json_string(status));
    if (error)
        json_object_set_new(run, "error", json_string(error));
}

/* The status a failed step gives the run: what the backend cannot do is "unsupported". */
static const char *status_of(xpb_status st)
{
    if (st == XPB_UNSUPPORTED || st == XPB_NO_DEVICE)
        return "unsupported";
    return st == XPB_INTERRUPTED ? "interrupted" : "failed";
}

/* The run object with the fields every run has, before anything ran. NULL: out of memory. */
static json_t *new_run(run_state *r)
{
    json_t *run = json_object(), *verification = json_object();
    json_t *config = xpb_run_config_json(r->cfg);
    if (!run || !verification || !config) {
        json_decref(run);
        json_decref(verification);
        json_decref(config);
        return NULL;
    }
    json_object_set_new(run, "id", json_string(r->cfg->id));
    json_object_set_new(run, "status", json_string("failed"));
    json_object_set_new(run, "config", config);
    json_object_set_new(verification, "requested", json_boolean(r->cfg->verify));
    json_object_set_new(verification, "verified", json_null());
    json_object_set_new(verification, "reference", json_string(XPB_REFERENCE_BACKEND));
    json_object_set_new(verification, "max_rel_error", json_null());
    json_object_set_new(verification, "message", json_string(""));
    r->config = config;
    r->verification = verification;
    return run;
}

/* Ends stage `what`: alone, `st` as it is (telling the ranks that wait for this process, if
 * any, that it is alive); as one rank of several, the ranks' agreement (the same status and
 * message on every rank). */
static xpb_status stage_end(run_state *r, xpb_status st, const char *what)
{
    if (r->opts->waiting)
        xpb_parallel_beat(r->opts->waiting, 0, r->opts->label ? r->opts->label : what);
    if (!r->opts->par || r->agreed)
        return st;
    xpb_err mine = r->err;
    st = xpb_parallel_agree(r->opts->par, st, &mine, what, 0, &r->err);
    r->agreed = st != XPB_OK;
    return st;
}

/* Rank 0 alone runs `cfg` on one rank, telling the ranks that wait that it is alive; its
 * median throughput, or why there is none. */
static void run_alone(xpb_scaling_baseline *b, const xpb_registry *registry,
                      const xpb_run_config *cfg, const xpb_runner_opts *opts)
{
    xpb_run_config one = *cfg;
    one.world_size = 1;
    one.rank = 0;
    one.parallel = XPB_PARALLEL_NONE;
    one.verify = one.profile = 0;
    char label[512];
    snprintf(label, sizeof label, "%s (one-rank baseline)", opts->label ? opts->label : "");
    xpb_runner_opts o = {.label = label, .stop = opts->stop, .waiting = opts->par};
    xpb_parallel_beat(opts->par, 1, label);
    json_t *run = xpb_run_one(registry, &one, &o);
    struct xpb_results_run view;
    xpb_arena arena = {0};
    int viewed =
        run && xpb_results_view_run(&view, &arena, run, XPB_RESULTS_SCHEMA_VERSION) == XPB_OK;
    if (viewed && view.ok)
        b->throughput = view.metrics.throughput.median;
    else
        snprintf(b->reason, sizeof b->reason, "the one-rank run ended %s: %.400s",
                 viewed && view.status ? view.status : "without a result (out of memory)",
                 viewed && view.error ? view.error : "");
    xpb_arena_free(&arena);
    json_decref(run);
}

/* The throughput the scaling efficiency divides by: from the results file the scenario
 * names, or measured now by rank 0 alone while the other ranks wait. */
static void measure_baseline(run_state *r, const xpb_registry *registry)
{
    xpb_parallel *par = r->opts->par;
    r->baseline = (xpb_scaling_baseline){.throughput = NAN};
    if (r->cfg->scaling_baseline) {
        if (par->comm.rank == 0)
            xpb_scaling_baseline_from_file(&r->baseline, r->cfg->scaling_baseline, r->cfg);
        return;
    }
    if (par->comm.rank == 0)
        run_alone(&r->baseline, registry, r->cfg, r->opts);
    /* the others wait for rank 0 as long as it says it is alive; rank 0 waits for nobody's work,
     * so it gives them the usual deadline */
    xpb_err ignored;
    xpb_parallel_agree(par, XPB_OK, NULL, "rank 0's one-rank baseline run", par->comm.rank != 0,
                       &ignored);
}

/* Finds the plugins and builds the model program. */
static xpb_status prepare(run_state *r, const xpb_registry *registry)
{
    const xpb_run_config *cfg = r->cfg;
    const xpb_model_api *model = xpb_registry_model(registry, cfg->model);
    r->plugin = xpb_registry_find(registry, XPB_PLUGIN_BACKEND, cfg->backend);
    if (!model)
        return xpb_err_set(&r->err, XPB_NOT_FOUND, "model '%s' is not loaded (see `xpubench list`)",
                           cfg->model);
    if (!r->plugin)
        return xpb_err_set(&r->err, XPB_UNSUPPORTED,
                           "backend '%s' is not loaded on this machine (see `xpubench list`)",
                           cfg->backend);
    xpb_progress_update(r->opts->label, 0, "building");
    xpb_program_options popt = xpb_run_config_program(cfg);
    xpb_status st = xpb_model_program_create(&r->mp, model, &popt, &r->err);
    if (st) /* a model that cannot build this configuration fails the run */
        return st == XPB_OUT_OF_MEMORY ? st : XPB_INVALID_ARGUMENT;
    json_object_set_new(r->run, "model", xpb_run_model_json(r->mp));
    if (r->mp->training)
        json_object_set_new(r->config, "optimizer", xpb_optimizer_json(r->mp, 0));
    return XPB_OK;
}

/* --dump and verify: true, both before timing. */
static xpb_status check_first_step(run_state *r, const xpb_registry *registry)
{
    const xpb_run_config *cfg = r->cfg;
    const xpb_backend_api *backend = r->plugin->api;
    xpb_status st;
    if (r->opts->dump_dir) {
        xpb_progress_update(r->opts->label, 0, "dumping the first step");
        if (!r->opts->dump_step)
            return xpb_err_set(&r->err, XPB_INVALID_ARGUMENT, "no dump step was given");
        if ((st = r->opts->dump_step(r->opts->dump_dir, backend, r->mp, cfg, &r->err)))
            return st;
    }
    if (!cfg->verify)
        return XPB_OK;
    xpb_progress_update(r->opts->label, 0,
                        "verifying the first step against " XPB_REFERENCE_BACKEND);
    if (!r->opts->verify_step)
        return xpb_err_set(&r->err, XPB_INVALID_ARGUMENT,
                           "verify: true, but this caller cannot verify (no verify step given)");
    xpb_verify_result vr;
    if ((st = r->opts->verify_step(&vr, registry, backend, r->mp, cfg, &r->err)))
        return st;
    json_object_set_new(r->verification, "verified", json_boolean(vr.passed));
    json_object_set_new(r->verification, "max_rel_error",
                        isfinite(vr.max_rel_error) ? json_real(vr.max_rel_error) : json_null());
    json_object_set_new(r->verification, "message", json_string(vr.message));
    if (!vr.passed)
        return xpb_err_set(&r->err, XPB_NUMERIC, "%s", vr.message);
    return XPB_OK;
}

/* Opens the device and compiles (refusing a newer op set or an emulated precision), with the
 * ranks' communicator when the program averages over them; stages a streamed run's batches. */
static xpb_status compile(run_state *r)
{
    const xpb_run_config *cfg = r->cfg;
    xpb_parallel *par = r->opts->par;
    xpb_status st;
    xpb_compile_options copts = {.struct_size = sizeof copts,
                                 .precision = cfg->precision,
                                 .fusion = cfg->fusion,
                                 .threads = cfg->threads,
                                 .profiling = cfg->profile,
                                 .transfer = cfg->transfer,
                                 .comm =
                                     par && cfg->parallel == XPB_PARALLEL_DATA ? &par->comm : NULL};
    xpb_progress_update(r->opts->label, 0, "compiling");
    if ((st = xpb_session_open_for_run(&r->session, r->plugin, cfg->device, r->mp, &copts,
                                       (int)cfg->allow_emulated, &r->err)))
        return st;
    json_object_set_new(r->run, "device",
                        xpb_run_device_json(&r->session.info, xpb_plugin_caps(r->plugin)));
    if (cfg->transfer == XPB_TRANSFER_STREAMED)
        st = xpb_stream_open(&r->stream, &r->session, &r->err);
    return st;
}

/* The metrics of the timed steps into the run (with several ranks, the "parallel" object,
 * collectively), and the profile. */
static xpb_status record_metrics(run_state *r)
{
    const xpb_run_config *cfg = r->cfg;
    uint64_t peak = xpb_rss_peak();
    r->timing.host_run_peak_bytes =
        r->peak_reset && peak ? (int64_t)(peak > r->rss_before ? peak - r->rss_before : 0) : -1;
    json_t *metrics = xpb_run_metrics_json(&r->timing, cfg, r->mp, &r->session);
    if (!metrics)
        return xpb_err_set(&r->err, XPB_OUT_OF_MEMORY, "out of memory");
    json_object_set_new(r->run, "metrics", metrics);
    if (r->mp->n_losses && !isfinite(r->timing.loss_first))
        return xpb_err_set(&r->err, XPB_NUMERIC,
                           "the loss of the first timed step is not a finite number");
    if (r->mp->n_losses && !isfinite(r->timing.loss_last))
        return xpb_err_set(&r->err, XPB_NUMERIC,
                           "the loss of the last timed step is not a finite number");
    if (r->opts->par) {
        json_t *par = NULL;
        xpb_status st = xpb_run_parallel_json(&par, r->opts->par, &r->timing, cfg, r->mp,
                                              &r->session, r->run, &r->baseline, &r->err);
        if (st)
            return st;
        if (par)
            json_object_set_new(metrics, "parallel", par);
    }
    if (cfg->profile) {
        json_t *prof = xpb_run_profile_json(&r->session);
        if (prof)
            json_object_set_new(r->run, "profile", prof);
    }
    return XPB_OK;
}

/* Compiles, warms up and times the repeats, recording the device and the metrics. */
static xpb_status measure(run_state *r)
{
    const xpb_run_config *cfg = r->cfg;
    xpb_status st = stage_end(r, compile(r), "compiling");
    if (st)
        return st;
    /* the ranks agree at the end of every step (measure.h): a failure there is agreed */
    if ((st = xpb_measure_warmup(&r->session, cfg, r->opts, &r->err)) ||
        (st = xpb_measure_repeats(&r->timing, &r->session,
                                  cfg->transfer == XPB_TRANSFER_STREAMED ? &r->stream : NULL, cfg,
                                  r->opts, &r->err))) {
        r->agreed = r->opts->par != NULL;
        return st;
    }
    return stage_end(r, record_metrics(r), "recording the timed steps");
}

static void run_free(run_state *r)
{
    xpb_stream_close(&r->stream);
    xpb_session_close(&r->session);
    xpb_timing_free(&r->timing);
    xpb_model_program_free(r->mp);
    r->mp = NULL;
}

json_t *xpb_run_one(const xpb_registry *registry, const xpb_run_config *cfg,
                    const xpb_runner_opts *opts)
{
    run_state r = {.opts = opts};
    const xpb_plugin_descriptor *backend =
        xpb_registry_find(registry, XPB_PLUGIN_BACKEND, cfg->backend);
    xpb_status st = xpb_rank_config(&r.local, cfg, backend, opts->par, &r.err);
    r.cfg = &r.local;
    if (!(r.run = new_run(&r)))
        return NULL;
    st = stage_end(&r, st, "choosing the device");
    if (st == XPB_OK && opts->par)
        measure_baseline(&r, registry);
    /* the run's memory: from here (the model is built next) to the end of its timed steps */
    r.peak_reset = xpb_rss_reset_peak() == 0;
    r.rss_before = xpb_rss_now();
    if (st == XPB_OK && cfg->mode == XPB_MODE_TTA) {
        st = xpb_tta_measure(r.run, r.config, registry, r.cfg, opts, &r.err);
    } else {
        if (st == XPB_OK)
            st = stage_end(&r, prepare(&r, registry), "building the model");
        if (st == XPB_OK)
            st = stage_end(&r, check_first_step(&r, registry), "checking the first step");
        if (st == XPB_OK)
            st = measure(&r);
    }
    xpb_progress_clear();
    if (st == XPB_OUT_OF_MEMORY && !r.err.msg[0]) {
        json_decref(r.verification);
        json_decref(r.run);
        run_free(&r);
        return NULL;
    }
    if (st == XPB_OK)
        set_status(r.run, "ok", NULL);
    else
        set_status(r.run, status_of(st), r.err.msg);
    json_object_set_new(r.run, "verification", r.verification);
    run_free(&r);
    return r.run;
}
