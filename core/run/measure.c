/* The timed part of a run (see measure.h). */
#include "run/measure.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "plugin/guard.h"
#include "parallel/agree.h"
#include "run/interference.h"
#include "run/meter.h"
#include "run/progress.h"

/* Appends a timed step: its time and loss, and each rank's time (`per_rank`, t->ranks). */
static int push_step(xpb_timing *t, double s, double loss, const double *per_rank)
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
        grown = realloc(t->rank_seconds, cap * t->ranks * sizeof *grown);
        if (!grown)
            return -1;
        t->rank_seconds = grown;
        t->cap_steps = cap;
    }
    memcpy(&t->rank_seconds[t->n_steps * t->ranks], per_rank, t->ranks * sizeof *per_rank);
    t->step_loss[t->n_steps] = loss;
    t->step_seconds[t->n_steps++] = s;
    return 0;
}

/* How a step ended, over every rank of the run. */
typedef struct step_end {
    double seconds, inside; /* the slowest rank's step and its time inside the backend */
    double loss;            /* the mean loss of the ranks' shards; NaN: none */
    int more;               /* another step follows in this repeat (rank 0's decision) */
} step_end;

/* Ends a step: alone, `mine` as it is; with opts->par, every rank's account is exchanged (a
 * step that failed anywhere becomes every rank's failure, agree.h) and `per_rank` (t->ranks
 * entries; NULL: not wanted) receives each rank's step time. `st` is this rank's step status,
 * `err` its message. XPB_INTERRUPTED when a stop was asked of any rank. */
static xpb_status end_step(step_end *out, const xpb_runner_opts *opts, xpb_status st,
                           const xpb_step_word *mine, double *per_rank, xpb_err *err)
{
    xpb_parallel *par = opts->par;
    *out = (step_end){mine->seconds, mine->inside, mine->loss, (mine->flags & XPB_STEP_MORE) != 0};
    if (opts->waiting) /* the others wait for this process alone: it is alive */
        xpb_parallel_beat(opts->waiting, 0, opts->label ? opts->label : "a run alone");
    if (per_rank)
        per_rank[0] = mine->seconds;
    if (!par)
        return st;
    xpb_step_word *all = calloc(par->comm.size, sizeof *all);
    if (!all)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    xpb_status xs = xpb_parallel_step(par, mine, all, err);
    int failed = 0, stop = 0, losses = 0;
    double loss = 0;
    for (uint32_t r = 0; xs == XPB_OK && r < par->comm.size; r++) {
        failed |= all[r].status != XPB_OK;
        stop |= (all[r].flags & XPB_STEP_STOP) != 0;
        if (all[r].seconds > out->seconds) {
            out->seconds = all[r].seconds;
            out->inside = all[r].inside;
        }
        if (isfinite(all[r].loss)) {
            loss += all[r].loss;
            losses++;
        }
        if (per_rank)
            per_rank[r] = all[r].seconds;
    }
    out->loss = losses ? loss / losses : NAN;
    out->more = xs == XPB_OK && (all[0].flags & XPB_STEP_MORE);
    free(all);
    if (xs == XPB_OK && failed) /* every rank learns who failed and why */
        xs = xpb_parallel_agree(par, st, err, "a step", 0, err);
    if (xs == XPB_OK && stop)
        xs = xpb_err_set(err, XPB_INTERRUPTED, "interrupted");
    return xs;
}

/* Runs one step (pushing `stream` first when not NULL) and reads its loss after the clock
 * stopped, into *w; `err` gets the failure. */
static xpb_status one_step(xpb_step_word *w, xpb_session *s, xpb_stream *stream, int want_loss,
                           xpb_err *err)
{
    xpb_status st = XPB_OK;
    double t0 = xpb_now();
    w->inside = 0;
    w->loss = NAN;
    if (stream)
        st = xpb_stream_push(stream, err);
    if (st == XPB_OK)
        st = xpb_session_step(s, &w->inside, err);
    w->seconds = xpb_now() - t0;
    if (st == XPB_OK && want_loss) /* not part of the step */
        st = xpb_session_loss(&w->loss, s, 0, err);
    w->status = st;
    return st;
}

xpb_status xpb_measure_warmup(xpb_session *s, const xpb_run_config *cfg,
                              const xpb_runner_opts *opts, xpb_err *err)
{
    for (uint32_t w = 0; w < cfg->warmup; w++) {
        int stop = opts->stop && *opts->stop;
        if (stop && !opts->par)
            return xpb_err_set(err, XPB_INTERRUPTED, "interrupted during warm-up");
        char detail[64];
        snprintf(detail, sizeof detail, "warm-up %u/%u", w + 1, cfg->warmup);
        xpb_progress_update(opts->label, 0, detail);
        xpb_step_word mine = {.flags = stop ? XPB_STEP_STOP : 0}; /* the stop travels here */
        xpb_status st = stop ? XPB_OK : one_step(&mine, s, NULL, 0, err);
        step_end end;
        if ((st = end_step(&end, opts, st, &mine, NULL, err)))
            return st;
    }
    return XPB_OK;
}

/* Whether another timed step follows `steps` steps and `elapsed` seconds of a repeat
 * (MLPerf LoadGen's rule, capped by max_steps). */
