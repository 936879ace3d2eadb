/* One batch sweep analysed (see report_sweep.h): memory by the physics (a line unless the data
 * reject it), step time by AICc, each with its band; the hold-out check of each memory fit;
 * the largest batch that fits from the memory that allows the fewest; where throughput
 * saturates, concluded only from a fit that explains its points (R² >= XPB_FIT_R2_MIN) of runs
 * no other process disturbed. */
#include <math.h>
#include <string.h>

#include "report/report_describe.h"
#include "report/report_sweep.h"

#define DESC                                                                                       \
    (XPB_COL_FILE | XPB_COL_MODEL | XPB_COL_MODE | XPB_COL_PRECISION | XPB_COL_BACKEND |           \
     XPB_COL_FUSION | XPB_COL_THREADS)
#define HOLDOUT_MIN_BATCHES 4
#define TEXT_(x) #x
#define TEXT(x) TEXT_(x)

/* Whether `run` is the first run of its backend in its document: that run also pays what a
 * process pays once (the backend's threads, its JIT, its peak measurement), which its memory
 * growth holds. */
static int first_of_backend(const xpb_report *r, const xpb_rrun *run)
{
    for (size_t i = 0; i < r->runs->n; i++) {
        const xpb_rrun *o = &r->runs->items[i];
        if (o->doc == run->doc && o->v->has_metrics && strcmp(o->backend, run->backend) == 0)
            return o == run;
    }
    return 0;
}

/* The points (x, y) whose y is a number and x is below `below`, into bx, by; their count. */
static size_t usable(double *bx, double *by, const double *x, const double *y, size_t n,
                     double below)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(y[i]) && x[i] < below) {
            bx[m] = x[i];
            by[m++] = y[i];
        }
    return m;
}

/* Fits memory on the batches below the largest and predicts the largest. */
static void holdout(xpb_sweep_memory *m, const xpb_batch_sweep *w, double *bx, double *by)
{
    size_t k = usable(bx, by, w->batch, m->y, w->n, (double)w->hi), at = 0;
    double sum = 0;
    for (size_t i = 0; i < w->n; i++)
        if (w->batch[i] >= (double)w->hi && !isnan(m->y[i])) {
            sum += m->y[i];
            at++;
        }
    xpb_fit f;
    size_t distinct = 0;
    for (size_t i = 0; i < k; i++)
        distinct += i == 0 || bx[i] != bx[i - 1];
    if (at == 0 || distinct + 1 < HOLDOUT_MIN_BATCHES ||
        xpb_fit_poly(&f, bx, by, k, XPB_FIT_MAX_DEGREE, XPB_FIT_LINEAR_UNLESS_REJECTED) != XPB_OK)
        return;
    m->have_holdout = 1;
    m->holdout_batch = w->hi;
    m->holdout_predicted = xpb_fit_eval(&f, (double)w->hi);
    m->holdout_measured = sum / (double)at;
}

/* The memory `key` of every run into m->y, its fit, hold-out check and largest batch. */
static xpb_status memory(xpb_report *r, xpb_batch_sweep *w, xpb_sweep_memory *m,
                         enum xpb_results_field key, const char *name, int device_memory)
{
    const xpb_rgroup *g = w->group;
    memset(m, 0, sizeof *m);
    m->key = key;
    m->name = name;
    m->largest = m->largest_lo = m->largest_hi = -1;
    m->y = xpb_arena_alloc(&r->arena, 3 * w->n * sizeof *m->y);
    if (!m->y)
        return XPB_OUT_OF_MEMORY;
    double *bx = m->y + w->n, *by = bx + w->n;
    size_t have = 0;
    for (size_t i = 0; i < w->n; i++) {
        m->y[i] = xpb_results_field(g->runs[i]->v, key);
        have += !isnan(m->y[i]);
        if (key == XPB_RF_HOST_RUN_PEAK && !isnan(m->y[i]) && first_of_backend(r, g->runs[i])) {
            m->y[i] = NAN;
            m->left_out = g->runs[i]->batch;
        }
    }
    size_t k = usable(bx, by, w->batch, m->y, w->n, INFINITY);
    m->have = have == w->n && k >= 2 &&
              xpb_fit_poly(&m->fit, bx, by, k, XPB_FIT_MAX_DEGREE,
                           XPB_FIT_LINEAR_UNLESS_REJECTED) == XPB_OK;
    if (!m->have)
        return XPB_OK;
    holdout(m, w, bx, by);
    if (!(w->budget > 0))
        m->no_conclusion = "no budget";
    else if (device_memory)
        m->no_conclusion = "the device's memory, whose size the file does not say";
    else if (m->fit.r2 < XPB_FIT_R2_MIN)
        m->no_conclusion = "R² below " TEXT(XPB_FIT_R2_MIN) ": the fit explains too little";
    if (m->no_conclusion)
        return XPB_OK;
    m->largest = xpb_fit_largest_within(&m->fit, w->budget, XPB_BATCH_LIMIT, 0);
    m->largest_lo = xpb_fit_largest_within(&m->fit, w->budget, XPB_BATCH_LIMIT, 1);
    m->largest_hi = xpb_fit_largest_within(&m->fit, w->budget, XPB_BATCH_LIMIT, -1);
    return XPB_OK;
}

