/* The measurement loop (see runner.h). What is timed: for each step, the backend's run of
 * every phase and the synchronize that ends it (plus, when `transfer: streamed`, the copy of
 * the batch), measured by the host with a monotonic clock. Compilation, initialisation and
 * the first transfer happen before the clock. */
#include "runner.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "dump.h"
#include "energy.h"
#include "env.h"
#include "model_program.h"
#include "names.h"
#include "progress.h"
#include "session.h"
#include "stats.h"
#include "verify.h"

json_t *xpb_run_config_json(const xpb_run_config *cfg)
{
    json_t *c = json_object(), *params = json_object();
    json_object_set_new(c, "model", json_string(cfg->model));
    json_object_set_new(c, "variant", json_string(cfg->variant ? cfg->variant : "default"));
    json_object_set_new(c, "mode", json_string(xpb_mode_name(cfg->mode)));
    json_object_set_new(c, "batch", json_integer(cfg->batch));
    json_object_set_new(c, "precision", json_string(xpb_precision_name(cfg->precision)));
    json_object_set_new(c, "backend", json_string(cfg->backend));
    json_object_set_new(c, "fusion", json_boolean(cfg->fusion));
    json_object_set_new(c, "threads", json_integer(cfg->threads));
    json_object_set_new(c, "device", json_integer(cfg->device));
    json_object_set_new(c, "warmup", json_integer(cfg->warmup));
    json_object_set_new(c, "min_steps", json_integer(cfg->min_steps));
    json_object_set_new(c, "min_time_s", json_real(cfg->min_time));
    json_object_set_new(c, "max_steps", json_integer(cfg->max_steps));
    json_object_set_new(c, "repeats", json_integer(cfg->repeats));
    json_object_set_new(c, "seed", json_integer((json_int_t)(cfg->seed & INT64_MAX)));
    json_object_set_new(c, "data", json_string(cfg->data ? cfg->data : "synthetic"));
    json_object_set_new(c, "transfer", json_string(xpb_transfer_name(cfg->transfer)));
    for (size_t i = 0; i < cfg->n_params; i++)
        json_object_set_new(params, cfg->params[i].key, json_string(cfg->params[i].value));
    json_object_set_new(c, "params", params);
    return c;
}

static void set_status(json_t *run, const char *status, const char *error)
{
    json_object_set_new(run, "status", json_string(status));
    if (error)
        json_object_set_new(run, "error", json_string(error));
}

static json_t *optimizer_json(const xpb_optimizer_desc *o)
{
    json_t *j = json_object();
    json_object_set_new(j, "kind", json_string(o->kind == XPB_OPTIMIZER_ADAM ? "adam" : "sgd"));
    json_object_set_new(j, "lr", json_real(o->lr));
    json_object_set_new(j, "momentum", json_real(o->momentum));
    json_object_set_new(j, "weight_decay", json_real(o->weight_decay));
    json_object_set_new(j, "beta1", json_real(o->beta1));
    json_object_set_new(j, "beta2", json_real(o->beta2));
    json_object_set_new(j, "eps", json_real(o->eps));
    return j;
}

/* What the backend honours, as the host can use it (xpb_plugin_caps), by name. */
static json_t *capabilities_json(uint64_t caps)
{
    static const struct {
        uint64_t bit;
        const char *name;
    } names[] = {{XPB_CAP_FUSION, "fusion"},       {XPB_CAP_THREADS, "threads"},
                 {XPB_CAP_PROFILING, "profiling"}, {XPB_CAP_MEMORY_STATS, "memory_stats"},
                 {XPB_CAP_ENERGY, "energy"},       {XPB_CAP_ASYNC, "async"}};
    json_t *list = json_array();
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (caps & names[i].bit)
            json_array_append_new(list, json_string(names[i].name));
    return list;
}

static json_t *device_json(const xpb_device_info *d, uint64_t caps)
{
    json_t *j = json_object(), *peak = json_object();
    json_object_set_new(j, "name", json_string(d->name));
    json_object_set_new(j, "driver", json_string(d->driver));
    json_object_set_new(j, "libraries", json_string(d->libraries));
    json_object_set_new(j, "threads", json_integer(d->threads));
    for (int p = 1; p < XPB_PRECISION_COUNT; p++)
        if (d->peak_flops[p] > 0)
            json_object_set_new(peak, xpb_precision_name((uint32_t)p), json_real(d->peak_flops[p]));
    json_object_set_new(j, "peak_flops", peak);
    json_object_set_new(j, "capabilities", capabilities_json(caps));
    return j;
}

