/* `xpubench report FILES... [-o FILE] [--format html|md|csv] [--memory SIZE] [--title TEXT]
 * [--surface-metric PATH]`:
 * turns results files into one report (core/report/report.h, docs/report.md): a
 * self-contained HTML page, or Markdown, or CSV, written atomically. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "cli/cli.h"
#include "render/terminal.h"
#include "report/report.h"
#include "results/results.h"
#include "results/view_fields.h"

#define REPORT_USAGE                                                                               \
    "usage: xpubench report RESULTS.json... [-o FILE] [--format html|md|csv] [--memory SIZE]\n"    \
    "                       [--title TEXT] [--surface-metric PATH]\n"

typedef struct report_args {
    const char **files;
    size_t n_files;
    const char *out, *format_name;
    xpb_report_format format;
    xpb_report_opts opts;
} report_args;

static void help(void)
{
    printf(REPORT_USAGE
           "\nTurns results files (docs/results.md) into the tables and figures of a study "
           "(docs/report.md):\nenvironment and provenance, backend speedups with 95%% "
           "intervals, fusion on/off with where\nthe step goes, precision with loss curves, "
           "memory and step time against batch with fitted\ncurves and projections, throughput "
           "against threads,\nrooflines of profiled runs, heat maps over two swept axes and "
           "speedup against parameter\ncount (ParaDnn's surfaces), energy, disturbed runs, every "
           "run.\n\n"
           "  -o, --output FILE  write the report there (atomically); default: standard output\n"
           "  --format FORMAT    html (one self-contained page: inline CSS and SVG, no script), "
           "md\n                     (Markdown) or csv (the tables); default: from FILE's "
           "extension, else html\n"
           "  --memory SIZE      the memory budget of \"the largest batch that fits\" (16GiB, "
           "512MiB, bytes);\n                     default: each file's host memory\n"
           "  --title TEXT       the report's title (default \"xpubench report\")\n"
           "  --surface-metric PATH  the metric of the heat maps, a run's number by its JSON "
           "path\n                     (metrics.flops_per_s, metrics.throughput.median ...); "
           "default\n                     metrics.peak_fraction\n\n"
           "Exit codes: 0 written, 1 the report could not be written, 2 usage, 3 a results file "
           "is bad.\n");
}

/* The format named `name`, or from the output file's extension; -1 for an unknown name. */
static int pick_format(report_args *a)
{
    const char *name = a->format_name;
    const char *dot = a->out ? strrchr(a->out, '.') : NULL;
    if (!name)
        name = dot && (strcmp(dot, ".md") == 0 || strcmp(dot, ".markdown") == 0) ? "md"
               : dot && strcmp(dot, ".csv") == 0                                 ? "csv"
                                                                                 : "html";
    if (strcmp(name, "html") == 0)
        a->format = XPB_REPORT_HTML;
    else if (strcmp(name, "md") == 0 || strcmp(name, "markdown") == 0)
        a->format = XPB_REPORT_MARKDOWN;
    else if (strcmp(name, "csv") == 0)
        a->format = XPB_REPORT_CSV;
    else
        return -1;
    return 0;
}

/* Whether `path` names a run's number (results/view_fields.h). */
static int known_metric(const char *path)
{
    for (int f = 0; f < XPB_RF_COUNT; f++)
        if (strcmp(xpb_results_field_path((enum xpb_results_field)f), path) == 0)
            return 1;
    return 0;
}

