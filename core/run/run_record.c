/* The JSON of one run (see run_record.h). */
#include "run/run_record.h"

#include "program/op_cost.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/devices.h"
#include "plugin/guard.h"
#include "machine/env.h"
#include "results/interval.h"
#include "base/names.h"
#include "run/rank_config.h"
#include "run/stats.h"

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
    json_object_set_new(c, "allow_emulated", json_boolean(cfg->allow_emulated));
    json_object_set_new(c, "parallel", json_string(xpb_parallel_mode_name(cfg->parallel)));
    json_object_set_new(c, "world_size", json_integer(cfg->world_size ? cfg->world_size : 1));
    return c;
}

json_t *xpb_optimizer_json(const xpb_model_program *mp, uint32_t phase)
{
    const xpb_optimizer_desc *o = &mp->optimizers[phase];
    json_t *j = json_object();
    json_object_set_new(j, "kind",
                        json_string(o->kind == XPB_OPTIMIZER_ADAM    ? "adam"
                                    : o->kind == XPB_OPTIMIZER_ADAMW ? "adamw"
                                                                     : "sgd"));
    json_object_set_new(j, "lr", json_real(o->lr));
    json_object_set_new(j, "momentum", json_real(o->momentum));
    json_object_set_new(j, "weight_decay", json_real(o->weight_decay));
    json_object_set_new(j, "beta1", json_real(o->beta1));
    json_object_set_new(j, "beta2", json_real(o->beta2));
    json_object_set_new(j, "eps", json_real(o->eps));
    double clip = phase < mp->graph->n_phases ? mp->graph->phases[phase].clip_max_norm : 0;
    if (clip > 0)
        json_object_set_new(j, "clip_grad_norm", json_real(clip));
    return j;
}

json_t *xpb_run_model_json(const xpb_model_program *mp)
{
    json_t *j = json_object();
    json_object_set_new(j, "parameters", json_integer(mp->param_count));
    json_object_set_new(j, "flops_per_sample_forward", json_integer(mp->flops_forward));
    json_object_set_new(j, "flops_per_sample_train", json_integer(mp->flops_train));
    json_object_set_new(j, "layers", json_integer(mp->layers));
    json_object_set_new(j, "bytes_per_sample", json_integer(mp->bytes));
    if (mp->tokens > 0) {
        json_object_set_new(j, "tokens_per_sample", json_integer(mp->tokens));
        json_object_set_new(j, "flops_per_token_forward",
                            json_integer(mp->flops_forward / mp->tokens));
        json_object_set_new(j, "flops_per_token_train", json_integer(mp->flops_train / mp->tokens));
    }
    return j;
}

/* What the backend honours, as the host can use it (xpb_plugin_caps), by name. */
static json_t *capabilities_json(uint64_t caps)
{
    static const struct {
        uint64_t bit;
        const char *name;
    } names[] = {{XPB_CAP_FUSION, "fusion"},
                 {XPB_CAP_THREADS, "threads"},
                 {XPB_CAP_PROFILING, "profiling"},
                 {XPB_CAP_MEMORY_STATS, "memory_stats"},
                 {XPB_CAP_ENERGY, "energy"}};
    json_t *list = json_array();
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (caps & names[i].bit)
            json_array_append_new(list, json_string(names[i].name));
    return list;
}