static json_t *num_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* Per-op times of the executable, when the backend keeps them. */
static json_t *profile_json(const xpb_session *s)
{
    const xpb_backend_api *api = s->api;
    if (!XPB_HAS_MEMBER(api, xpb_backend_api, profile_read) || !api->profile_read)
        return NULL;
    uint32_t count = 0, cap = s->mp->n_ops;
    xpb_op_profile *prof = calloc(cap ? cap : 1, sizeof *prof);
    if (!prof || api->profile_read(s->exe, prof, cap, &count) != XPB_OK) {
        free(prof);
        return NULL;
    }
    json_t *list = json_array();
    for (uint32_t i = 0; i < count && i < cap; i++) {
        const xpb_op *op = &s->mp->ops[prof[i].op < s->mp->n_ops ? prof[i].op : 0];
        json_t *e = json_object();
        json_object_set_new(e, "op", json_string(xpb_op_name(op->kind)));
        json_object_set_new(e, "layer", json_string(op->layer));
        json_object_set_new(e, "calls", json_integer((json_int_t)prof[i].calls));
        json_object_set_new(e, "seconds", json_real(prof[i].seconds));
        if (prof[i].fused_into < s->mp->n_ops) {
            char buf[300];
            const xpb_op *into = &s->mp->ops[prof[i].fused_into];
            snprintf(buf, sizeof buf, "%s %s", xpb_op_name(into->kind), into->layer);
            json_object_set_new(e, "fused_into", json_string(buf));
        } else {
            json_object_set_new(e, "fused_into", json_null());
        }
        json_array_append_new(list, e);
    }
    free(prof);
    return list;
}

typedef struct timing {
    double *step_seconds; /* every timed step of every repeat */
    size_t n_steps, cap_steps;
    double *repeat_seconds;
    uint32_t *repeat_steps;
    double backend_seconds, wall_seconds;
    double loss_first, loss_last;
} timing;

static int push_step(timing *t, double s)
{
    if (t->n_steps == t->cap_steps) {
        size_t cap = t->cap_steps ? 2 * t->cap_steps : 256;
        double *grown = realloc(t->step_seconds, cap * sizeof *grown);
        if (!grown)
            return -1;
        t->step_seconds = grown;
        t->cap_steps = cap;
    }
    t->step_seconds[t->n_steps++] = s;
    return 0;
}

/* The timed repeats. Returns XPB_INTERRUPTED when opts->stop was raised. */
static xpb_status timed_repeats(timing *t, xpb_session *s, const xpb_run_config *cfg,
                                const xpb_runner_opts *opts, xpb_err *err)
{
    xpb_status st;
    const xpb_model_program *mp = s->mp;
    char detail[160];
    for (uint32_t r = 0; r < cfg->repeats; r++) {
        uint32_t steps = 0;
        double start = xpb_now(), elapsed = 0;
        while (steps < cfg->min_steps || elapsed < cfg->min_time) {
            if (cfg->max_steps && steps >= cfg->max_steps)
                break;
            if (opts->stop && *opts->stop)
                return xpb_err_set(err, XPB_INTERRUPTED, "interrupted");
            double inside = 0, t0 = xpb_now();
            if (cfg->transfer == XPB_TRANSFER_STREAMED &&
                (st = xpb_model_program_write_batch(mp, s->api, s->exe, 0, s->scratch, err)))
                return st;
            if ((st = xpb_session_step(s, &inside, err)))
                return st;
            double t1 = xpb_now();
            if (push_step(t, t1 - t0))
                return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
            t->backend_seconds += inside;
            t->wall_seconds += t1 - t0;
            if (r == 0 && steps == 0 && mp->n_losses &&
                (st = xpb_session_loss(&t->loss_first, s, 0, err)))
                return st;
            steps++;
            elapsed = xpb_now() - start;
            double frac_steps = (double)steps / cfg->min_steps,
                   frac_time = cfg->min_time > 0 ? elapsed / cfg->min_time : 1;
            double frac = frac_steps < frac_time ? frac_steps : frac_time;
            if (frac > 1)
                frac = 1;
            snprintf(detail, sizeof detail, "repeat %u/%u step %u  %.1f samples/s", r + 1,
                     cfg->repeats, steps, steps * (double)cfg->batch / (elapsed > 0 ? elapsed : 1));
            xpb_progress_update(opts->label, (r + frac) / cfg->repeats, detail);
        }
        t->repeat_steps[r] = steps;
        t->repeat_seconds[r] = 0;
        for (size_t i = t->n_steps - steps; i < t->n_steps; i++)
            t->repeat_seconds[r] += t->step_seconds[i];
    }
    if (mp->n_losses && (st = xpb_session_loss(&t->loss_last, s, 0, err)))
        return st;
    return XPB_OK;
}

