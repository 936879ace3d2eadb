/* `xpubench compare OLD.json NEW.json [--threshold PCT] [--ignore KEY[,KEY...]]
 * [--count-disturbed]`: what got faster or slower run by run, and whether the difference is
 * real (core/compare/compare.h); exits 1 when a run got significantly slower by more than the
 * threshold (a disturbed run's slowdown alone only with --count-disturbed), so that it can gate
 * a CI job, and 7 when nothing could be compared, so that a gate never passes on nothing. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "compare/compare.h"
#include "render/terminal.h"
#include "results/results.h"
#include "results/view.h"
#include "results/view_config.h"

#define COMPARE_USAGE                                                                              \
    "usage: xpubench compare OLD.json NEW.json [--threshold PCT] [--ignore KEY[,KEY...]] "         \
    "[--count-disturbed]\n"
#define MAX_IGNORED 32

typedef struct compare_args {
    const char *old_path, *new_path;
    double threshold;
    char *ignore_text; /* owned copy of --ignore, split in place */
    const char *ignore[MAX_IGNORED];
    size_t n_ignore;
    unsigned flags; /* XPB_DIFF_* */
} compare_args;

static void help(void)
{
    printf(COMPARE_USAGE
           "\nMatches the runs of two results files by configuration and prints, per run, the "
           "old and new\nmedian throughput, the change with its 95%% interval (Welch, on the "
           "repeats) and a verdict:\nfaster, slower or no significant difference.\n\n"
           "  --threshold PCT  how much slower a run must be to fail the comparison (5%%, 0.5, "
           "...;\n                   default 5%%)\n"
           "  --ignore KEYS    config keys to leave out of the matching, comma-separated (e.g. "
           "threads,\n                   to compare a run on 2 threads with one on 1)\n"
           "  --count-disturbed  let a run that other processes disturbed fail the comparison "
           "by being\n                   slower (by default it is reported as \"disturbed: "
           "compare again\")\n\n"
           "Exit codes: 0 no run significantly slower than the threshold, 1 a run significantly "
           "slower\nby more than the threshold or no longer finishing, 2 usage, 3 a results file "
           "is bad,\n7 nothing compared (no run of NEW has the configuration of a run of "
           "OLD).\n");
}

/* "5%", "5", "0.5%" -> 0.05, 0.05, 0.005; -1 when not a percentage in [0, 100). */
static double parse_threshold(const char *text)
{
    char *end = NULL;
    double v = strtod(text, &end);
    if (end == text || (*end && strcmp(end, "%") != 0) || !(v >= 0) || !(v < 100))
        return -1;
    return v / 100;
}

static int split_ignore(compare_args *a, const char *value)
{
    free(a->ignore_text);
    a->n_ignore = 0;
    if (!(a->ignore_text = strdup(value)))
        return -1;
    for (char *save = NULL, *k = strtok_r(a->ignore_text, ",", &save); k;
         k = strtok_r(NULL, ",", &save))
        if (a->n_ignore < MAX_IGNORED)
            a->ignore[a->n_ignore++] = k;
    return 0;
}

/* Parses argv; returns -1 after printing a usage error, 1 after --help, 0 otherwise. */
static int parse_args(compare_args *a, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            help();
            return 1;
        } else if ((strcmp(arg, "--threshold") == 0 || strcmp(arg, "--ignore") == 0) && !value) {
            fprintf(stderr, "xpubench compare: %s expects a value\n" COMPARE_USAGE, arg);
            return -1;
        } else if (strcmp(arg, "--threshold") == 0) {
            if ((a->threshold = parse_threshold(value)) < 0) {
                fprintf(stderr,
                        "xpubench compare: --threshold %s: expected a percentage 0..100 "
                        "such as 5%%\n",
                        value);
                return -1;
            }
            i++;
        } else if (strcmp(arg, "--ignore") == 0) {
            if (split_ignore(a, value) != 0)
                return -1;
            i++;
        } else if (strcmp(arg, "--count-disturbed") == 0) {
            a->flags |= XPB_DIFF_COUNT_DISTURBED;
        } else if (arg[0] == '-' && arg[1] != '\0') {
            fprintf(stderr, "xpubench compare: unknown option '%s'\n" COMPARE_USAGE, arg);
            return -1;
        } else if (!a->old_path || !a->new_path) {
            *(a->old_path ? &a->new_path : &a->old_path) = arg;
        } else {
            fprintf(stderr, "xpubench compare: unexpected argument '%s'\n" COMPARE_USAGE, arg);
            return -1;
        }
    }
    if (!a->new_path) {
        fprintf(stderr, "xpubench compare: expected two results files\n" COMPARE_USAGE);
        return -1;
    }
    return 0;
}

