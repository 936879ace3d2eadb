/* The human summary of a results document (see results.h): an aligned table of runs, the
 * comparisons, and the runs that did not finish, read from the document's typed view (view.h),
 * whose missing or mistyped fields show as "-", so that a document that failed validation
 * still prints. */
#include "results/results.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "render/terminal.h"
#include "results/tta_table.h"
#include "results/view.h"

#define CELL 160

enum column {
    C_ID,
    C_STATUS,
    C_MODEL,
    C_MODE,
    C_BATCH,
    C_RANKS, /* shown when a run has more than one rank, like C_EFF and C_COMM */
    C_PRECISION,
    C_BACKEND,
    C_FUSED,
    C_THREADS,
    C_THROUGHPUT,
    C_SPEEDUP,
    C_EFF,
    C_COMM,
    C_P50,
    C_P95,
    C_P99,
    C_CV,
    C_GFLOPS,
    C_LOSS,
    C_RSS,
    C_OTHERS,
    N_COLUMNS,
};

static const char *const headers[N_COLUMNS] = {
    "id",
    "status",
    "model/variant",
    "mode",
    "batch",
    "ranks",
    "precision",
    "backend",
    "fused",
    "threads",
    "samples/s (min-max)",
    "speedup",
    "eff %",
    "comm %",
    "p50 ms",
    "p95 ms",
    "p99 ms",
    "cv %",
    "GFLOP/s",
    "loss first->last",
    "RSS MiB",
    "others %",
};

/* Columns of numbers are right-aligned. */
static const int right_aligned[N_COLUMNS] = {
    [C_BATCH] = 1, [C_RANKS] = 1,  [C_THREADS] = 1, [C_THROUGHPUT] = 1, [C_SPEEDUP] = 1,
    [C_EFF] = 1,   [C_COMM] = 1,   [C_P50] = 1,     [C_P95] = 1,        [C_P99] = 1,
    [C_CV] = 1,    [C_GFLOPS] = 1, [C_RSS] = 1,     [C_OTHERS] = 1,
};

/* Columns only documents with a run over several ranks show. */
static int parallel_column(int col)
{
    return col == C_RANKS || col == C_EFF || col == C_COMM;
}

static const char *str_or_dash(const char *s)
{
    return s ? s : "-";
}

/* About four significant digits without an exponent for the usual range of benchmark numbers:
 * 51234, 1234.5 -> "1235", 123.4, 12.34, 1.234, 0.012. */
static void format_number(char *buf, size_t size, double v)
{
    double a = v < 0 ? -v : v;
    if (a >= 1000)
        snprintf(buf, size, "%.0f", v);
    else if (a >= 100)
        snprintf(buf, size, "%.1f", v);
    else if (a >= 10)
        snprintf(buf, size, "%.2f", v);
    else if (a >= 0.001 || a == 0)
        snprintf(buf, size, "%.3f", v);
    else
        snprintf(buf, size, "%.2g", v);
}

/* The number `v` scaled by `scale`, or "-" when the run does not have it (NaN). */
static void number_cell(char *buf, size_t size, double v, double scale)
{
    if (!isnan(v))
        format_number(buf, size, v * scale);
    else
        snprintf(buf, size, "-");
}

/* An integer of the run, or "-"; "auto" for 0 when `zero_is_auto`. */
static void int_cell(char *buf, size_t size, int64_t v, int zero_is_auto)
{
    if (v == XPB_RESULTS_NO_INT)
        snprintf(buf, size, "-");
    else if (zero_is_auto && v == 0)
        snprintf(buf, size, "auto");
    else
        snprintf(buf, size, "%" PRId64, v);
}

/* The run's backend speedup: "9.88x" when it is the candidate of a backend comparison,
 * "base" when it is only a baseline, "-" otherwise. */
static void speedup_cell(char *buf, size_t size, const struct xpb_results_run *run,
                         const struct xpb_results_doc *v)
{
    const char *id = str_or_dash(run->id);
    int baseline = 0;
    snprintf(buf, size, "-");
    for (size_t i = 0; i < v->n_comparisons; i++) {
        const struct xpb_results_comparison *c = &v->comparisons[i];
        if (strcmp(str_or_dash(c->kind), "backend") != 0)
            continue;
        if (strcmp(str_or_dash(c->candidate), id) == 0 && !isnan(c->speedup)) {
            snprintf(buf, size, "%.2fx", c->speedup);
            return;
        }
        baseline |= strcmp(str_or_dash(c->baseline), id) == 0;
    }
    if (baseline)
        snprintf(buf, size, "base");
}