static json_t *metrics_json(const timing *t, const xpb_run_config *cfg, const xpb_model_program *mp,
                            const xpb_session *s, double joules, const char *energy_source)
{
    json_t *m = json_object(), *tp = json_object(), *reps = json_array(), *st = json_object();
    size_t R = cfg->repeats;
    double *thr = calloc(R, sizeof *thr);
    if (!m || !thr) {
        free(thr);
        json_decref(m);
        return NULL;
    }
    for (size_t r = 0; r < R; r++) {
        thr[r] = t->repeat_seconds[r] > 0
                     ? t->repeat_steps[r] * (double)cfg->batch / t->repeat_seconds[r]
                     : 0;
        json_t *e = json_object();
        json_object_set_new(e, "steps", json_integer(t->repeat_steps[r]));
        json_object_set_new(e, "seconds", json_real(t->repeat_seconds[r]));
        json_object_set_new(e, "throughput", json_real(thr[r]));
        json_array_append_new(reps, e);
    }
    xpb_summary ts, ss;
    xpb_summarize(&ts, thr, R);
    xpb_summarize(&ss, t->step_seconds, t->n_steps);
    free(thr);
    json_object_set_new(m, "timed_steps", json_integer((json_int_t)t->n_steps));
    json_object_set_new(tp, "median", json_real(ts.p50));
    json_object_set_new(tp, "min", json_real(ts.min));
    json_object_set_new(tp, "max", json_real(ts.max));
    json_object_set_new(tp, "unit", json_string("samples/s"));
    json_object_set_new(m, "throughput", tp);
    json_object_set_new(m, "repeats", reps);
    json_object_set_new(st, "mean", json_real(ss.mean));
    json_object_set_new(st, "p50", json_real(ss.p50));
    json_object_set_new(st, "p95", json_real(ss.p95));
    json_object_set_new(st, "p99", json_real(ss.p99));
    json_object_set_new(st, "cv", json_real(ss.cv));
    json_object_set_new(m, "step_time_s", st);
    double flops = (double)(mp->training ? mp->flops_train : mp->flops_forward) * ts.p50;
    json_object_set_new(m, "flops_per_s", json_real(flops));
    double peak = s->info.peak_flops[cfg->precision < XPB_PRECISION_COUNT ? cfg->precision : 0];
    json_object_set_new(m, "peak_fraction", peak > 0 ? json_real(flops / peak) : json_null());

    json_t *mem = json_object();
    json_object_set_new(mem, "host_peak_rss_bytes", json_integer((json_int_t)xpb_env_peak_rss()));
    xpb_memory_stats ms = {.struct_size = sizeof ms};
    int have_ms = XPB_HAS_MEMBER(s->api, xpb_backend_api, memory_stats) && s->api->memory_stats &&
                  s->api->memory_stats(s->exe, &ms) == XPB_OK;
    json_object_set_new(mem, "device_bytes_in_use",
                        have_ms ? json_integer((json_int_t)ms.bytes_in_use) : json_null());
    json_object_set_new(mem, "device_peak_bytes",
                        have_ms ? json_integer((json_int_t)ms.peak_bytes) : json_null());
    json_object_set_new(m, "memory", mem);

    json_t *en = json_object();
    int measured = energy_source != NULL && joules > 0;
    double samples = 0;
    for (size_t r = 0; r < R; r++)
        samples += t->repeat_steps[r] * (double)cfg->batch;
    json_object_set_new(en, "measured", json_boolean(measured));
    json_object_set_new(en, "source", measured ? json_string(energy_source) : json_null());
    json_object_set_new(en, "joules", measured ? json_real(joules) : json_null());
    json_object_set_new(en, "samples_per_joule",
                        measured ? json_real(samples / joules) : json_null());
    json_object_set_new(m, "energy", en);

    json_t *loss = json_object();
    json_object_set_new(loss, "first", num_or_null(t->loss_first));
    json_object_set_new(loss, "last", num_or_null(t->loss_last));
    json_object_set_new(m, "loss", loss);
    double overhead =
        t->wall_seconds > 0 ? (t->wall_seconds - t->backend_seconds) / t->wall_seconds : 0;
    json_object_set_new(m, "host_overhead_fraction", json_real(overhead < 0 ? 0 : overhead));
    return m;
}