/* Step time by AICc, and where throughput saturates when the fit allows a conclusion. */
static xpb_status step(xpb_report *r, xpb_batch_sweep *w)
{
    size_t steps = 0;
    for (size_t i = 0; i < w->n; i++)
        steps += !isnan(w->step[i]);
    w->have_step = steps == w->n && xpb_fit_poly(&w->step_fit, w->batch, w->step, w->n,
                                                 XPB_FIT_MAX_DEGREE, XPB_FIT_AICC) == XPB_OK;
    if (!w->have_step)
        return XPB_OK;
    char r2[48];
    xpb_report_format_number(r2, sizeof r2, w->step_fit.r2);
    if (w->step_fit.r2 < XPB_FIT_R2_MIN)
        w->no_conclusion =
            xpb_arena_printf(&r->arena, "no conclusion: R² %s < %g, the fit explains too little",
                             r2, XPB_FIT_R2_MIN);
    else if (w->disturbed)
        w->no_conclusion = xpb_arena_printf(
            &r->arena, "no conclusion: %zu of %zu runs disturbed by other processes", w->disturbed,
            w->n);
    else if (xpb_fit_saturation(&w->saturation, &w->step_fit, w->lo, w->hi) == XPB_OK)
        w->have_saturation = 1;
    else
        return XPB_OK; /* a fit that predicts no time: nothing to say */
    return w->have_saturation || w->no_conclusion ? XPB_OK : XPB_OUT_OF_MEMORY;
}

xpb_status xpb_batch_sweep_analyse(xpb_report *r, xpb_batch_sweep *w, const xpb_rgroup *g)
{
    memset(w, 0, sizeof *w);
    w->group = g;
    w->n = g->n;
    w->label = xpb_rrun_label(r, g->runs[0], DESC);
    w->batch = xpb_arena_alloc(&r->arena, 2 * g->n * sizeof *w->batch);
    if (!w->batch || !w->label)
        return XPB_OUT_OF_MEMORY;
    w->step = w->batch + g->n;
    w->lo = g->runs[0]->batch;
    w->hi = g->runs[g->n - 1]->batch;
    for (size_t i = 0; i < g->n; i++) {
        w->batch[i] = (double)g->runs[i]->batch;
        w->step[i] = g->runs[i]->v->metrics.step_time_s.p50;
        w->disturbed += (size_t)g->runs[i]->flagged;
    }
    int64_t mem = r->views[g->runs[0]->doc].environment.memory_bytes;
    w->budget = r->opts.memory_budget_bytes > 0 ? r->opts.memory_budget_bytes
                : mem != XPB_RESULTS_NO_INT     ? (double)mem
                                                : 0;
    const char *kind = g->runs[0]->v->device.kind;
    int on_device = kind && strcmp(kind, "cpu") != 0 && strcmp(kind, "unknown") != 0 &&
                    !(r->opts.memory_budget_bytes > 0);
    xpb_status st = memory(r, w, &w->plan, XPB_RF_DEVICE_PEAK, "backend plan", on_device);
    if (st == XPB_OK)
        st = memory(r, w, &w->process, XPB_RF_HOST_RUN_PEAK, "process", 0);
    if (st != XPB_OK)
        return st;
    /* the memory that allows the fewest samples decides */
    const xpb_sweep_memory *m[2] = {&w->process, &w->plan};
    for (int i = 0; i < 2; i++)
        if (m[i]->largest >= 0 && (!w->decides || m[i]->largest < w->decides->largest))
            w->decides = m[i];
    return step(r, w);
}