static int wants_more(const xpb_run_config *cfg, uint32_t steps, double elapsed)
{
    if (cfg->max_steps && steps >= cfg->max_steps)
        return 0;
    return steps < cfg->min_steps || elapsed < cfg->min_time;
}

/* Draws the progress of repeat `r` after `steps` steps and `elapsed` seconds. */
static void show_progress(const xpb_runner_opts *opts, const xpb_run_config *cfg, uint32_t r,
                          uint32_t steps, double elapsed)
{
    char detail[160];
    double frac_steps = (double)steps / cfg->min_steps,
           frac_time = cfg->min_time > 0 ? elapsed / cfg->min_time : 1;
    double frac = frac_steps < frac_time ? frac_steps : frac_time;
    if (frac > 1)
        frac = 1;
    double ranks = opts->par ? opts->par->comm.size : 1;
    snprintf(detail, sizeof detail, "repeat %u/%u step %u  %.1f samples/s", r + 1, cfg->repeats,
             steps, steps * (double)cfg->batch * ranks / (elapsed > 0 ? elapsed : 1));
    xpb_progress_update(opts->label, (r + frac) / cfg->repeats, detail);
}

/* One timed repeat (number `r`): steps until the rule says enough (rank 0's rule when
 * several ranks run). */
static xpb_status timed_repeat(xpb_timing *t, uint32_t r, xpb_session *s, xpb_stream *stream,
                               const xpb_run_config *cfg, const xpb_runner_opts *opts,
                               double *per_rank, xpb_err *err)
{
    uint32_t steps = 0;
    double start = xpb_now();
    for (int more = 1; more;) {
        int stop = opts->stop && *opts->stop;
        if (stop && !opts->par)
            return xpb_err_set(err, XPB_INTERRUPTED, "interrupted");
        xpb_step_word mine = {.flags = stop ? XPB_STEP_STOP : 0};
        xpb_status st = stop ? XPB_OK : one_step(&mine, s, stream, s->mp->n_losses > 0, err);
        if (wants_more(cfg, steps + 1, xpb_now() - start))
            mine.flags |= XPB_STEP_MORE;
        step_end end;
        if ((st = end_step(&end, opts, st, &mine, per_rank, err)))
            return st;
        if (push_step(t, end.seconds, end.loss, per_rank))
            return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
        t->backend_seconds += end.inside;
        t->wall_seconds += end.seconds;
        if (r == 0 && steps == 0)
            t->loss_first = end.loss;
        steps++;
        more = end.more;
        show_progress(opts, cfg, r, steps, xpb_now() - start);
    }
    t->repeat_steps[r] = steps;
    t->repeat_seconds[r] = 0;
    for (size_t i = t->n_steps - steps; i < t->n_steps; i++)
        t->repeat_seconds[r] += t->step_seconds[i];
    return XPB_OK;
}

/* The timed repeats. Returns XPB_INTERRUPTED when opts->stop was raised. */
static xpb_status timed_repeats(xpb_timing *t, xpb_session *s, xpb_stream *stream,
                                const xpb_run_config *cfg, const xpb_runner_opts *opts,
                                xpb_err *err)
{
    double *per_rank = calloc(t->ranks, sizeof *per_rank);
    if (!per_rank)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    xpb_status st = XPB_OK;
    for (uint32_t r = 0; r < cfg->repeats && st == XPB_OK; r++)
        st = timed_repeat(t, r, s, stream, cfg, opts, per_rank, err);
    free(per_rank);
    if (st == XPB_OK && t->n_steps)
        t->loss_last = t->step_loss[t->n_steps - 1];
    return st;
}

xpb_status xpb_measure_repeats(xpb_timing *t, xpb_session *s, xpb_stream *stream,
                               const xpb_run_config *cfg, const xpb_runner_opts *opts, xpb_err *err)
{
    memset(t, 0, sizeof *t);
    t->loss_first = t->loss_last = NAN;
    t->ranks = opts->par ? opts->par->comm.size : 1;
    t->repeat_seconds = calloc(cfg->repeats, sizeof *t->repeat_seconds);
    t->repeat_steps = calloc(cfg->repeats, sizeof *t->repeat_steps);
    if (!t->repeat_seconds || !t->repeat_steps)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    xpb_meter m;
    struct xpb_cpu_set cpus;
    int have_cpus = xpb_cpu_set_mine(&cpus) == 0;
    xpb_cpu_sample *sample = malloc(2 * sizeof *sample); /* before and after: 32 KiB */
    if (!sample)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    xpb_meter_start(&m, s, &t->energy);
    xpb_cpu_sample_now(&sample[0]);
    xpb_status st = timed_repeats(t, s, stream, cfg, opts, err);
    if (st == XPB_OK) {
        xpb_cpu_sample_now(&sample[1]);
        xpb_meter_stop(&m, &t->energy);
        st = xpb_run_interference(&t->interference, &sample[0], &sample[1],
                                  have_cpus ? &cpus : NULL, s->threads, opts->par, err);
    }
    free(sample);
    return st;
}

void xpb_timing_free(xpb_timing *t)
{
    free(t->step_seconds);
    free(t->step_loss);
    free(t->repeat_seconds);
    free(t->repeat_steps);
    free(t->rank_seconds);
    memset(t, 0, sizeof *t);
}