static json_t *model_json(const xpb_model_program *mp)
{
    json_t *j = json_object();
    json_object_set_new(j, "parameters", json_integer(mp->param_count));
    json_object_set_new(j, "flops_per_sample_forward", json_integer(mp->flops_forward));
    json_object_set_new(j, "flops_per_sample_train", json_integer(mp->flops_train));
    json_object_set_new(j, "layers", json_integer(mp->layers));
    return j;
}

/* Reads an energy meter: the backend's own, else RAPL. */
static int energy_now(double *joules, const char **source, const xpb_session *s)
{
    if (XPB_HAS_MEMBER(s->api, xpb_backend_api, energy_read) && s->api->energy_read &&
        s->api->energy_read(s->backend, joules) == XPB_OK) {
        *source = "backend";
        return 0;
    }
    if (xpb_rapl_read(joules) == 0) {
        *source = "rapl";
        return 0;
    }
    *source = NULL;
    return -1;
}

json_t *xpb_run_one(const xpb_registry *registry, const xpb_run_config *cfg,
                    const xpb_runner_opts *opts)
{
    xpb_err err = {{0}};
    xpb_status st;
    xpb_model_program *mp = NULL;
    xpb_session s = {0};
    timing t = {.loss_first = NAN, .loss_last = NAN};
    json_t *run = json_object(), *verification = json_object();
    if (!run || !verification)
        goto fail_oom;
    json_object_set_new(run, "id", json_string(cfg->id));
    json_object_set_new(run, "status", json_string("failed"));
    json_t *config = xpb_run_config_json(cfg);
    json_object_set_new(run, "config", config);
    json_object_set_new(verification, "requested", json_boolean(cfg->verify));
    json_object_set_new(verification, "verified", json_null());
    json_object_set_new(verification, "reference", json_string(XPB_REFERENCE_BACKEND));
    json_object_set_new(verification, "max_rel_error", json_null());
    json_object_set_new(verification, "message", json_string(""));

    const xpb_model_api *model = xpb_registry_model(registry, cfg->model);
    const xpb_backend_api *backend = xpb_registry_backend(registry, cfg->backend);
    if (!model) {
        snprintf(err.msg, sizeof err.msg, "model '%s' is not loaded (see `xpubench list`)",
                 cfg->model);
        set_status(run, "failed", err.msg);
        goto finish;
    }
    if (!backend) {
        snprintf(err.msg, sizeof err.msg,
                 "backend '%s' is not loaded on this machine (see `xpubench list`)", cfg->backend);
        set_status(run, "unsupported", err.msg);
        goto finish;
    }
    xpb_progress_update(opts->label, 0, "building");
    if ((st = xpb_model_program_create(&mp, model, cfg, &err))) {
        set_status(run, "failed", err.msg);
        goto finish;
    }
    json_object_set_new(run, "model", model_json(mp));
    if (mp->training)
        json_object_set_new(config, "optimizer", optimizer_json(&mp->optimizers[0]));

    if (opts->dump_dir) {
        xpb_progress_update(opts->label, 0, "dumping the first step");
        if ((st = xpb_dump_step(opts->dump_dir, backend, mp, cfg, &err))) {
            set_status(run, st == XPB_UNSUPPORTED || st == XPB_NO_DEVICE ? "unsupported" : "failed",
                       err.msg);
            goto finish;
        }
    }
    if (cfg->verify) {
        xpb_progress_update(opts->label, 0, "verifying the first step against cpu_ref");
        xpb_verify_result vr;
        st = xpb_verify_step(&vr, registry, backend, mp, cfg, &err);
        if (st) {
            set_status(run, st == XPB_UNSUPPORTED || st == XPB_NO_DEVICE ? "unsupported" : "failed",
                       err.msg);
            goto finish;
        }
        json_object_set_new(verification, "verified", json_boolean(vr.passed));
        json_object_set_new(verification, "max_rel_error", num_or_null(vr.max_rel_error));
        json_object_set_new(verification, "message", json_string(vr.message));
        if (!vr.passed) {
            set_status(run, "failed", vr.message);
            goto finish;
        }
    }

    xpb_compile_options copts = {.struct_size = sizeof copts,
                                 .precision = cfg->precision,
                                 .fusion = cfg->fusion,
                                 .threads = cfg->threads,
                                 .profiling = cfg->profile};
    xpb_progress_update(opts->label, 0, "compiling");
    if ((st = xpb_session_open(&s, backend, cfg->device, mp, &copts, &err))) {
        set_status(run, st == XPB_UNSUPPORTED || st == XPB_NO_DEVICE ? "unsupported" : "failed",
                   err.msg);
        goto finish;
    }
    json_object_set_new(run, "device",
                        device_json(&s.info, xpb_plugin_caps(xpb_registry_find(
                                                 registry, XPB_PLUGIN_BACKEND, cfg->backend))));
    for (uint32_t w = 0; w < cfg->warmup; w++) {
        if (opts->stop && *opts->stop) {
            set_status(run, "interrupted", "interrupted during warm-up");
            goto finish;
        }
        char detail[64];
        snprintf(detail, sizeof detail, "warm-up %u/%u", w + 1, cfg->warmup);
        xpb_progress_update(opts->label, 0, detail);
        if ((st = xpb_session_step(&s, NULL, &err))) {
            set_status(run, "failed", err.msg);
            goto finish;
        }
    }
    t.repeat_seconds = calloc(cfg->repeats, sizeof *t.repeat_seconds);
    t.repeat_steps = calloc(cfg->repeats, sizeof *t.repeat_steps);
    if (!t.repeat_seconds || !t.repeat_steps)
        goto fail_oom;
    double e0 = 0, e1 = 0;
    const char *source = NULL;
    int have_energy = energy_now(&e0, &source, &s) == 0;
    if ((st = timed_repeats(&t, &s, cfg, opts, &err))) {
        set_status(run, st == XPB_INTERRUPTED ? "interrupted" : "failed", err.msg);
        goto finish;
    }
    double joules = 0;
    if (have_energy && energy_now(&e1, &source, &s) == 0)
        joules = strcmp(source, "rapl") == 0 ? xpb_rapl_delta(e0, e1) : e1 - e0;
    json_t *metrics = metrics_json(&t, cfg, mp, &s, joules, have_energy ? source : NULL);
    if (!metrics)
        goto fail_oom;
    json_object_set_new(run, "metrics", metrics);
    if (!isfinite(t.loss_first) && mp->n_losses) {
        set_status(run, "failed", "the loss of the first timed step is not a finite number");
        goto finish;
    }
    if (!isfinite(t.loss_last) && mp->n_losses) {
        set_status(run, "failed", "the loss of the last timed step is not a finite number");
        goto finish;
    }
    if (cfg->profile) {
        json_t *prof = profile_json(&s);
        if (prof)
            json_object_set_new(run, "profile", prof);
    }
    json_object_set_new(run, "status", json_string("ok"));
finish:
    xpb_progress_clear();
    json_object_set_new(run, "verification", verification);
    xpb_session_close(&s);
    xpb_model_program_free(mp);
    free(t.step_seconds);
    free(t.repeat_seconds);
    free(t.repeat_steps);
    return run;
fail_oom:
    json_decref(verification);
    json_decref(run);
    xpb_session_close(&s);
    xpb_model_program_free(mp);
    free(t.step_seconds);
    free(t.repeat_seconds);
    free(t.repeat_steps);
    return NULL;
}