/* "yes", "no", "n/a" (the backend does not fuse) or "-" (nothing ran: no device). */
static const char *fused_text(const struct xpb_results_run *run)
{
    int fuses = xpb_results_run_fuses(run);
    if (fuses == 0) /* the backend does not fuse: nothing to say */
        return "n/a";
    if (fuses < 0 && !run->has_metrics)
        return "-"; /* nothing ran (no device): it neither fused nor not */
    return run->config.fusion == 1 ? "yes" : run->config.fusion == 0 ? "no" : "-";
}

/* The text of column `col` for `run` (or the header when run is NULL) of document `v`, as the
 * file has it. */
static void format_raw(char *buf, size_t size, const struct xpb_results_run *run, int col,
                       const struct xpb_results_doc *v)
{
    if (!run) {
        snprintf(buf, size, "%s", headers[col]);
        return;
    }
    const struct xpb_results_config *config = &run->config;
    const struct xpb_results_metrics *m = &run->metrics;
    char a[48], b[48], c[48]; /* three fit in one cell */
    switch (col) {
    case C_ID:
        snprintf(buf, size, "%s", str_or_dash(run->id));
        break;
    case C_STATUS:
        snprintf(buf, size, "%s", str_or_dash(run->status));
        break;
    case C_MODEL:
        if (config->variant && config->variant[0])
            snprintf(buf, size, "%s/%s", str_or_dash(config->model), config->variant);
        else
            snprintf(buf, size, "%s", str_or_dash(config->model));
        break;
    case C_MODE:
        snprintf(buf, size, "%s", str_or_dash(config->mode));
        break;
    case C_RANKS:
        snprintf(buf, size, "%" PRId64, xpb_results_run_world_size(run));
        break;
    case C_EFF:
        number_cell(buf, size, m->parallel.scaling_efficiency, 100);
        break;
    case C_COMM:
        number_cell(buf, size, m->parallel.communication.share, 100);
        break;
    case C_BATCH:
        int_cell(buf, size, config->batch, 0);
        break;
    case C_THREADS:
        int_cell(buf, size, config->threads, 1);
        break;
    case C_PRECISION:
        snprintf(buf, size, "%s", str_or_dash(config->precision));
        break;
    case C_BACKEND:
        snprintf(buf, size, "%s", str_or_dash(config->backend));
        break;
    case C_FUSED:
        snprintf(buf, size, "%s", fused_text(run));
        break;
    case C_SPEEDUP:
        speedup_cell(buf, size, run, v);
        break;
    case C_THROUGHPUT:
        if (isnan(m->throughput.median)) {
            snprintf(buf, size, "-");
            break;
        }
        number_cell(a, sizeof a, m->throughput.median, 1);
        number_cell(b, sizeof b, m->throughput.min, 1);
        number_cell(c, sizeof c, m->throughput.max, 1);
        snprintf(buf, size, "%s (%s-%s)", a, b, c);
        break;
    case C_P50:
        number_cell(buf, size, m->step_time_s.p50, 1e3);
        break;
    case C_P95:
        number_cell(buf, size, m->step_time_s.p95, 1e3);
        break;
    case C_P99:
        number_cell(buf, size, m->step_time_s.p99, 1e3);
        break;
    case C_CV:
        number_cell(buf, size, m->step_time_s.cv, 100);
        break;
    case C_GFLOPS:
        number_cell(buf, size, m->flops_per_s, 1e-9);
        break;
    case C_LOSS:
        if (isnan(m->loss.first) && isnan(m->loss.last)) {
            snprintf(buf, size, "-");
            break;
        }
        number_cell(a, sizeof a, m->loss.first, 1);
        number_cell(b, sizeof b, m->loss.last, 1);
        snprintf(buf, size, "%s->%s", a, b);
        break;
    case C_RSS:
        number_cell(buf, size,
                    m->memory.host_peak_rss_bytes == XPB_RESULTS_NO_INT
                        ? NAN
                        : (double)m->memory.host_peak_rss_bytes,
                    1.0 / (1024.0 * 1024.0));
        break;
    case C_OTHERS: /* CPU others took meanwhile; "!" when it was enough to spoil the run */
        if (!isnan(m->interference.other_cpu_share))
            snprintf(buf, size, "%.1f%s", m->interference.other_cpu_share * 100,
                     m->interference.flagged == 1 ? "!" : "");
        else
            snprintf(buf, size, "-");
        break;
    }
}

