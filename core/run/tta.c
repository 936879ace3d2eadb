/* Time-to-accuracy runs (see tta.h): for each run, a training program and an evaluation program
 * of the same model on the same backend, the input pipeline feeding the first, the weights
 * copied into the second for every evaluation. */
#include "run/tta.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "data/batcher.h"
#include "data/dataset.h"
#include "program/model_params.h"
#include "program/model_program.h"
#include "run/meter.h"
#include "run/progress.h"
#include "run/run_record.h"
#include "run/session.h"
#include "run/tta_record.h"
#include "run/tta_stop.h"

/* A program and its session, with the ids of the tensors the loop reads and writes. */
typedef struct side {
    xpb_model_program *mp;
    xpb_session s;
    uint32_t images, labels, logits; /* XPB_NO_TENSOR when absent */
} side;

static void side_free(side *d)
{
    xpb_session_close(&d->s);
    xpb_model_program_free(d->mp);
    memset(d, 0, sizeof *d);
}

/* The INPUT tensors "images" (F32) and "labels" (I32) and the F32 OUTPUT logits. */
static xpb_status find_tensors(side *d, const char *model, xpb_err *err)
{
    d->images = d->labels = d->logits = XPB_NO_TENSOR;
    for (uint32_t t = 0; t < d->mp->n_tensors; t++) {
        const xpb_tensor_desc *x = &d->mp->tensors[t];
        if (x->role == XPB_ROLE_INPUT && strcmp(x->name, "images") == 0)
            d->images = t;
        else if (x->role == XPB_ROLE_INPUT && strcmp(x->name, "labels") == 0)
            d->labels = t;
        else if (x->role == XPB_ROLE_OUTPUT && x->dtype == XPB_DTYPE_F32 && x->ndim == 2)
            d->logits = t;
    }
    if (d->images == XPB_NO_TENSOR || d->labels == XPB_NO_TENSOR)
        return xpb_err_set(err, XPB_UNSUPPORTED,
                           "model '%s': time to accuracy needs inputs 'images' and 'labels' (an "
                           "image classifier)",
                           model);
    return XPB_OK;
}

/* The model's parameters with the dataset's input channels and size added where the model
 * declares them and the scenario did not set them (conv6, resnet18 on 1x28x28). */
static xpb_kv *with_input_params(size_t *n, const xpb_model_api *model, const xpb_run_config *cfg,
                                 const xpb_dataset *ds, char (*text)[16])
{
    xpb_kv *kv = calloc(cfg->n_params + 2, sizeof *kv);
    if (!kv)
        return NULL;
    *n = 0;
    for (size_t i = 0; i < cfg->n_params; i++)
        kv[(*n)++] = cfg->params[i];
    static const char *const names[2] = {"in_channels", "image_size"};
    const uint32_t values[2] = {ds->channels, ds->height};
    for (int k = 0; k < 2; k++) {
        int given = 0;
        for (size_t i = 0; i < cfg->n_params; i++)
            given |= strcmp(cfg->params[i].key, names[k]) == 0;
        if (given || !xpb_model_param_decl(model, names[k]))
            continue;
        snprintf(text[k], 16, "%u", values[k]);
        kv[(*n)++] = (xpb_kv){(char *)names[k], text[k]};
    }
    return kv;
}

/* Builds program `mode` at `batch` for seed `seed` and compiles it on the run's backend. */
static xpb_status open_side(side *d, const xpb_plugin_descriptor *plugin,
                            const xpb_model_api *model, const xpb_run_config *cfg,
                            const xpb_dataset *ds, uint32_t mode, uint32_t batch, uint64_t seed,
                            xpb_err *err)
{
    char text[2][16];
    size_t n = 0;
    xpb_kv *kv = with_input_params(&n, model, cfg, ds, text);
    if (!kv)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    xpb_program_options o = xpb_run_config_program(cfg);
    o.mode = mode;
    o.batch = batch;
    o.seed = seed;
    o.params = kv;
    o.n_params = n;
    o.world_size = 1; /* one process (data-parallel tta: docs/results.md) */
    o.rank = 0;
    xpb_status st = xpb_model_program_create(&d->mp, model, &o, err);
    free(kv);
    if (st)
        return st;
    if ((st = find_tensors(d, cfg->model, err)))
        return st;
    if (mode == XPB_MODE_INFERENCE && d->logits == XPB_NO_TENSOR)
        return xpb_err_set(err, XPB_UNSUPPORTED, "model '%s' has no [batch, classes] output",
                           cfg->model);
    xpb_compile_options copts = {.struct_size = sizeof copts,
                                 .precision = cfg->precision,
                                 .fusion = cfg->fusion,
                                 .threads = cfg->threads,
                                 .transfer = XPB_TRANSFER_STREAMED};
    return xpb_session_open_for_run(&d->s, plugin, cfg->device, d->mp, &copts,
                                    (int)cfg->allow_emulated, err);
}

