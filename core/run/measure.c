/* The timed part of a run (see measure.h). */
#include "measure.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "energy.h"
#include "progress.h"

static int push_step(xpb_timing *t, double s)
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

xpb_status xpb_measure_warmup(xpb_session *s, const xpb_run_config *cfg,
                              const xpb_runner_opts *opts, xpb_err *err)
{
    for (uint32_t w = 0; w < cfg->warmup; w++) {
        if (opts->stop && *opts->stop)
            return xpb_err_set(err, XPB_INTERRUPTED, "interrupted during warm-up");
        char detail[64];
        snprintf(detail, sizeof detail, "warm-up %u/%u", w + 1, cfg->warmup);
        xpb_progress_update(opts->label, 0, detail);
        xpb_status st = xpb_session_step(s, NULL, err);
        if (st)
            return st;
    }
    return XPB_OK;
}

/* The timed repeats. Returns XPB_INTERRUPTED when opts->stop was raised. */
static xpb_status timed_repeats(xpb_timing *t, xpb_session *s, xpb_stream *stream,
                                const xpb_run_config *cfg, const xpb_runner_opts *opts,
                                xpb_err *err)
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
            if (stream && (st = xpb_stream_push(stream, err)))
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

xpb_status xpb_measure_repeats(xpb_timing *t, xpb_session *s, xpb_stream *stream,
                               const xpb_run_config *cfg, const xpb_runner_opts *opts, xpb_err *err)
{
    memset(t, 0, sizeof *t);
    t->loss_first = t->loss_last = NAN;
    t->repeat_seconds = calloc(cfg->repeats, sizeof *t->repeat_seconds);
    t->repeat_steps = calloc(cfg->repeats, sizeof *t->repeat_steps);
    if (!t->repeat_seconds || !t->repeat_steps)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    double e0 = 0, e1 = 0;
    const char *source = NULL;
    int have_energy = energy_now(&e0, &source, s) == 0;
    xpb_status st = timed_repeats(t, s, stream, cfg, opts, err);
    if (st)
        return st;
    if (have_energy && energy_now(&e1, &source, s) == 0) {
        t->joules = strcmp(source, "rapl") == 0 ? xpb_rapl_delta(e0, e1) : e1 - e0;
        t->energy_source = t->joules > 0 ? source : NULL;
    }
    return XPB_OK;
}

void xpb_timing_free(xpb_timing *t)
{
    free(t->step_seconds);
    free(t->repeat_seconds);
    free(t->repeat_steps);
    memset(t, 0, sizeof *t);
}
