/* Reading a results document into its typed view (see view.h): one reading of every key, each
 * checked for its JSON type, absent when it is missing or mistyped. */
#include "results/view.h"

#include <math.h>
#include <string.h>

/* ---- one value of an object, by type; absent when missing or mistyped ---- */

static const char *str_of(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static double num_of(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static int64_t int_of(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : XPB_RESULTS_NO_INT;
}

static int bool_of(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_boolean(v) ? json_is_true(v) : XPB_RESULTS_NO_BOOL;
}

/* obj[key] when it is an object, else NULL (then every read below it is absent). */
static const json_t *object_of(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_object(v) ? v : NULL;
}

static const json_t *array_of(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_array(v) ? v : NULL;
}

/* ---- arrays and maps, into the arena; NULL only when out of memory ---- */

/* The strings of array `a` (NULL for an element that is not a string). */
static const char *const *strings_of(xpb_arena *arena, const json_t *a, size_t *n)
{
    *n = json_array_size(a);
    const char **out = xpb_arena_alloc(arena, *n * sizeof *out);
    for (size_t i = 0; out && i < *n; i++) {
        const json_t *e = json_array_get(a, i);
        out[i] = json_is_string(e) ? json_string_value(e) : NULL;
    }
    return out;
}

/* The keys of object `o` with their string values (NULL for a value that is not a string). */
static const struct xpb_results_pair *pairs_of(xpb_arena *arena, const json_t *o, size_t *n)
{
    *n = json_object_size(o);
    struct xpb_results_pair *out = xpb_arena_alloc(arena, *n * sizeof *out);
    size_t i = 0;
    for (void *it = json_object_iter((json_t *)o); out && it;
         it = json_object_iter_next((json_t *)o, it), i++) {
        const json_t *v = json_object_iter_value(it);
        out[i] = (struct xpb_results_pair){json_object_iter_key(it),
                                           json_is_string(v) ? json_string_value(v) : NULL};
    }
    return out;
}

/* The keys of object `o` with their number values (NaN for a value that is not a number). */
static const struct xpb_results_number *numbers_of(xpb_arena *arena, const json_t *o, size_t *n)
{
    *n = json_object_size(o);
    struct xpb_results_number *out = xpb_arena_alloc(arena, *n * sizeof *out);
    size_t i = 0;
    for (void *it = json_object_iter((json_t *)o); out && it;
         it = json_object_iter_next((json_t *)o, it), i++) {
        const json_t *v = json_object_iter_value(it);
        out[i] = (struct xpb_results_number){json_object_iter_key(it),
                                             json_is_number(v) ? json_number_value(v) : NAN};
    }
    return out;
}

/* ---- a run ---- */

static void read_config(struct xpb_results_config *c, xpb_arena *arena, const json_t *o)
{
    c->model = str_of(o, "model");
    c->variant = str_of(o, "variant");
    c->mode = str_of(o, "mode");
    c->precision = str_of(o, "precision");
    c->backend = str_of(o, "backend");
    c->data = str_of(o, "data");
    c->transfer = str_of(o, "transfer");
    c->fusion = bool_of(o, "fusion");
    c->batch = int_of(o, "batch");
    c->threads = int_of(o, "threads");
    c->device = int_of(o, "device");
    c->warmup = int_of(o, "warmup");
    c->min_steps = int_of(o, "min_steps");
    c->max_steps = int_of(o, "max_steps");
    c->repeats = int_of(o, "repeats");
    c->seed = int_of(o, "seed");
    c->min_time_s = num_of(o, "min_time_s");
    const json_t *opt = object_of(o, "optimizer");
    c->has_optimizer = opt != NULL;
    c->optimizer =
        (struct xpb_results_optimizer){str_of(opt, "kind"),     num_of(opt, "lr"),
                                       num_of(opt, "momentum"), num_of(opt, "weight_decay"),
                                       num_of(opt, "beta1"),    num_of(opt, "beta2"),
                                       num_of(opt, "eps"),      num_of(opt, "clip_grad_norm")};
    const json_t *params = object_of(o, "params");
    c->has_params = params != NULL;
    c->params = pairs_of(arena, params, &c->n_params);
    c->allow_emulated = bool_of(o, "allow_emulated");
    c->parallel = str_of(o, "parallel");
    c->world_size = int_of(o, "world_size");
    c->has_extra = json_object_get(o, "extra") != NULL;
}

static void read_device(struct xpb_results_device *d, xpb_arena *arena, const json_t *o)
{
    d->name = str_of(o, "name");
    d->driver = str_of(o, "driver");
    d->libraries = str_of(o, "libraries");
    d->kind = str_of(o, "kind");
    d->threads = int_of(o, "threads");
    d->peak_flops = numbers_of(arena, object_of(o, "peak_flops"), &d->n_peak_flops);
    d->precisions = pairs_of(arena, object_of(o, "precisions"), &d->n_precisions);
    const json_t *caps = array_of(o, "capabilities");
    d->has_capabilities = caps != NULL;
    d->capabilities = strings_of(arena, caps, &d->n_capabilities);
    d->peak_flops_source = str_of(o, "peak_flops_source");
    d->memory_bandwidth = num_of(o, "memory_bandwidth");
    d->memory_bandwidth_source = str_of(o, "memory_bandwidth_source");
    d->datasheet_bandwidth = num_of(o, "datasheet_bandwidth");
    d->datasheet_peak_flops =
        numbers_of(arena, object_of(o, "datasheet_peak_flops"), &d->n_datasheet_peak_flops);
}

static void read_repeats(struct xpb_results_metrics *m, xpb_arena *arena, const json_t *a)
{
    m->n_repeats = json_array_size(a);
    struct xpb_results_repeat *r = xpb_arena_alloc(arena, m->n_repeats * sizeof *r);
    for (size_t i = 0; r && i < m->n_repeats; i++) {
        const json_t *e = json_array_get(a, i);
        r[i] = (struct xpb_results_repeat){int_of(e, "steps"), num_of(e, "seconds"),
                                           num_of(e, "throughput")};
    }
    m->repeats = r;
}

static void read_loss(struct xpb_results_metrics *m, xpb_arena *arena, const json_t *o)
{
    const json_t *series = array_of(o, "series");
    m->loss.first = num_of(o, "first");
    m->loss.last = num_of(o, "last");
    m->loss.n_series = json_array_size(series);
    struct xpb_results_loss_point *p = xpb_arena_alloc(arena, m->loss.n_series * sizeof *p);
    for (size_t i = 0; p && i < m->loss.n_series; i++) {
        const json_t *e = json_array_get(series, i);
        p[i] = (struct xpb_results_loss_point){int_of(e, "step"), num_of(e, "loss")};
    }
    m->loss.series = p;
}

static void read_parallel(struct xpb_results_parallel *p, xpb_arena *arena, const json_t *o)
{
    const json_t *ranks = array_of(o, "ranks");
    const json_t *comm = object_of(o, "communication"), *base = object_of(o, "baseline");
    p->world_size = int_of(o, "world_size");
    p->hosts = int_of(o, "hosts");
    p->n_ranks = json_array_size(ranks);
    struct xpb_results_rank *r = xpb_arena_alloc(arena, p->n_ranks * sizeof *r);
    for (size_t i = 0; r && i < p->n_ranks; i++) {
        const json_t *e = json_array_get(ranks, i);
        r[i] = (struct xpb_results_rank){int_of(e, "rank"),         int_of(e, "local_rank"),
                                         int_of(e, "device_index"), int_of(e, "threads"),
                                         str_of(e, "host"),         str_of(e, "device"),
                                         num_of(e, "throughput"),   num_of(e, "step_p50_s")};
    }
    p->ranks = r;
    p->communication.all_reduces = int_of(comm, "all_reduces");
    p->communication.bytes_per_step = int_of(comm, "bytes_per_step");
    p->communication.seconds_per_step = num_of(comm, "seconds_per_step");
    p->communication.share = num_of(comm, "share");
    p->baseline.throughput = num_of(base, "throughput");
    p->baseline.source = str_of(base, "source");
    p->baseline.file = str_of(base, "file");
    p->baseline.reason = str_of(base, "reason");
    p->scaling_efficiency = num_of(o, "scaling_efficiency");
}

static void read_metrics(struct xpb_results_metrics *m, xpb_arena *arena, const json_t *o)
{
    const json_t *tp = object_of(o, "throughput"), *st = object_of(o, "step_time_s");
    const json_t *mem = object_of(o, "memory"), *en = object_of(o, "energy");
    const json_t *domains = object_of(en, "domains"), *in = object_of(o, "interference");
    const json_t *par = object_of(o, "parallel");
    m->timed_steps = int_of(o, "timed_steps");
    m->throughput.median = num_of(tp, "median");
    m->throughput.min = num_of(tp, "min");
    m->throughput.max = num_of(tp, "max");
    m->throughput.ci95_low = num_of(tp, "ci95_low");
    m->throughput.ci95_high = num_of(tp, "ci95_high");
    m->throughput.unit = str_of(tp, "unit");
    read_repeats(m, arena, array_of(o, "repeats"));
    m->step_time_s.mean = num_of(st, "mean");
    m->step_time_s.p50 = num_of(st, "p50");
    m->step_time_s.p95 = num_of(st, "p95");
    m->step_time_s.p99 = num_of(st, "p99");
    m->step_time_s.cv = num_of(st, "cv");
    m->flops_per_s = num_of(o, "flops_per_s");
    m->peak_fraction = num_of(o, "peak_fraction");
    m->bytes_per_s = num_of(o, "bytes_per_s");
    m->bandwidth_fraction = num_of(o, "bandwidth_fraction");
    m->tokens_per_s = num_of(o, "tokens_per_s");
    m->memory.host_peak_rss_bytes = int_of(mem, "host_peak_rss_bytes");
    m->memory.device_bytes_in_use = int_of(mem, "device_bytes_in_use");
    m->memory.device_peak_bytes = int_of(mem, "device_peak_bytes");
    m->memory.host_run_peak_bytes = int_of(mem, "host_run_peak_bytes");
    m->energy.measured = bool_of(en, "measured");
    m->energy.source = str_of(en, "source");
    m->energy.joules = num_of(en, "joules");
    m->energy.samples_per_joule = num_of(en, "samples_per_joule");
    m->energy.watts = num_of(en, "watts");
    m->energy.reason = str_of(en, "reason");
    m->energy.has_domains = domains != NULL;
    m->energy.package = num_of(domains, "package");
    m->energy.dram = num_of(domains, "dram");
    read_loss(m, arena, object_of(o, "loss"));
    m->host_overhead_fraction = num_of(o, "host_overhead_fraction");
    m->has_interference = in != NULL;
    m->interference.other_cpu_share = num_of(in, "other_cpu_share");
    m->interference.steal_share = num_of(in, "steal_share");
    m->interference.load_1m = num_of(in, "load_1m");
    m->interference.flagged = bool_of(in, "flagged");
    m->has_parallel = par != NULL;
    read_parallel(&m->parallel, arena, par);
}

static void read_profile(struct xpb_results_run *r, xpb_arena *arena, const json_t *a)
{
    r->has_profile = a != NULL;
    r->n_profile = json_array_size(a);
    struct xpb_results_profile_entry *p = xpb_arena_alloc(arena, r->n_profile * sizeof *p);
    for (size_t i = 0; p && i < r->n_profile; i++) {
        const json_t *e = json_array_get(a, i);
        p[i] = (struct xpb_results_profile_entry){
            str_of(e, "op"),         str_of(e, "layer"), int_of(e, "calls"), num_of(e, "seconds"),
            str_of(e, "fused_into"), int_of(e, "flops"), int_of(e, "bytes")};
    }
    r->profile = p;
}

static struct xpb_results_tta_score read_tta_score(const json_t *o)
{
    return (struct xpb_results_tta_score){
        num_of(o, "mean"), num_of(o, "min"),       num_of(o, "max"), num_of(o, "stdev"),
        int_of(o, "used"), int_of(o, "converged"), int_of(o, "runs")};
}

static void read_tta_run(struct xpb_results_tta_run *r, xpb_arena *arena, const json_t *o)
{
    *r = (struct xpb_results_tta_run){
        .seed = int_of(o, "seed"),
        .steps = int_of(o, "steps"),
        .samples = int_of(o, "samples"),
        .converged = bool_of(o, "converged"),
        .stopped_early = str_of(o, "stopped_early"),
        .outside_reference = bool_of(o, "outside_reference"),
        .seconds = num_of(o, "seconds"),
        .epochs = num_of(o, "epochs"),
        .joules = num_of(o, "joules"),
        .init_seconds = num_of(o, "init_seconds"),
        .data_wait_seconds = num_of(o, "data_wait_seconds"),
        .final_accuracy = num_of(o, "final_accuracy"),
        .energy_source = str_of(o, "energy_source"),
    };
    const json_t *a = array_of(o, "curve");
    size_t n = a ? json_array_size(a) : 0;
    struct xpb_results_tta_point *p = n ? xpb_arena_alloc(arena, n * sizeof *p) : NULL;
    if (!p)
        return;
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(a, i);
        p[i] = (struct xpb_results_tta_point){num_of(e, "epochs"), num_of(e, "seconds"),
                                              num_of(e, "accuracy"), num_of(e, "loss")};
    }
    r->curve = p;
    r->n_curve = n;
}

static void read_tta(struct xpb_results_run *out, xpb_arena *arena, const json_t *o)
{
    struct xpb_results_tta *t = &out->tta;
    const json_t *norm = object_of(o, "normalisation");
    out->has_tta = o != NULL;
    *t = (struct xpb_results_tta){
        .dataset = str_of(o, "dataset"),
        .train_samples = int_of(o, "train_samples"),
        .test_samples = int_of(o, "test_samples"),
        .max_epochs = int_of(o, "max_epochs"),
        .target = num_of(o, "target"),
        .eval_every = num_of(o, "eval_every"),
        .reference_epochs = num_of(o, "reference_epochs"),
        .norm_mean = num_of(norm, "mean"),
        .norm_std = num_of(norm, "std"),
        .seconds = read_tta_score(object_of(o, "seconds")),
        .joules = read_tta_score(object_of(o, "joules")),
    };
    const json_t *a = array_of(o, "runs");
    size_t n = a ? json_array_size(a) : 0;
    struct xpb_results_tta_run *r = n ? xpb_arena_alloc(arena, n * sizeof *r) : NULL;
    if (!r)
        return;
    for (size_t i = 0; i < n; i++)
        read_tta_run(&r[i], arena, json_array_get(a, i));
    t->runs = r;
    t->n_runs = n;
}

xpb_status xpb_results_view_run(struct xpb_results_run *out, xpb_arena *arena, const json_t *run,
                                int64_t version)
{
    (void)version; /* keys a version lacks are absent in its documents: nothing to tell apart */
    memset(out, 0, sizeof *out);
    const json_t *config = object_of(run, "config"), *model = object_of(run, "model");
    const json_t *device = object_of(run, "device"), *metrics = object_of(run, "metrics");
    const json_t *ver = object_of(run, "verification");
    out->id = str_of(run, "id");
    out->status = str_of(run, "status");
    out->error = str_of(run, "error");
    out->ok = out->status && strcmp(out->status, "ok") == 0;
    out->has_config = config != NULL;
    read_config(&out->config, arena, config);
    out->has_model = model != NULL;
    out->model = (struct xpb_results_model){int_of(model, "parameters"),
                                            int_of(model, "flops_per_sample_forward"),
                                            int_of(model, "flops_per_sample_train"),
                                            int_of(model, "layers"),
                                            int_of(model, "bytes_per_sample"),
                                            int_of(model, "tokens_per_sample"),
                                            int_of(model, "flops_per_token_forward"),
                                            int_of(model, "flops_per_token_train")};
    out->has_device = device != NULL;
    read_device(&out->device, arena, device);
    out->has_metrics = metrics != NULL;
    read_metrics(&out->metrics, arena, metrics);
    out->has_verification = ver != NULL;
    out->verification = (struct xpb_results_verification){
        bool_of(ver, "requested"), bool_of(ver, "verified"), str_of(ver, "reference"),
        str_of(ver, "message"), num_of(ver, "max_rel_error")};
    read_profile(out, arena, array_of(run, "profile"));
    read_tta(out, arena, object_of(run, "tta"));
    return xpb_arena_failed(arena) ? XPB_OUT_OF_MEMORY : XPB_OK;
}

/* ---- the document ---- */

static void read_environment(struct xpb_results_environment *e, xpb_arena *arena, const json_t *o)
{
    const json_t *cpu = object_of(o, "cpu");
    const json_t *accs = array_of(o, "accelerators"), *plugins = array_of(o, "plugins");
    e->os = str_of(o, "os");
    e->kernel = str_of(o, "kernel");
    e->compiler = str_of(o, "compiler");
    e->cpu.model = str_of(cpu, "model");
    e->cpu.cores = int_of(cpu, "cores");
    e->cpu.logical_cpus = int_of(cpu, "logical_cpus");
    e->cpu.flags = strings_of(arena, array_of(cpu, "flags"), &e->cpu.n_flags);
    e->memory_bytes = int_of(o, "memory_bytes");
    e->libraries = pairs_of(arena, object_of(o, "libraries"), &e->n_libraries);
    e->n_accelerators = json_array_size(accs);
    struct xpb_results_accelerator *a = xpb_arena_alloc(arena, e->n_accelerators * sizeof *a);
    for (size_t i = 0; a && i < e->n_accelerators; i++) {
        const json_t *x = json_array_get(accs, i);
        a[i] = (struct xpb_results_accelerator){str_of(x, "name"), str_of(x, "driver")};
    }
    e->accelerators = a;
    e->n_plugins = json_array_size(plugins);
    struct xpb_results_plugin *p = xpb_arena_alloc(arena, e->n_plugins * sizeof *p);
    for (size_t i = 0; p && i < e->n_plugins; i++) {
        const json_t *x = json_array_get(plugins, i);
        p[i] =
            (struct xpb_results_plugin){str_of(x, "name"), str_of(x, "kind"), str_of(x, "version"),
                                        str_of(x, "abi"), str_of(x, "path")};
    }
    e->plugins = p;
}

static void read_scenario(struct xpb_results_scenario *s, xpb_arena *arena, const json_t *o)
{
    s->path = str_of(o, "path");
    s->name = str_of(o, "name");
    s->sha256 = str_of(o, "sha256");
    s->overrides = strings_of(arena, array_of(o, "overrides"), &s->n_overrides);
    s->has_baseline = json_object_get(o, "baseline") != NULL;
    s->baseline = str_of(o, "baseline");
}

/* The document's comparisons, with the runs they name resolved. */
static void read_comparisons(struct xpb_results_doc *v, const json_t *a)
{
    v->has_comparisons = a != NULL;
    v->n_comparisons = json_array_size(a);
    struct xpb_results_comparison *c = xpb_arena_alloc(&v->arena, v->n_comparisons * sizeof *c);
    for (size_t i = 0; c && i < v->n_comparisons; i++) {
        const json_t *e = json_array_get(a, i);
        c[i] = (struct xpb_results_comparison){i,
                                               str_of(e, "kind"),
                                               str_of(e, "baseline"),
                                               str_of(e, "candidate"),
                                               str_of(e, "metric"),
                                               num_of(e, "speedup"),
                                               num_of(e, "ci95_low"),
                                               num_of(e, "ci95_high"),
                                               bool_of(e, "significant"),
                                               NULL,
                                               NULL};
        c[i].base_run = c[i].baseline ? xpb_results_find_run(v, c[i].baseline) : NULL;
        c[i].cand_run = c[i].candidate ? xpb_results_find_run(v, c[i].candidate) : NULL;
    }
    v->comparisons = c;
}

xpb_status xpb_results_view(struct xpb_results_doc *out, const json_t *doc)
{
    memset(out, 0, sizeof *out);
    const json_t *tool = object_of(doc, "tool"), *runs = array_of(doc, "runs");
    out->schema_version = int_of(doc, "schema_version");
    out->created = str_of(doc, "created");
    out->tool_name = str_of(tool, "name");
    out->tool_version = str_of(tool, "version");
    out->interrupted = bool_of(doc, "interrupted");
    read_scenario(&out->scenario, &out->arena, object_of(doc, "scenario"));
    read_environment(&out->environment, &out->arena, object_of(doc, "environment"));
    out->has_runs = runs != NULL;
    out->n_runs = json_array_size(runs);
    struct xpb_results_run *r = xpb_arena_alloc(&out->arena, out->n_runs * sizeof *r);
    for (size_t i = 0; r && i < out->n_runs; i++) {
        if (xpb_results_view_run(&r[i], &out->arena, json_array_get(runs, i),
                                 out->schema_version) != XPB_OK)
            break;
        r[i].index = i;
    }
    out->runs = r;
    read_comparisons(out, array_of(doc, "comparisons"));
    return xpb_arena_failed(&out->arena) ? XPB_OUT_OF_MEMORY : XPB_OK;
}

void xpb_results_view_free(struct xpb_results_doc *v)
{
    if (v)
        xpb_arena_free(&v->arena);
}

const struct xpb_results_run *xpb_results_find_run(const struct xpb_results_doc *v, const char *id)
{
    for (size_t i = 0; v->runs && i < v->n_runs; i++)
        if (v->runs[i].id && strcmp(v->runs[i].id, id) == 0)
            return &v->runs[i];
    return NULL;
}

const char *xpb_results_pair_get(const struct xpb_results_pair *pairs, size_t n, const char *key)
{
    for (size_t i = 0; pairs && i < n; i++)
        if (strcmp(pairs[i].key, key) == 0)
            return pairs[i].value;
    return NULL;
}

int xpb_results_run_fuses(const struct xpb_results_run *run)
{
    if (!run->device.has_capabilities)
        return -1;
    for (size_t i = 0; i < run->device.n_capabilities; i++)
        if (run->device.capabilities[i] && strcmp(run->device.capabilities[i], "fusion") == 0)
            return 1;
    return 0;
}

int xpb_results_run_emulated(const struct xpb_results_run *run)
{
    const char *p = run->config.precision
                        ? xpb_results_pair_get(run->device.precisions, run->device.n_precisions,
                                               run->config.precision)
                        : NULL;
    return p && strcmp(p, "emulated") == 0;
}

int xpb_results_run_finished(const struct xpb_results_run *run)
{
    return run->ok && run->metrics.throughput.median > 0;
}

int64_t xpb_results_run_world_size(const struct xpb_results_run *run)
{
    return run->config.world_size != XPB_RESULTS_NO_INT ? run->config.world_size : 1;
}