/* The evaluation batch: XPB_TTA_EVAL_BATCH, or the whole test split when it is smaller. */
static uint32_t eval_batch(uint32_t test_samples)
{
    return test_samples && test_samples < XPB_TTA_EVAL_BATCH ? test_samples : XPB_TTA_EVAL_BATCH;
}

/* Writes one assembled batch into the side's inputs. */
static xpb_status write_batch(side *d, const xpb_batch *b, xpb_err *err)
{
    const xpb_tensor_desc *im = &d->mp->tensors[d->images], *lb = &d->mp->tensors[d->labels];
    xpb_status st = d->s.api->write(d->s.exe, d->images, b->images, xpb_tensor_bytes(im));
    if (st == XPB_OK)
        st = d->s.api->write(d->s.exe, d->labels, b->labels, xpb_tensor_bytes(lb));
    if (st)
        return xpb_err_set(err, st, "writing a batch: %s", d->s.api->exe_last_error(d->s.exe));
    return XPB_OK;
}

/* Copies every parameter and state tensor of the evaluation program from the training one. */
static xpb_status copy_weights(side *eval, side *train, float *buf, xpb_err *err)
{
    for (uint32_t t = 0; t < eval->mp->n_tensors; t++) {
        const xpb_tensor_desc *d = &eval->mp->tensors[t];
        if (d->role != XPB_ROLE_PARAM && d->role != XPB_ROLE_STATE)
            continue;
        uint32_t src = XPB_NO_TENSOR;
        for (uint32_t k = 0; k < train->mp->n_tensors && src == XPB_NO_TENSOR; k++)
            if (strcmp(train->mp->tensors[k].name, d->name) == 0)
                src = k;
        if (src == XPB_NO_TENSOR)
            continue; /* a constant of inference only */
        xpb_status st = xpb_session_read(&train->s, src, buf, err);
        if (st == XPB_OK && (st = eval->s.api->write(eval->s.exe, t, buf, xpb_tensor_bytes(d))))
            xpb_err_set(err, st, "copying '%s' for evaluation: %s", d->name,
                        eval->s.api->exe_last_error(eval->s.exe));
        if (st)
            return st;
    }
    return XPB_OK;
}

/* The test accuracy of the training program's current weights. */
static xpb_status evaluate(double *accuracy, side *eval, side *train, xpb_batcher *b, float *buf,
                           xpb_err *err)
{
    xpb_status st = copy_weights(eval, train, buf, err);
    if (st)
        return st;
    const xpb_tensor_desc *lg = &eval->mp->tensors[eval->logits];
    int64_t classes = lg->dims[1];
    uint32_t batches = xpb_batcher_test_pass(b), correct = 0, total = 0;
    for (uint32_t k = 0; k < batches; k++) {
        xpb_batch batch;
        if ((st = xpb_batcher_next(&batch, b)) || (st = write_batch(eval, &batch, err)) ||
            (st = xpb_session_step(&eval->s, NULL, err)) ||
            (st = xpb_session_read(&eval->s, eval->logits, buf, err)))
            return st;
        for (uint32_t i = 0; i < batch.count; i++) {
            const float *row = buf + (size_t)i * (size_t)classes;
            int64_t best = 0;
            for (int64_t c = 1; c < classes; c++)
                if (row[c] > row[best])
                    best = c;
            correct += best == batch.labels[i];
        }
        total += batch.count;
    }
    *accuracy = total ? (double)correct / total : 0;
    return XPB_OK;
}