/* Parses argv; returns -1 after printing a usage error, 1 after --help, 0 otherwise. */
static int parse_args(report_args *a, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0 ||
                    strcmp(arg, "--format") == 0 || strcmp(arg, "--memory") == 0 ||
                    strcmp(arg, "--title") == 0 || strcmp(arg, "--surface-metric") == 0;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            help();
            return 1;
        } else if (takes && !value) {
            fprintf(stderr, "xpubench report: %s expects a value\n" REPORT_USAGE, arg);
            return -1;
        } else if (strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0) {
            a->out = value;
        } else if (strcmp(arg, "--format") == 0) {
            a->format_name = value;
        } else if (strcmp(arg, "--title") == 0) {
            a->opts.title = value;
        } else if (strcmp(arg, "--surface-metric") == 0) {
            if (!known_metric(value)) {
                fprintf(stderr,
                        "xpubench report: --surface-metric %s: expected the JSON path of a "
                        "run's number, such as metrics.peak_fraction or metrics.flops_per_s\n",
                        value);
                return -1;
            }
            a->opts.surface_metric = value;
        } else if (strcmp(arg, "--memory") == 0) {
            if (xpb_report_parse_bytes(&a->opts.memory_budget_bytes, value) != 0) {
                fprintf(stderr,
                        "xpubench report: --memory %s: expected a size such as 16GiB, 512MiB "
                        "or a number of bytes\n",
                        value);
                return -1;
            }
        } else if (arg[0] == '-' && arg[1] != '\0') {
            fprintf(stderr, "xpubench report: unknown option '%s'\n" REPORT_USAGE, arg);
            return -1;
        } else {
            a->files[a->n_files++] = arg;
            continue;
        }
        i++; /* the option's value */
    }
    if (a->n_files == 0) {
        fprintf(stderr, "xpubench report: expected at least one results file\n" REPORT_USAGE);
        return -1;
    }
    if (pick_format(a) != 0) {
        fprintf(stderr, "xpubench report: --format %s: expected html, md or csv\n", a->format_name);
        return -1;
    }
    return 0;
}

/* The report of the loaded documents into `text`. */
static int render(struct xpb_text *text, const report_args *a, json_t **docs)
{
    xpb_report *r = NULL;
    xpb_err err = {{0}};
    if (xpb_report_build(&r, docs, a->files, a->n_files, &a->opts, &err) != XPB_OK) {
        xpb_term_line(stderr, "xpubench report: %s", err.msg);
        return XPB_EXIT_FAILURE;
    }
    int rc = XPB_EXIT_OK;
    if (xpb_report_render(text, r, a->format) != XPB_OK) {
        fprintf(stderr, "xpubench report: out of memory while writing the report\n");
        rc = XPB_EXIT_FAILURE;
    }
    xpb_report_free(r);
    return rc;
}

static int write_out(const report_args *a, const char *text, size_t len)
{
    xpb_err err = {{0}};
    if (!a->out || strcmp(a->out, "-") == 0) {
        /* on a terminal, nothing of the files reaches it raw (render/terminal.h); into a pipe
         * or a file the bytes are the report's */
        int ok = isatty(fileno(stdout))
                     ? xpb_term_write(stdout, text, len, XPB_TERM_LAYOUT) == XPB_OK
                     : fwrite(text, 1, len, stdout) == len;
        return ok && fflush(stdout) == 0 ? XPB_EXIT_OK : XPB_EXIT_FAILURE;
    }
    if (xpb_atomic_write(a->out, text, len, &err) != XPB_OK) {
        xpb_term_line(stderr, "xpubench report: %s", err.msg);
        return XPB_EXIT_FAILURE;
    }
    xpb_term_line(stderr, "report: %s (%zu file%s)", a->out, a->n_files,
                  a->n_files == 1 ? "" : "s");
    return XPB_EXIT_OK;
}

int xpb_cli_report(int argc, char **argv)
{
    report_args a = {0};
    a.files = calloc((size_t)argc, sizeof *a.files);
    json_t **docs = calloc((size_t)argc, sizeof *docs);
    int rc = XPB_EXIT_FAILURE;
    if (!a.files || !docs) {
        fprintf(stderr, "xpubench report: out of memory\n");
        goto free_args;
    }
    int parsed = parse_args(&a, argc, argv);
    if (parsed != 0) {
        rc = parsed > 0 ? XPB_EXIT_OK : XPB_EXIT_USAGE;
        goto free_args;
    }
    size_t loaded = 0;
    for (; loaded < a.n_files; loaded++) {
        xpb_err err = {{0}};
        if (xpb_results_load(&docs[loaded], a.files[loaded], &err) != XPB_OK) {
            xpb_term_line(stderr, "xpubench report: %s", err.msg);
            rc = XPB_EXIT_INPUT;
            goto free_docs;
        }
        if (!xpb_results_complete(docs[loaded]))
            xpb_term_line(stderr,
                          "xpubench report: note: %s is incomplete: the invocation that wrote it "
                          "did not finish every run (the report says so)",
                          a.files[loaded]);
    }
    struct xpb_text text = {0};
    rc = render(&text, &a, docs);
    if (rc == XPB_EXIT_OK)
        rc = write_out(&a, text.data ? text.data : "", text.len);
    xpb_text_free(&text);
free_docs:
    for (size_t i = 0; i < loaded; i++)
        json_decref(docs[i]);
free_args:
    free(docs);
    free(a.files);
    return rc;
}