json_t *xpb_run_device_json(const xpb_device_info *d, uint64_t caps)
{
    json_t *j = json_object(), *peak = json_object();
    json_object_set_new(j, "name", json_string(d->name));
    json_object_set_new(j, "driver", json_string(d->driver));
    json_object_set_new(j, "libraries", json_string(d->libraries));
    json_object_set_new(j, "threads", json_integer(d->threads));
    for (int p = 1; p < XPB_PEAK_SLOTS; p++)
        if (d->peak_flops[p] > 0)
            json_object_set_new(peak, xpb_precision_name((uint32_t)p), json_real(d->peak_flops[p]));
    json_object_set_new(j, "peak_flops", peak);
    json_object_set_new(j, "capabilities", capabilities_json(caps));
    json_object_set_new(j, "kind", json_string(xpb_device_kind_name(d->kind)));
    json_t *support = json_object();
    for (const xpb_precision_spelling *p = xpb_precision_spellings; p->name; p++)
        if (d->precisions & XPB_PRECISION_BIT(p->precision))
            json_object_set_new(support, p->name,
                                json_string(d->emulated_precisions & XPB_PRECISION_BIT(p->precision)
                                                ? "emulated"
                                                : "native"));
    json_object_set_new(j, "precisions", support);
    /* the device's limits (ABI 1.3; zero from older backends: unknown) */
    json_object_set_new(j, "peak_flops_source",
                        d->peak_flops_source[0] ? json_string(d->peak_flops_source) : json_null());
    json_object_set_new(j, "memory_bandwidth",
                        d->memory_bandwidth > 0 ? json_real(d->memory_bandwidth) : json_null());
    json_object_set_new(j, "memory_bandwidth_source",
                        d->memory_bandwidth_source[0] ? json_string(d->memory_bandwidth_source)
                                                      : json_null());
    json_object_set_new(j, "datasheet_bandwidth",
                        d->datasheet_bandwidth > 0 ? json_real(d->datasheet_bandwidth)
                                                   : json_null());
    json_t *sheet = json_object();
    for (int p = 1; p < XPB_PEAK_SLOTS; p++)
        if (d->datasheet_flops[p] > 0)
            json_object_set_new(sheet, xpb_precision_name((uint32_t)p),
                                json_real(d->datasheet_flops[p]));
    json_object_set_new(j, "datasheet_peak_flops", sheet);
    return j;
}

static json_t *num_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* Samples one step processes: the batch of every rank (the global batch). */
static double step_samples(const xpb_timing *t, const xpb_run_config *cfg)
{
    return (double)cfg->batch * (t->ranks ? t->ranks : 1);
}

/* Samples processed in the timed steps. */
static double timed_samples(const xpb_timing *t, const xpb_run_config *cfg)
{
    double samples = 0;
    for (size_t r = 0; r < cfg->repeats; r++)
        samples += t->repeat_steps[r] * step_samples(t, cfg);
    return samples;
}

static json_t *energy_json(const xpb_energy *e, const xpb_timing *t, const xpb_run_config *cfg)
{
    json_t *en = json_object();
    int measured = e->source != NULL;
    double samples = timed_samples(t, cfg);
    json_object_set_new(en, "measured", json_boolean(measured));
    json_object_set_new(en, "source", measured ? json_string(e->source) : json_null());
    json_object_set_new(en, "joules", measured ? json_real(e->joules) : json_null());
    json_object_set_new(en, "samples_per_joule",
                        measured ? json_real(samples / e->joules) : json_null());
    json_object_set_new(
        en, "watts", measured && e->seconds > 0 ? json_real(e->joules / e->seconds) : json_null());
    json_object_set_new(en, "reason", measured ? json_null() : json_string(e->reason));
    if (measured && strcmp(e->source, "rapl") == 0)
        json_object_set_new(en, "domains",
                            json_pack("{s:f, s:f}", "package", e->package, "dram", e->dram));
    return en;
}

/* At most XPB_LOSS_SERIES_POINTS points of the per-step losses: the steps split into equal
 * buckets, each point the mean loss of its bucket at the bucket's last step. */
#define XPB_LOSS_SERIES_POINTS 64
static json_t *loss_series_json(const xpb_timing *t)
{
    json_t *series = json_array();
    size_t n = t->n_steps, points = n < XPB_LOSS_SERIES_POINTS ? n : XPB_LOSS_SERIES_POINTS;
    for (size_t k = 0; k < points; k++) {
        size_t lo = k * n / points, hi = (k + 1) * n / points;
        double sum = 0;
        size_t cnt = 0;
        for (size_t i = lo; i < hi; i++)
            if (isfinite(t->step_loss[i])) {
                sum += t->step_loss[i];
                cnt++;
            }
        if (cnt)
            json_array_append_new(
                series, json_pack("{s:I, s:f}", "step", (json_int_t)hi, "loss", sum / (double)cnt));
    }
    return series;
}

static json_t *loss_json(const xpb_timing *t)
{
    json_t *loss = json_object();
    json_object_set_new(loss, "first", num_or_null(t->loss_first));
    json_object_set_new(loss, "last", num_or_null(t->loss_last));
    json_object_set_new(loss, "series", loss_series_json(t));
    return loss;
}

static json_t *interference_json(const xpb_interference *in)
{
    json_t *j = json_object();
    json_object_set_new(j, "other_cpu_share", num_or_null(in->other_share));
    json_object_set_new(j, "steal_share", num_or_null(in->steal_share));
    json_object_set_new(j, "load_1m", num_or_null(in->load_1m));
    json_object_set_new(j, "flagged", json_boolean(in->flagged));
    return j;
}