/* One run from its seeded initialisation to the target or max_epochs, into *r; with `describe`,
 * the model and the device it used are set in that run object. XPB_INTERRUPTED as soon as a step
 * finds *stop raised (a run of an hour must not make Ctrl-C wait for its end). */
static xpb_status one_run(xpb_tta_run *r, json_t *describe, json_t *config,
                          const xpb_plugin_descriptor *plugin, const xpb_model_api *model,
                          const xpb_run_config *cfg, const xpb_dataset *ds, uint64_t seed,
                          const char *label, volatile sig_atomic_t *stop, xpb_err *err)
{
    side train = {0}, eval = {0};
    xpb_batcher *b = NULL, *eb = NULL; /* training batches; test batches */
    float *buf = NULL;
    xpb_status st;
    r->seed = seed;
    double t_init = xpb_now();
    if ((st = open_side(&train, plugin, model, cfg, ds, XPB_MODE_TRAIN, cfg->batch, seed, err)) ||
        (st = open_side(&eval, plugin, model, cfg, ds, XPB_MODE_INFERENCE,
                        eval_batch(ds->count[XPB_SPLIT_TEST]), seed, err)))
        goto close_sides;
    size_t largest = 0;
    for (uint32_t t = 0; t < train.mp->n_tensors; t++)
        if (xpb_tensor_bytes(&train.mp->tensors[t]) > largest)
            largest = xpb_tensor_bytes(&train.mp->tensors[t]);
    for (uint32_t t = 0; t < eval.mp->n_tensors; t++)
        if (xpb_tensor_bytes(&eval.mp->tensors[t]) > largest)
            largest = xpb_tensor_bytes(&eval.mp->tensors[t]);
    if (!(buf = malloc(largest ? largest : 4))) {
        st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
        goto close_sides;
    }
    if ((st = xpb_batcher_new(&b, ds, cfg->batch, 1, 0, seed, err)) ||
        (st = xpb_batcher_new(&eb, ds, eval_batch(ds->count[XPB_SPLIT_TEST]), 1, 0, seed, err)))
        goto close_sides;
    r->init_seconds = xpb_now() - t_init;
    if (describe) { /* the first run: what it built and opened goes in the run object */
        json_object_set_new(describe, "model", xpb_run_model_json(train.mp));
        json_object_set_new(describe, "device",
                            xpb_run_device_json(&train.s.info, xpb_plugin_caps(plugin)));
        if (config && train.mp->training)
            json_object_set_new(config, "optimizer", xpb_optimizer_json(train.mp, 0));
    }

    xpb_meter m;
    xpb_energy e = {0};
    xpb_meter_start(&m, &train.s, &e);
    double t0 = xpb_now();
    uint32_t batches = 0, classes = (uint32_t)eval.mp->tensors[eval.logits].dims[1];
    for (uint32_t epoch = 0; epoch < cfg->max_epochs && !r->converged; epoch++) {
        batches = xpb_batcher_train_epoch(b, epoch);
        uint32_t every = (uint32_t)fmax(1.0, round(cfg->eval_every * batches));
        for (uint32_t k = 0; k < batches && !r->converged; k++) {
            xpb_batch batch;
            if ((st = xpb_batcher_next(&batch, b)) || (st = write_batch(&train, &batch, err)) ||
                (st = xpb_session_step(&train.s, NULL, err)))
                goto stop_meter;
            r->steps++;
            r->samples += cfg->batch;
            if (stop && *stop) {
                st = xpb_err_set(err, XPB_INTERRUPTED,
                                 "interrupted %.2f epochs into the run of seed %llu; that run is "
                                 "not recorded",
                                 (double)r->steps / batches, (unsigned long long)seed);
                goto stop_meter;
            }
            if ((r->steps % every) != 0 && !(k + 1 == batches && epoch + 1 == cfg->max_epochs))
                continue;
            double accuracy, loss = NAN;
            if ((st = xpb_session_loss(&loss, &train.s, UINT32_MAX, err)) ||
                (st = evaluate(&accuracy, &eval, &train, eb, buf, err)))
                goto stop_meter;
            double at = xpb_now() - t0, epochs = (double)r->steps / batches;
            if ((st = xpb_tta_run_point(r, epochs, at, accuracy, loss))) {
                xpb_err_set(err, st, "out of memory");
                goto stop_meter;
            }
            char detail[200];
            const char *why = train.mp->n_losses ? xpb_tta_stop_reason(r, classes) : NULL;
            if (why) {
                r->stopped_early = why;
                snprintf(detail, sizeof detail,
                         "epoch %.2f: test accuracy %.4f, training loss %.4f: %s, this run stops",
                         epochs, accuracy, loss,
                         strcmp(why, "diverged") == 0
                             ? "diverged (the loss is not finite)"
                             : "stalled (chance accuracy, constant output)");
                xpb_progress_note(label, fmin(1.0, epochs / cfg->max_epochs), detail);
                goto stop_meter;
            }
            snprintf(detail, sizeof detail,
                     "epoch %.2f: test accuracy %.4f (target %.4f), training loss %.4f", epochs,
                     accuracy, cfg->target, loss);
            xpb_progress_note(label, fmin(1.0, epochs / cfg->max_epochs), detail);
            if (accuracy >= cfg->target) {
                r->converged = 1;
                r->seconds = at;
                r->epochs = epochs;
            }
        }
    }
stop_meter:
    xpb_meter_stop(&m, &e);
    r->data_wait_seconds = xpb_batcher_waited(b) + xpb_batcher_waited(eb);
    r->joules = e.source && r->converged ? e.joules : NAN;
    r->energy_source = e.source;
close_sides:
    xpb_batcher_free(b);
    xpb_batcher_free(eb);
    free(buf);
    side_free(&eval);
    side_free(&train);
    return st;
}