/* Whether `key` is a config key of some run of the document viewed in `v`. */
static int config_key_in(const struct xpb_results_doc *v, const char *key)
{
    for (size_t i = 0; i < v->n_runs; i++)
        if (xpb_results_config_has(&v->runs[i].config, key))
            return 1;
    return 0;
}

static int run_compare(const compare_args *a, const struct xpb_results_doc *old_doc,
                       const struct xpb_results_doc *new_doc)
{
    for (size_t i = 0; i < a->n_ignore; i++)
        if (!config_key_in(old_doc, a->ignore[i]) && !config_key_in(new_doc, a->ignore[i])) {
            fprintf(stderr,
                    "xpubench compare: --ignore %s: no run of either file has that config key "
                    "(docs/results.md lists them: backend, threads, batch, ...)\n",
                    a->ignore[i]);
            return XPB_EXIT_USAGE;
        }
    xpb_diff c;
    if (xpb_diff_docs(&c, old_doc, new_doc, a->threshold, a->ignore, a->n_ignore, a->flags) !=
        XPB_OK) {
        fprintf(stderr, "xpubench compare: out of memory\n");
        return XPB_EXIT_FAILURE;
    }
    int rc = xpb_diff_print(stdout, &c, a->old_path, a->new_path) != XPB_OK ? XPB_EXIT_FAILURE
             : c.regressions                                                ? XPB_EXIT_FAILURE
             : c.matched == 0                                               ? XPB_EXIT_NO_MATCH
                                                                            : XPB_EXIT_OK;
    xpb_diff_free(&c);
    return rc;
}

/* Views both documents and compares them. */
static int view_and_compare(const compare_args *a, const json_t *old_doc, const json_t *new_doc)
{
    struct xpb_results_doc old_view, new_view;
    int rc = XPB_EXIT_FAILURE;
    xpb_status st = xpb_results_view(&old_view, old_doc);
    xpb_status st2 = xpb_results_view(&new_view, new_doc);
    if (st != XPB_OK || st2 != XPB_OK)
        fprintf(stderr, "xpubench compare: out of memory\n");
    else
        rc = run_compare(a, &old_view, &new_view);
    xpb_results_view_free(&old_view);
    xpb_results_view_free(&new_view);
    return rc;
}

int xpb_cli_compare(int argc, char **argv)
{
    compare_args a = {.threshold = 0.05};
    json_t *old_doc = NULL, *new_doc = NULL;
    xpb_err err = {{0}};
    int rc = parse_args(&a, argc, argv);
    if (rc != 0) {
        rc = rc > 0 ? XPB_EXIT_OK : XPB_EXIT_USAGE;
        goto free_args;
    }
    if (xpb_results_load(&old_doc, a.old_path, &err) != XPB_OK ||
        xpb_results_load(&new_doc, a.new_path, &err) != XPB_OK) {
        xpb_term_line(stderr, "xpubench compare: %s", err.msg);
        rc = XPB_EXIT_INPUT;
        goto free_docs;
    }
    rc = view_and_compare(&a, old_doc, new_doc);
free_docs:
    json_decref(old_doc);
    json_decref(new_doc);
free_args:
    free(a.ignore_text);
    return rc;
}
