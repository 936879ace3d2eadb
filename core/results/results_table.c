/* The human summary of a results document (see results.h): an aligned table of runs, the
 * comparisons, and the runs that did not finish. Every lookup tolerates missing or mistyped
 * fields ("-"), so that `xpubench show` can print a document that failed validation. */
#include "results/results.h"

#include <string.h>

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

/* obj.a.b... with a NULL-terminated key list; NULL when any step is missing. */
static const json_t *at(const json_t *obj, const char *k1, const char *k2, const char *k3)
{
    const json_t *v = json_object_get(obj, k1);
    if (v && k2)
        v = json_object_get(v, k2);
    if (v && k3)
        v = json_object_get(v, k3);
    return v;
}

static const char *str_or_dash(const json_t *v)
{
    return json_is_string(v) ? json_string_value(v) : "-";
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

/* A number at `v` scaled by `scale`, or "-". */
static void number_cell(char *buf, size_t size, const json_t *v, double scale)
{
    if (json_is_number(v))
        format_number(buf, size, json_number_value(v) * scale);
    else
        snprintf(buf, size, "-");
}

/* 1 when the run's device lists capability `name`, 0 when it lists others but not this one,
 * -1 when the document does not say (older documents, runs that never opened a device). */
static int device_has(const json_t *run, const char *name)
{
    const json_t *caps = at(run, "device", "capabilities", NULL);
    if (!json_is_array(caps))
        return -1;
    for (size_t i = 0; i < json_array_size(caps); i++) {
        const json_t *c = json_array_get(caps, i);
        if (json_is_string(c) && strcmp(json_string_value(c), name) == 0)
            return 1;
    }
    return 0;
}

/* The run's backend speedup: "9.88x" when it is the candidate of a backend comparison,
 * "base" when it is only a baseline, "-" otherwise. */
static void speedup_cell(char *buf, size_t size, const json_t *run, const json_t *comparisons)
{
    const char *id = str_or_dash(json_object_get(run, "id"));
    int baseline = 0;
    snprintf(buf, size, "-");
    for (size_t i = 0; i < json_array_size(comparisons); i++) {
        const json_t *c = json_array_get(comparisons, i);
        const char *kind = str_or_dash(json_object_get(c, "kind"));
        const json_t *sp = json_object_get(c, "speedup");
        if (strcmp(kind, "backend") != 0)
            continue;
        if (strcmp(str_or_dash(json_object_get(c, "candidate")), id) == 0 && json_is_number(sp)) {
            snprintf(buf, size, "%.2fx", json_number_value(sp));
            return;
        }
        baseline |= strcmp(str_or_dash(json_object_get(c, "baseline")), id) == 0;
    }
    if (baseline)
        snprintf(buf, size, "base");
}

/* The text of column `col` for `run` (or the header when run is NULL); `comparisons` is the
 * document's list. */
static void format_cell(char *buf, size_t size, const json_t *run, int col,
                        const json_t *comparisons)
{
    if (!run) {
        snprintf(buf, size, "%s", headers[col]);
        return;
    }
    const json_t *config = json_object_get(run, "config");
    const json_t *metrics = json_object_get(run, "metrics");
    const json_t *v;
    int has;
    char a[48], b[48], c[48]; /* three fit in one cell */
    switch (col) {
    case C_ID:
        snprintf(buf, size, "%s", str_or_dash(json_object_get(run, "id")));
        break;
    case C_STATUS:
        snprintf(buf, size, "%s", str_or_dash(json_object_get(run, "status")));
        break;
    case C_MODEL:
        v = json_object_get(config, "variant");
        if (json_is_string(v) && json_string_length(v) > 0)
            snprintf(buf, size, "%s/%s", str_or_dash(json_object_get(config, "model")),
                     json_string_value(v));
        else
            snprintf(buf, size, "%s", str_or_dash(json_object_get(config, "model")));
        break;
    case C_MODE:
        snprintf(buf, size, "%s", str_or_dash(json_object_get(config, "mode")));
        break;
    case C_RANKS:
        v = json_object_get(config, "world_size");
        snprintf(buf, size, "%" JSON_INTEGER_FORMAT,
                 json_is_integer(v) ? json_integer_value(v) : 1);
        break;
    case C_EFF:
        number_cell(buf, size, at(metrics, "parallel", "scaling_efficiency", NULL), 100);
        break;
    case C_COMM:
        number_cell(buf, size, at(metrics, "parallel", "communication", "share"), 100);
        break;
    case C_BATCH:
    case C_THREADS:
        v = json_object_get(config, col == C_BATCH ? "batch" : "threads");
        if (!json_is_integer(v))
            snprintf(buf, size, "-");
        else if (col == C_THREADS && json_integer_value(v) == 0)
            snprintf(buf, size, "auto");
        else
            snprintf(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        break;
    case C_PRECISION:
        snprintf(buf, size, "%s", str_or_dash(json_object_get(config, "precision")));
        break;
    case C_BACKEND:
        snprintf(buf, size, "%s", str_or_dash(json_object_get(config, "backend")));
        break;
    case C_FUSED:
        v = json_object_get(config, "fusion");
        has = device_has(run, "fusion");
        if (has == 0) /* the backend does not fuse: nothing to say */
            snprintf(buf, size, "n/a");
        else if (has < 0 && !json_is_object(metrics))
            snprintf(buf, size, "-"); /* nothing ran (no device): it neither fused nor not */
        else
            snprintf(buf, size, "%s", json_is_true(v) ? "yes" : json_is_false(v) ? "no" : "-");
        break;
    case C_SPEEDUP:
        speedup_cell(buf, size, run, comparisons);
        break;
    case C_THROUGHPUT:
        v = json_object_get(metrics, "throughput");
        if (!json_is_number(json_object_get(v, "median"))) {
            snprintf(buf, size, "-");
            break;
        }
        number_cell(a, sizeof a, json_object_get(v, "median"), 1);
        number_cell(b, sizeof b, json_object_get(v, "min"), 1);
        number_cell(c, sizeof c, json_object_get(v, "max"), 1);
        snprintf(buf, size, "%s (%s-%s)", a, b, c);
        break;
    case C_P50:
    case C_P95:
    case C_P99:
        number_cell(buf, size,
                    at(metrics, "step_time_s",
                       col == C_P50   ? "p50"
                       : col == C_P95 ? "p95"
                                      : "p99",
                       NULL),
                    1e3);
        break;
    case C_CV:
        number_cell(buf, size, at(metrics, "step_time_s", "cv", NULL), 100);
        break;
    case C_GFLOPS:
        number_cell(buf, size, json_object_get(metrics, "flops_per_s"), 1e-9);
        break;
    case C_LOSS:
        v = json_object_get(metrics, "loss");
        if (!json_is_number(json_object_get(v, "first")) &&
            !json_is_number(json_object_get(v, "last"))) {
            snprintf(buf, size, "-");
            break;
        }
        number_cell(a, sizeof a, json_object_get(v, "first"), 1);
        number_cell(b, sizeof b, json_object_get(v, "last"), 1);
        snprintf(buf, size, "%s->%s", a, b);
        break;
    case C_RSS:
        number_cell(buf, size, at(metrics, "memory", "host_peak_rss_bytes", NULL),
                    1.0 / (1024.0 * 1024.0));
        break;
    case C_OTHERS: /* CPU others took meanwhile; "!" when it was enough to spoil the run */
        v = at(metrics, "interference", "other_cpu_share", NULL);
        if (json_is_number(v))
            snprintf(buf, size, "%.1f%s", json_number_value(v) * 100,
                     json_is_true(at(metrics, "interference", "flagged", NULL)) ? "!" : "");
        else
            snprintf(buf, size, "-");
        break;
    }
}

/* One table line: the shown cells padded to `width` (0: hidden), two spaces apart, no trailing
 * blanks. */
static void print_row(FILE *f, const json_t *run, const size_t *width, const json_t *comparisons)
{
    char cell[CELL];
    for (int col = 0; col < N_COLUMNS; col++) {
        if (!width[col])
            continue;
        format_cell(cell, sizeof cell, run, col, comparisons);
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

/* Whether a run of `runs` ran on more than one rank. */
static int any_parallel(const json_t *runs)
{
    for (size_t r = 0; r < json_array_size(runs); r++) {
        const json_t *ws = at(json_array_get(runs, r), "config", "world_size", NULL);
        if (json_is_integer(ws) && json_integer_value(ws) > 1)
            return 1;
    }
    return 0;
}

static void print_runs(FILE *f, const json_t *runs, const json_t *comparisons)
{
    size_t width[N_COLUMNS] = {0};
    char cell[CELL];
    size_t n = json_array_size(runs);
    int parallel = any_parallel(runs);
    for (size_t r = 0; r <= n; r++) {
        const json_t *run = r == 0 ? NULL : json_array_get(runs, r - 1);
        for (int col = 0; col < N_COLUMNS; col++) {
            if (parallel_column(col) && !parallel)
                continue;
            format_cell(cell, sizeof cell, run, col, comparisons);
            size_t len = strlen(cell);
            if (len > width[col])
                width[col] = len;
        }
    }
    print_row(f, NULL, width, comparisons);
    for (size_t r = 0; r < n; r++)
        print_row(f, json_array_get(runs, r), width, comparisons);
    if (parallel)
        fprintf(f, "ranks = processes of the run (mpirun, srun); batch is per rank and samples/s "
                   "counts every rank's; eff %% = scaling efficiency, samples/s / (ranks x the "
                   "one-rank run's); comm %% = share of a step the gradients' all-reduce takes "
                   "(timed apart)\n");

    /* Whether batches were copied inside the timed steps changes what the numbers mean. */
    int resident = 0, streamed = 0;
    for (size_t r = 0; r < n; r++) {
        const json_t *t = at(json_array_get(runs, r), "config", "transfer", NULL);
        resident += json_is_string(t) && strcmp(json_string_value(t), "resident") == 0;
        streamed += json_is_string(t) && strcmp(json_string_value(t), "streamed") == 0;
    }
    fprintf(f, "speedup = throughput / the same run's throughput on the baseline backend "
               "(\"base\"); fused n/a = the backend does not fuse\n");
    int flagged = 0;
    for (size_t r = 0; r < n; r++)
        flagged += json_is_true(at(json_object_get(json_array_get(runs, r), "metrics"),
                                   "interference", "flagged", NULL));
    if (flagged)
        fprintf(f,
                "others %% = CPU time other processes took during the timed steps, as a share "
                "of the machine; ! = %d run%s disturbed by them: %s numbers are not %s own\n",
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
static void speedup_text(char *buf, size_t size, const json_t *c)
{
    const json_t *s = json_object_get(c, "speedup");
    const json_t *lo = json_object_get(c, "ci95_low"), *hi = json_object_get(c, "ci95_high");
    if (!json_is_number(s)) {
        snprintf(buf, size, "-");
        return;
    }
    if (!json_is_number(lo) || !json_is_number(hi)) {
        snprintf(buf, size, "%.2fx", json_number_value(s));
        return;
    }
    snprintf(buf, size, "%.2fx (%.2f-%.2f%s)", json_number_value(s), json_number_value(lo),
             json_number_value(hi),
             json_is_false(json_object_get(c, "significant")) ? ", no significant difference" : "");
}

static void print_comparisons(FILE *f, const json_t *comparisons)
{
    size_t n = json_array_size(comparisons);
    if (n == 0)
        return;
    int wk = 4, wc = 9, wb = 8;
    for (size_t i = 0; i < n; i++) {
        const json_t *c = json_array_get(comparisons, i);
        int k = (int)strlen(str_or_dash(json_object_get(c, "kind")));
        int cd = (int)strlen(str_or_dash(json_object_get(c, "candidate")));
        int b = (int)strlen(str_or_dash(json_object_get(c, "baseline")));
        wk = k > wk ? k : wk;
        wc = cd > wc ? cd : wc;
        wb = b > wb ? b : wb;
    }
    fprintf(f, "\ncomparisons (speedup = candidate throughput / baseline throughput, with its 95%% "
               "interval where both runs have repeats):\n");
    fprintf(f, "  %-*s  %-*s  %-*s  %s\n", wk, "kind", wc, "candidate", wb, "baseline", "speedup");
    for (size_t i = 0; i < n; i++) {
        const json_t *c = json_array_get(comparisons, i);
        char speedup[128];
        speedup_text(speedup, sizeof speedup, c);
        fprintf(f, "  %-*s  %-*s  %-*s  %s\n", wk, str_or_dash(json_object_get(c, "kind")), wc,
                str_or_dash(json_object_get(c, "candidate")), wb,
                str_or_dash(json_object_get(c, "baseline")), speedup);
    }
}

static void print_unfinished(FILE *f, const json_t *runs)
{
    int header = 0;
    for (size_t r = 0; r < json_array_size(runs); r++) {
        const json_t *run = json_array_get(runs, r);
        const json_t *status = json_object_get(run, "status");
        if (json_is_string(status) && strcmp(json_string_value(status), "ok") == 0)
            continue;
        if (!header) {
            fprintf(f, "\nruns that did not finish:\n");
            header = 1;
        }
        fprintf(f, "  %s [%s]: %s\n", str_or_dash(json_object_get(run, "id")), str_or_dash(status),
                str_or_dash(json_object_get(run, "error")));
    }
}

xpb_status xpb_results_print_table(FILE *f, const json_t *doc)
{
    if (!f || !json_is_object(doc))
        return XPB_INVALID_ARGUMENT;
    const json_t *runs = json_object_get(doc, "runs");
    if (json_array_size(runs) == 0)
        fprintf(f, "no runs\n");
    else
        print_runs(f, runs, json_object_get(doc, "comparisons"));
    print_comparisons(f, json_object_get(doc, "comparisons"));
    print_unfinished(f, runs);
    if (json_is_true(json_object_get(doc, "interrupted")))
        fprintf(f, "\ninterrupted: the invocation was stopped before every run had finished\n");
    if (fflush(f) != 0 || ferror(f))
        return XPB_IO_ERROR;
    return XPB_OK;
}