xpb_status xpb_tta_measure(json_t *run, json_t *config, const xpb_registry *registry,
                           const xpb_run_config *cfg, const xpb_runner_opts *opts, xpb_err *err)
{
    const xpb_model_api *model = xpb_registry_model(registry, cfg->model);
    const xpb_plugin_descriptor *plugin =
        xpb_registry_find(registry, XPB_PLUGIN_BACKEND, cfg->backend);
    if (!model)
        return xpb_err_set(err, XPB_NOT_FOUND, "model '%s' is not loaded (see `xpubench list`)",
                           cfg->model);
    if (!plugin)
        return xpb_err_set(err, XPB_UNSUPPORTED,
                           "backend '%s' is not loaded on this machine (see `xpubench list`)",
                           cfg->backend);
    if (opts->par && opts->par->comm.size > 1)
        return xpb_err_set(err, XPB_UNSUPPORTED,
                           "mode tta runs in one process for now (docs/results.md)");
    if (!cfg->data || strcmp(cfg->data, "synthetic") == 0)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT,
                           "mode tta needs a real dataset: set data: fashion-mnist");
    xpb_dataset ds;
    xpb_progress_update(opts->label, 0, "loading the dataset");
    xpb_status st = xpb_dataset_open(&ds, cfg->data, cfg->data_dir, err);
    if (st)
        return st;
    xpb_tta_result res;
    xpb_tta_result_init(&res, cfg, &ds);
    for (uint32_t k = 0; k < cfg->tta_runs && st == XPB_OK; k++) {
        if (opts->stop && *opts->stop) {
            st = xpb_err_set(err, XPB_INTERRUPTED, "interrupted after %u of %u runs", k,
                             cfg->tta_runs);
            break;
        }
        char label[300];
        snprintf(label, sizeof label, "%s run %u/%u", opts->label ? opts->label : "", k + 1,
                 cfg->tta_runs);
        xpb_tta_run *r = xpb_tta_result_add(&res);
        if (!r) {
            st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
            break;
        }
        st = one_run(r, k == 0 ? run : NULL, config, plugin, model, cfg, &ds, cfg->seed + k, label,
                     opts->stop, err);
        if (st == XPB_INTERRUPTED) /* neither converged nor not: scored as neither */
            xpb_tta_result_drop_last(&res);
    }
    xpb_progress_clear();
    if (st == XPB_OK || st == XPB_INTERRUPTED)
        json_object_set_new(run, "tta", xpb_tta_result_json(&res));
    xpb_tta_result_free(&res);
    xpb_dataset_close(&ds);
    return st;
}