json_t *xpb_run_metrics_json(const xpb_timing *t, const xpb_run_config *cfg,
                             const xpb_model_program *mp, const xpb_session *s)
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
                     ? t->repeat_steps[r] * step_samples(t, cfg) / t->repeat_seconds[r]
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
    xpb_interval ci; /* of the geometric mean throughput over repeats (interval.h) */
    if (xpb_interval_geomean(&ci, thr, R, 0.95) != 0)
        ci.low = ci.high = NAN;
    free(thr);
    json_object_set_new(m, "timed_steps", json_integer((json_int_t)t->n_steps));
    json_object_set_new(tp, "median", json_real(ts.p50));
    json_object_set_new(tp, "min", json_real(ts.min));
    json_object_set_new(tp, "max", json_real(ts.max));
    json_object_set_new(tp, "unit", json_string("samples/s"));
    json_object_set_new(tp, "ci95_low", num_or_null(ci.low));
    json_object_set_new(tp, "ci95_high", num_or_null(ci.high));
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
    double peak = s->info.peak_flops[cfg->precision < XPB_PEAK_SLOTS ? cfg->precision : 0];
    json_object_set_new(m, "peak_fraction", peak > 0 ? json_real(flops / peak) : json_null());
    /* the roofline's other axis: the bytes the program's ops move at the least, per second */
    double bytes = (double)mp->bytes * ts.p50;
    json_object_set_new(m, "bytes_per_s", json_real(bytes));
    json_object_set_new(m, "bandwidth_fraction",
                        s->info.memory_bandwidth > 0 ? json_real(bytes / s->info.memory_bandwidth)
                                                     : json_null());
    if (mp->tokens > 0)
        json_object_set_new(m, "tokens_per_s", json_real((double)mp->tokens * ts.p50));

    json_t *mem = json_object();
    json_object_set_new(mem, "host_peak_rss_bytes", json_integer((json_int_t)xpb_env_peak_rss()));
    xpb_memory_stats ms = {.struct_size = sizeof ms};
    int have_ms = 0;
    if (XPB_HAS_MEMBER(s->api, xpb_backend_api, memory_stats) && s->api->memory_stats) {
        xpb_guard_enter(s->api, "memory_stats");
        have_ms = s->api->memory_stats(s->exe, &ms) == XPB_OK;
        xpb_guard_leave();
    }
    json_object_set_new(mem, "device_bytes_in_use",
                        have_ms ? json_integer((json_int_t)ms.bytes_in_use) : json_null());
    json_object_set_new(mem, "device_peak_bytes",
                        have_ms ? json_integer((json_int_t)ms.peak_bytes) : json_null());
    json_object_set_new(mem, "host_run_peak_bytes",
                        t->host_run_peak_bytes >= 0 ? json_integer(t->host_run_peak_bytes)
                                                    : json_null());
    json_object_set_new(m, "memory", mem);

    json_object_set_new(m, "energy", energy_json(&t->energy, t, cfg));
    json_object_set_new(m, "loss", loss_json(t));
    json_object_set_new(m, "interference", interference_json(&t->interference));
    double overhead =
        t->wall_seconds > 0 ? (t->wall_seconds - t->backend_seconds) / t->wall_seconds : 0;
    json_object_set_new(m, "host_overhead_fraction", json_real(overhead < 0 ? 0 : overhead));
    return m;
}

/* Per-op times of the executable, when the backend keeps them. */
json_t *xpb_run_profile_json(const xpb_session *s)
{
    const xpb_backend_api *api = s->api;
    if (!XPB_HAS_MEMBER(api, xpb_backend_api, profile_read) || !api->profile_read)
        return NULL;
    uint32_t count = 0, cap = s->mp->n_ops;
    xpb_op_profile *prof = calloc(cap ? cap : 1, sizeof *prof);
    xpb_status st = XPB_OUT_OF_MEMORY;
    if (prof) {
        xpb_guard_enter(api, "profile_read");
        st = api->profile_read(s->exe, prof, cap, &count);
        xpb_guard_leave();
    }
    if (st != XPB_OK) {
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
        /* per call: where the op sits in the roofline (op_cost.h) */
        json_object_set_new(e, "flops", json_integer(xpb_op_flops(&s->mp->program, op)));
        json_object_set_new(e, "bytes", json_integer(xpb_op_bytes(&s->mp->program, op)));
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