/* format_raw with the strings of the file escaped for the terminal (render/terminal.h). */
static void format_cell(char *buf, size_t size, const struct xpb_results_run *run, int col,
                        const struct xpb_results_doc *v)
{
    char raw[CELL];
    format_raw(raw, sizeof raw, run, col, v);
    xpb_term_field(buf, size, raw);
}

/* One table line: the shown cells padded to `width` (0: hidden), two spaces apart, no trailing
 * blanks. */
static void print_row(FILE *f, const struct xpb_results_run *run, const size_t *width,
                      const struct xpb_results_doc *v)
{
    char cell[CELL];
    for (int col = 0; col < N_COLUMNS; col++) {
        if (!width[col])
            continue;
        format_cell(cell, sizeof cell, run, col, v);
        int w = (int)width[col];
        if (col == N_COLUMNS - 1 && !right_aligned[col])
            fprintf(f, "%s", cell);
        else if (right_aligned[col])
            fprintf(f, "%*s", w, cell);
        else
            fprintf(f, "%-*s", w, cell);
        fputs(col == N_COLUMNS - 1 ? "\n" : "  ", f);
    }
}

/* Whether a run of `v` ran on more than one rank. */
static int any_parallel(const struct xpb_results_doc *v)
{
    for (size_t r = 0; r < v->n_runs; r++)
        if (xpb_results_run_world_size(&v->runs[r]) > 1)
            return 1;
    return 0;
}

static void print_runs(FILE *f, const struct xpb_results_doc *v)
{
    size_t width[N_COLUMNS] = {0};
    char cell[CELL];
    size_t n = v->n_runs;
    int parallel = any_parallel(v);
    for (size_t r = 0; r <= n; r++) {
        const struct xpb_results_run *run = r == 0 ? NULL : &v->runs[r - 1];
        if (run && xpb_results_run_is_tta(run))
            continue;
        for (int col = 0; col < N_COLUMNS; col++) {
            if (parallel_column(col) && !parallel)
                continue;
            format_cell(cell, sizeof cell, run, col, v);
            size_t len = strlen(cell);
            if (len > width[col])
                width[col] = len;
        }
    }
    print_row(f, NULL, width, v);
    for (size_t r = 0; r < n; r++)
        if (!xpb_results_run_is_tta(&v->runs[r]))
            print_row(f, &v->runs[r], width, v);
    if (parallel)
        fprintf(f, "ranks = processes of the run (mpirun, srun); batch is per rank and samples/s "
                   "counts every rank's; eff %% = scaling efficiency, samples/s / (ranks x the "
                   "one-rank run's); comm %% = share of a step the gradients' all-reduce takes "
                   "(timed apart)\n");

    /* Whether batches were copied inside the timed steps changes what the numbers mean. */
    int resident = 0, streamed = 0;
    for (size_t r = 0; r < n; r++) {
        const char *t = v->runs[r].config.transfer;
        resident += t && strcmp(t, "resident") == 0;
        streamed += t && strcmp(t, "streamed") == 0;
    }
    fprintf(f, "speedup = throughput / the same run's throughput on the baseline backend "
               "(\"base\"); fused n/a = the backend does not fuse\n");
    int flagged = 0;
    for (size_t r = 0; r < n; r++)
        flagged += v->runs[r].metrics.interference.flagged == 1;
    if (flagged)
        fprintf(f,
                "others %% = CPU time other processes took during the timed steps of what the run "
                "needed of its CPUs; ! = %d run%s disturbed by them: %s numbers are not %s own\n",
                flagged, flagged == 1 ? " was" : "s were", flagged == 1 ? "its" : "their",
                flagged == 1 ? "its" : "their");
    fprintf(f, "step times in ms; cv = coefficient of variation of step times; threads auto = "
               "backend default; ");
    if (streamed && resident)
        fprintf(f, "input batches: mixed (see each run's config.transfer)\n");
    else if (streamed)
        fprintf(f, "input batches: streamed from the host in every timed step\n");
    else
        fprintf(f, "input batches: resident on the device (not copied in timed steps)\n");
}

