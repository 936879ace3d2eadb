/* The timed part of a run (see measure.h). */
#include "measure.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "energy.h"
#include "progress.h"

static int push_step(xpb_timing *t, double s, double loss)
{
    if (t->n_steps == t->cap_steps) {
        size_t cap = t->cap_steps ? 2 * t->cap_steps : 256;
        double *grown = realloc(t->step_seconds, cap * sizeof *grown);
        if (!grown)
            return -1;
        t->step_seconds = grown;
        grown = realloc(t->step_loss, cap * sizeof *grown);
        if (!grown)
            return -1;
        t->step_loss = grown;
        t->cap_steps = cap;
    }
    t->step_loss[t->n_steps] = loss;
    t->step_seconds[t->n_steps++] = s;
    return 0;
}

/* The energy meter of a run: the backend's own when it has one and it answers, else RAPL. */
typedef struct meter {
    const xpb_session *s;
    int kind; /* 0 none, 1 backend, 2 RAPL */
    xpb_rapl rapl;
    double backend_j;
    double rapl_uj[XPB_RAPL_MAX_DOMAINS];
    double t0;
} meter;

/* Takes the first reading; on failure the meter is off and e->reason says why. */
static void meter_start(meter *m, const xpb_session *s, xpb_energy *e)
{
    memset(m, 0, sizeof *m);
    m->s = s;
    xpb_status (*read)(xpb_backend *, double *) =
        XPB_MEMBER_OR(s->api, xpb_backend_api, energy_read, NULL);
    m->t0 = xpb_now();
    if (read && read(s->backend, &m->backend_j) == XPB_OK) {
        m->kind = 1;
        return;
    }
    if (xpb_rapl_open(&m->rapl, getenv("XPB_POWERCAP_ROOT")) == 0 &&
        xpb_rapl_sample(&m->rapl, m->rapl_uj) == 0) {
        m->kind = 2;
        return;
    }
    if (read)
        snprintf(e->reason, sizeof e->reason, "the backend's meter failed: %.200s; host: %.80s",
                 s->api->last_error(s->backend), m->rapl.reason);
    else
        snprintf(e->reason, sizeof e->reason, "%s", m->rapl.reason);
}

/* Takes the second reading and fills *e. */
static void meter_stop(meter *m, xpb_energy *e)
{
    e->seconds = xpb_now() - m->t0;
    if (m->kind == 1) {
        double j;
        if (m->s->api->energy_read(m->s->backend, &j) == XPB_OK && j >= m->backend_j) {
            e->source = "backend";
            e->joules = j - m->backend_j;
        } else {
            snprintf(e->reason, sizeof e->reason, "the backend's meter failed at the end: %.200s",
                     m->s->api->last_error(m->s->backend));
        }
    } else if (m->kind == 2) {
        double uj[XPB_RAPL_MAX_DOMAINS];
        if (xpb_rapl_sample(&m->rapl, uj) == 0) {
            e->source = "rapl";
            e->joules = xpb_rapl_joules(&m->rapl, m->rapl_uj, uj, &e->package, &e->dram);
        } else {
            snprintf(e->reason, sizeof e->reason, "a RAPL counter could not be read at the end");
        }
    }
    if (e->source && !(e->joules > 0)) { /* a meter that did not move measured nothing */
        snprintf(e->reason, sizeof e->reason, "the %s meter did not advance", e->source);
        e->source = NULL;
    }
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
            double loss = NAN; /* read after the clock stopped: not part of the step */
            if (mp->n_losses && (st = xpb_session_loss(&loss, s, 0, err)))
                return st;
            if (push_step(t, t1 - t0, loss))
                return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
            t->backend_seconds += inside;
            t->wall_seconds += t1 - t0;
            if (r == 0 && steps == 0)
                t->loss_first = loss;
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
    if (t->n_steps)
        t->loss_last = t->step_loss[t->n_steps - 1];
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
    meter m;
    xpb_cpu_sample before, after;
    meter_start(&m, s, &t->energy);
    xpb_cpu_sample_now(&before);
    xpb_status st = timed_repeats(t, s, stream, cfg, opts, err);
    if (st)
        return st;
    xpb_cpu_sample_now(&after);
    meter_stop(&m, &t->energy);
    xpb_interference_between(&t->interference, &before, &after);
    return XPB_OK;
}

void xpb_timing_free(xpb_timing *t)
{
    free(t->step_seconds);
    free(t->step_loss);
    free(t->repeat_seconds);
    free(t->repeat_steps);
    memset(t, 0, sizeof *t);
}
