/* The record of time-to-accuracy runs (see tta_record.h). */
#include "run/tta_record.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <xpubench/status.h>

#include "run/tta_score.h"

void xpb_tta_result_init(xpb_tta_result *res, const xpb_run_config *cfg, const xpb_dataset *ds)
{
    memset(res, 0, sizeof *res);
    res->cfg = cfg;
    res->dataset = ds->name;
    res->mean = ds->mean;
    res->std = ds->std;
    res->train_samples = ds->count[XPB_SPLIT_TRAIN];
    res->test_samples = ds->count[XPB_SPLIT_TEST];
}

xpb_tta_run *xpb_tta_result_add(xpb_tta_result *res)
{
    xpb_tta_run *grown = realloc(res->runs, (res->n_runs + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    res->runs = grown;
    xpb_tta_run *r = &grown[res->n_runs++];
    memset(r, 0, sizeof *r);
    r->seconds = r->epochs = r->joules = NAN;
    return r;
}

void xpb_tta_result_drop_last(xpb_tta_result *res)
{
    if (res->n_runs)
        free(res->runs[--res->n_runs].curve);
}

int xpb_tta_run_point(xpb_tta_run *r, double epochs, double seconds, double accuracy, double loss)
{
    if (r->n_curve == r->cap_curve) {
        size_t cap = r->cap_curve ? 2 * r->cap_curve : 16;
        xpb_tta_point *grown = realloc(r->curve, cap * sizeof *grown);
        if (!grown)
            return XPB_OUT_OF_MEMORY;
        r->curve = grown;
        r->cap_curve = cap;
    }
    r->curve[r->n_curve++] = (xpb_tta_point){epochs, seconds, accuracy, loss};
    return XPB_OK;
}

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *run_json(const xpb_tta_run *r, double reference)
{
    json_t *j = json_object(), *curve = json_array();
    for (size_t i = 0; i < r->n_curve; i++)
        json_array_append_new(curve,
                              json_pack("{s:o,s:o,s:o,s:o}", "epochs", num(r->curve[i].epochs),
                                        "seconds", num(r->curve[i].seconds), "accuracy",
                                        num(r->curve[i].accuracy), "loss", num(r->curve[i].loss)));
    json_object_set_new(j, "seed", json_integer((json_int_t)r->seed));
    json_object_set_new(j, "converged", json_boolean(r->converged));
    json_object_set_new(j, "stopped_early",
                        r->stopped_early ? json_string(r->stopped_early) : json_null());
    json_object_set_new(j, "seconds", num(r->seconds));
    json_object_set_new(j, "epochs", num(r->epochs));
    json_object_set_new(j, "steps", json_integer((json_int_t)r->steps));
    json_object_set_new(j, "samples", json_integer((json_int_t)r->samples));
    json_object_set_new(j, "joules", num(r->joules));
    json_object_set_new(j, "energy_source",
                        r->energy_source ? json_string(r->energy_source) : json_null());
    json_object_set_new(j, "init_seconds", num(r->init_seconds));
    json_object_set_new(j, "data_wait_seconds", num(r->data_wait_seconds));
    json_object_set_new(j, "final_accuracy",
                        r->n_curve ? num(r->curve[r->n_curve - 1].accuracy) : json_null());
    json_object_set_new(
        j, "outside_reference",
        json_boolean(r->converged && xpb_tta_outside_reference(r->epochs, reference)));
    json_object_set_new(j, "curve", curve);
    return j;
}

static json_t *score_json(const xpb_tta_score *s)
{
    return json_pack("{s:o,s:I,s:I,s:I,s:o,s:o,s:o}", "mean", num(s->mean), "used",
                     (json_int_t)s->used, "converged", (json_int_t)s->converged, "runs",
                     (json_int_t)s->runs, "min", num(s->min), "max", num(s->max), "stdev",
                     num(s->stdev));
}

json_t *xpb_tta_result_json(const xpb_tta_result *res)
{
    const xpb_run_config *cfg = res->cfg;
    double ref = xpb_tta_reference_epochs(cfg->model, res->dataset, cfg->target);
    double *secs = calloc(res->n_runs ? res->n_runs : 1, sizeof *secs);
    double *joules = calloc(res->n_runs ? res->n_runs : 1, sizeof *joules);
    json_t *j = json_object(), *runs = json_array();
    if (!secs || !joules || !j || !runs) {
        free(secs);
        free(joules);
        json_decref(j);
        json_decref(runs);
        return NULL;
    }
    for (size_t i = 0; i < res->n_runs; i++) {
        const xpb_tta_run *r = &res->runs[i];
        secs[i] = r->converged ? r->seconds : INFINITY;
        joules[i] = r->converged ? r->joules : INFINITY;
        json_array_append_new(runs, run_json(r, ref));
    }
    xpb_tta_score ts, es;
    xpb_tta_olympic(&ts, secs, res->n_runs);
    xpb_tta_olympic(&es, joules, res->n_runs);
    json_object_set_new(j, "dataset", json_string(res->dataset));
    json_object_set_new(j, "train_samples", json_integer(res->train_samples));
    json_object_set_new(j, "test_samples", json_integer(res->test_samples));
    json_object_set_new(j, "normalisation",
                        json_pack("{s:o,s:o}", "mean", num(res->mean), "std", num(res->std)));
    json_object_set_new(j, "target", json_real(cfg->target));
    json_object_set_new(j, "eval_every", json_real(cfg->eval_every));
    json_object_set_new(j, "max_epochs", json_integer(cfg->max_epochs));
    json_object_set_new(j, "runs", runs);
    json_object_set_new(j, "seconds", score_json(&ts));
    json_object_set_new(j, "joules", score_json(&es));
    json_object_set_new(j, "reference_epochs", ref > 0 ? json_real(ref) : json_null());
    free(secs);
    free(joules);
    return j;
}

void xpb_tta_result_free(xpb_tta_result *res)
{
    for (size_t i = 0; i < res->n_runs; i++)
        free(res->runs[i].curve);
    free(res->runs);
    memset(res, 0, sizeof *res);
}