/* "12.35x (11.90-12.81)", "1.02x (0.97-1.07, no significant difference)" or "12.35x" when the
 * comparison has no interval. */
static void speedup_text(char *buf, size_t size, const struct xpb_results_comparison *c)
{
    if (isnan(c->speedup)) {
        snprintf(buf, size, "-");
        return;
    }
    if (isnan(c->ci95_low) || isnan(c->ci95_high)) {
        snprintf(buf, size, "%.2fx", c->speedup);
        return;
    }
    snprintf(buf, size, "%.2fx (%.2f-%.2f%s)", c->speedup, c->ci95_low, c->ci95_high,
             c->significant == 0 ? ", no significant difference" : "");
}

static void print_comparisons(FILE *f, const struct xpb_results_doc *v)
{
    size_t n = v->n_comparisons;
    if (n == 0)
        return;
    int wk = 4, wc = 9, wb = 8;
    char kind[CELL], cand[CELL], base[CELL];
    for (size_t i = 0; i < n; i++) {
        const struct xpb_results_comparison *c = &v->comparisons[i];
        int k = (int)strlen(xpb_term_field(kind, sizeof kind, str_or_dash(c->kind)));
        int cd = (int)strlen(xpb_term_field(cand, sizeof cand, str_or_dash(c->candidate)));
        int b = (int)strlen(xpb_term_field(base, sizeof base, str_or_dash(c->baseline)));
        wk = k > wk ? k : wk;
        wc = cd > wc ? cd : wc;
        wb = b > wb ? b : wb;
    }
    fprintf(f, "\ncomparisons (speedup = candidate throughput / baseline throughput, with its 95%% "
               "interval where both runs have repeats):\n");
    fprintf(f, "  %-*s  %-*s  %-*s  %s\n", wk, "kind", wc, "candidate", wb, "baseline", "speedup");
    for (size_t i = 0; i < n; i++) {
        const struct xpb_results_comparison *c = &v->comparisons[i];
        char speedup[128];
        speedup_text(speedup, sizeof speedup, c);
        fprintf(f, "  %-*s  %-*s  %-*s  %s\n", wk,
                xpb_term_field(kind, sizeof kind, str_or_dash(c->kind)), wc,
                xpb_term_field(cand, sizeof cand, str_or_dash(c->candidate)), wb,
                xpb_term_field(base, sizeof base, str_or_dash(c->baseline)), speedup);
    }
}

static void print_unfinished(FILE *f, const struct xpb_results_doc *v)
{
    int header = 0;
    for (size_t r = 0; r < v->n_runs; r++) {
        const struct xpb_results_run *run = &v->runs[r];
        if (run->ok)
            continue;
        if (!header) {
            fprintf(f, "\nruns that did not finish:\n");
            header = 1;
        }
        char id[CELL], status[CELL], error[1024];
        fprintf(f, "  %s [%s]: %s\n", xpb_term_field(id, sizeof id, str_or_dash(run->id)),
                xpb_term_field(status, sizeof status, str_or_dash(run->status)),
                xpb_term_field(error, sizeof error, str_or_dash(run->error)));
    }
}

xpb_status xpb_results_print_table(FILE *f, const json_t *doc)
{
    if (!f || !json_is_object(doc))
        return XPB_INVALID_ARGUMENT;
    struct xpb_results_doc v;
    xpb_status st = xpb_results_view(&v, doc);
    if (st == XPB_OK) {
        size_t tta = 0;
        for (size_t r = 0; r < v.n_runs; r++)
            tta += xpb_results_run_is_tta(&v.runs[r]);
        if (v.n_runs == 0)
            fprintf(f, "no runs\n");
        else if (tta < v.n_runs)
            print_runs(f, &v);
        xpb_results_print_tta(f, &v);
        print_comparisons(f, &v);
        print_unfinished(f, &v);
        if (v.interrupted == 1)
            fprintf(f, "\nincomplete: the invocation that wrote this file did not finish every run "
                       "(stopped by Ctrl-C, killed, crashed, or still running)\n");
    }
    xpb_results_view_free(&v);
    if (st != XPB_OK)
        return st;
    if (fflush(f) != 0 || ferror(f))
        return XPB_IO_ERROR;
    return XPB_OK;
}
