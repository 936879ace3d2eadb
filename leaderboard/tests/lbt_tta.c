/* Results documents of schema version 3 with time-to-accuracy runs (see lbt_support.h), their
 * "tta" objects written by core's own writer (run/tta_record.c), as `xpubench run` writes them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbt_support.h"
#include "run/tta_record.h"

static void die(const char *what)
{
    fprintf(stderr, "lbt_tta: %s\n", what);
    abort();
}

/* The "tta" object of t: each run's curve evaluated every quarter epoch up to its epochs to
 * target (or max_epochs), the accuracy rising linearly to the target (or to 90% of it). */
static json_t *tta_json(const struct lbt_tta *t)
{
    xpb_run_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.model = (char *)t->model;
    cfg.target = t->target;
    cfg.eval_every = 0.25;
    cfg.max_epochs = 10;
    xpb_dataset ds;
    memset(&ds, 0, sizeof ds);
    ds.name = "fashion-mnist";
    ds.count[0] = 60000;
    ds.count[1] = 10000;
    ds.mean = 0.286;
    ds.std = 0.353;
    xpb_tta_result res;
    xpb_tta_result_init(&res, &cfg, &ds);
    for (size_t i = 0; i < t->n_runs; i++) {
        xpb_tta_run *r = xpb_tta_result_add(&res);
        if (!r)
            die("out of memory");
        int converged = !isnan(t->seconds[i]);
        double epochs = converged ? t->epochs[i] : cfg.max_epochs;
        double seconds = converged ? t->seconds[i] : 10 * epochs;
        double top = converged ? t->target : 0.9 * t->target;
        size_t points = (size_t)ceil(epochs / cfg.eval_every);
        for (size_t k = 1; k <= points; k++) {
            double e = k == points ? epochs : (double)k * cfg.eval_every;
            if (xpb_tta_run_point(r, e, seconds * e / epochs, top * e / epochs, 0.5) != 0)
                die("out of memory");
        }
        r->seed = i;
        r->converged = converged;
        r->stopped_early = t->stopped_early[i];
        r->seconds = converged ? seconds : NAN;
        r->epochs = converged ? epochs : NAN;
        r->steps = (uint64_t)(epochs * 60000 / 64);
        r->samples = r->steps * 64;
        r->joules = converged && t->watts > 0 ? t->watts * seconds : NAN;
        r->energy_source = t->watts > 0 ? "rapl" : NULL;
        r->init_seconds = 1.5;
        r->data_wait_seconds = 0.01 * seconds;
    }
    json_t *j = xpb_tta_result_json(&res);
    xpb_tta_result_free(&res);
    if (!j)
        die("xpb_tta_result_json");
    return j;
}

json_t *lbt_doc_v3(const char *cpu_model, const struct lbt_run *runs, size_t n_runs,
                   const struct lbt_tta *tta, size_t n_tta, unsigned nonce)
{
    struct lbt_run all[64];
    struct lbt_v2 kinds[64];
    if (n_runs + n_tta > 64)
        die("too many runs");
    for (size_t i = 0; i < n_runs; i++) {
        all[i] = runs[i];
        kinds[i] = (struct lbt_v2){"cpu", 0, 0};
    }
    for (size_t i = 0; i < n_tta; i++) { /* a finished run, made a tta run below */
        const struct lbt_tta *t = &tta[i];
        all[n_runs + i] = (struct lbt_run){t->id,        t->model,   t->variant, "tta",
                                           t->precision, t->backend, t->device,  t->batch,
                                           100.0,        0.01,       0,          NULL};
        kinds[n_runs + i] = (struct lbt_v2){t->kind, 0, 0};
    }
    json_t *doc = lbt_doc_v2(cpu_model, NULL, all, kinds, n_runs + n_tta, nonce);
    json_object_set_new(doc, "schema_version", json_integer(3));
    json_t *arr = json_object_get(doc, "runs");
    for (size_t i = 0; i < n_tta; i++) {
        json_t *run = json_array_get(arr, n_runs + i);
        json_t *config = json_object_get(run, "config");
        json_object_del(run, "metrics"); /* a tta run has its tta object instead */
        json_object_set_new(config, "data", json_string("fashion-mnist"));
        json_object_set_new(config, "transfer", json_string("streamed"));
        json_object_set_new(config, "repeats", json_integer(1));
        json_object_set_new(run, "tta", tta_json(&tta[i]));
    }
    return doc;
}
