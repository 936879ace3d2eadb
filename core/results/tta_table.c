/* The time-to-accuracy table (see tta_table.h). */
#include "results/tta_table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render/terminal.h"

int xpb_results_run_is_tta(const struct xpb_results_run *run)
{
    return run->ok && run->has_tta;
}

enum {
    COL_ID,
    COL_MODEL,
    COL_BACKEND,
    COL_PRECISION,
    COL_BATCH,
    COL_TARGET,
    COL_REACHED,
    COL_TIME,
    COL_SPREAD,
    COL_EPOCHS,
    COL_ENERGY,
    COL_WAIT,
    COL_REF,
    N_COLS
};

static const char *const headers[N_COLS] = {
    "id",     "model",     "backend", "precision", "batch",  "target",    "reached",
    "time s", "min-max s", "epochs",  "energy J",  "wait %", "ref epochs"};

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y ? 1 : 0;
}

double xpb_results_tta_median_epochs(const struct xpb_results_tta *t)
{
    double v[64];
    size_t n = 0;
    for (size_t i = 0; i < t->n_runs && n < 64; i++)
        if (t->runs[i].converged == 1 && isfinite(t->runs[i].epochs))
            v[n++] = t->runs[i].epochs;
    if (!n)
        return NAN;
    qsort(v, n, sizeof v[0], by_value);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

size_t xpb_results_tta_outside(const struct xpb_results_tta *t)
{
    size_t outside = 0;
    for (size_t i = 0; i < t->n_runs; i++)
        outside += t->runs[i].outside_reference == 1;
    return outside;
}

void xpb_results_tta_stopped_note(char *buf, size_t size, const struct xpb_results_tta *t)
{
    size_t diverged = 0, stalled = 0;
    for (size_t i = 0; i < t->n_runs; i++) {
        const char *why = t->runs[i].stopped_early;
        diverged += why && strcmp(why, "diverged") == 0;
        stalled += why && strcmp(why, "stalled") == 0;
    }
    if (diverged && stalled)
        snprintf(buf, size, " (%zu diverged, %zu stalled)", diverged, stalled);
    else if (diverged || stalled)
        snprintf(buf, size, " (%zu %s)", diverged + stalled, diverged ? "diverged" : "stalled");
    else if (size)
        buf[0] = '\0';
}

/* The share of the timed region the training waited for the input pipeline, over every run. */
static double wait_share(const struct xpb_results_tta *t)
{
    double wait = 0, total = 0;
    for (size_t i = 0; i < t->n_runs; i++) {
        const struct xpb_results_tta_run *r = &t->runs[i];
        double end = r->n_curve ? r->curve[r->n_curve - 1].seconds : NAN;
        if (isfinite(r->data_wait_seconds) && isfinite(end) && end > 0) {
            wait += r->data_wait_seconds;
            total += end;
        }
    }
    return total > 0 ? 100.0 * wait / total : NAN;
}

static void num(char *buf, size_t size, const char *fmt, double v)
{
    if (isfinite(v))
        snprintf(buf, size, fmt, v);
    else
        snprintf(buf, size, "-");
}

static void cell(char *buf, size_t size, const struct xpb_results_run *run, int col)
{
    if (!run) {
        snprintf(buf, size, "%s", headers[col]);
        return;
    }
    const struct xpb_results_tta *t = &run->tta;
    const struct xpb_results_config *c = &run->config;
    switch (col) {
    case COL_ID:
        snprintf(buf, size, "%s", run->id ? run->id : "-");
        break;
    case COL_MODEL:
        snprintf(buf, size, "%s", c->model ? c->model : "-");
        break;
    case COL_BACKEND:
        snprintf(buf, size, "%s", c->backend ? c->backend : "-");
        break;
    case COL_PRECISION:
        snprintf(buf, size, "%s", c->precision ? c->precision : "-");
        break;
    case COL_BATCH:
        if (c->batch == XPB_RESULTS_NO_INT)
            snprintf(buf, size, "-");
        else
            snprintf(buf, size, "%lld", (long long)c->batch);
        break;
    case COL_TARGET:
        num(buf, size, "%.4f", t->target);
        break;
    case COL_REACHED: {
        char why[64];
        xpb_results_tta_stopped_note(why, sizeof why, t);
        snprintf(buf, size, "%lld/%lld%s", (long long)t->seconds.converged,
                 (long long)t->seconds.runs, why);
        break;
    }
    case COL_TIME:
        num(buf, size, "%.1f", t->seconds.mean);
        break;
    case COL_SPREAD:
        if (isfinite(t->seconds.min) && isfinite(t->seconds.max))
            snprintf(buf, size, "%.1f-%.1f", t->seconds.min, t->seconds.max);
        else
            snprintf(buf, size, "-");
        break;
    case COL_EPOCHS:
        num(buf, size, "%.2f", xpb_results_tta_median_epochs(t));
        break;
    case COL_ENERGY:
        num(buf, size, "%.0f", t->joules.mean);
        break;
    case COL_WAIT:
        num(buf, size, "%.2f", wait_share(t));
        break;
    case COL_REF:
        if (!isfinite(t->reference_epochs))
            snprintf(buf, size, "-");
        else
            snprintf(buf, size, "%.2f%s", t->reference_epochs,
                     xpb_results_tta_outside(t) ? " !" : "");
        break;
    default:
        buf[0] = 0;
    }
}

/* A cell as it reaches the terminal: the text columns come from a file, so escaped. */
static const char *shown(char *buf, size_t size, const struct xpb_results_run *run, int col)
{
    char raw[160];
    cell(raw, sizeof raw, run, col);
    return xpb_term_field(buf, size, raw);
}

void xpb_results_print_tta(FILE *f, const struct xpb_results_doc *v)
{
    size_t width[N_COLS] = {0};
    char buf[160];
    int any = 0;
    for (size_t r = 0; r <= v->n_runs; r++) {
        const struct xpb_results_run *run = r ? &v->runs[r - 1] : NULL;
        if (run && !xpb_results_run_is_tta(run))
            continue;
        any += run != NULL;
        for (int col = 0; col < N_COLS; col++) {
            shown(buf, sizeof buf, run, col);
            width[col] = strlen(buf) > width[col] ? strlen(buf) : width[col];
        }
    }
    if (!any)
        return;
    fprintf(f, "\ntime to accuracy:\n");
    for (size_t r = 0; r <= v->n_runs; r++) {
        const struct xpb_results_run *run = r ? &v->runs[r - 1] : NULL;
        if (run && !xpb_results_run_is_tta(run))
            continue;
        fputs("  ", f);
        for (int col = 0; col < N_COLS; col++) {
            shown(buf, sizeof buf, run, col);
            int w = (int)width[col];
            fprintf(f, "%*s%s", col <= COL_PRECISION ? -w : w, buf,
                    col == N_COLS - 1 ? "\n" : "  ");
        }
    }
    fprintf(f, "reached = runs that reached the target test accuracy within max_epochs (diverged: "
               "stopped early, its training loss not finite; stalled: stopped early, at chance "
               "accuracy with a constant output's loss for 2 epochs); time s = "
               "seconds from the first batch to the evaluation that reached it, every evaluation "
               "included (Olympic mean: the fastest and the slowest run dropped; - when a scored "
               "run did not converge); epochs = median of the runs that converged; energy J = "
               "Olympic mean of their joules (- without a meter); wait %% = share of the time the "
               "training waited for the input pipeline; ref epochs = the reference convergence "
               "point, ! = a run far outside it\n");
}
