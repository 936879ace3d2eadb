/* `xpubench run SCENARIO [-o FILE] [--force] [--set k=v]... [--dump DIR]`: runs every expanded
 * run of a scenario into one results file. The file is created before the first run (an
 * existing one is replaced only with --force), marked incomplete until the last run is
 * written, and rewritten atomically after each finished run, so that Ctrl-C, a crash or kill -9
 * never loses what is done and always leaves a file that says whether the invocation completed;
 * a problem with the output location stops the invocation before anything runs, and a run that
 * cannot be saved stops it at once. Launched as several ranks (mpirun, srun:
 * docs/distributed.md) every rank runs every run together with the others, and rank 0 alone
 * prints, dumps and writes the results file. */
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "parallel/agree.h"
#include "cli/cli.h"
#include "check/dump.h"
#include "check/verify.h"
#include "cli/cli_common.h"
#include "machine/env.h"
#include "parallel/parallel.h"
#include "plugin/guard.h"
#include "render/terminal.h"
#include "results/results.h"
#include "results/tta_table.h"
#include "results/view.h"
#include "run/runner.h"
#include "scenario/scenario.h"
#include "scenario/scenario_check.h"
#include "scenario/scenario_guard.h"

static volatile sig_atomic_t stop_requested;

static void on_sigint(int sig)
{
    (void)sig;
    stop_requested = 1;
    signal(SIGINT, SIG_DFL); /* a second Ctrl-C stops at once */
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: xpubench run SCENARIO.yaml [-o RESULTS.json] [--force] [--set KEY=VALUE]... "
            "[--dump DIR] [--yes]\n\n"
            "Runs every run of the scenario (docs/scenarios.md) and writes one results file\n"
            "(docs/results.md), created before the first run, marked incomplete until the\n"
            "last run is in it, rewritten atomically after each run. Default output: the\n"
            "scenario's `output`, else results/<name>-<UTC time>.json.\n\n"
            "  -o, --output FILE  results file (one that exists is refused: nothing runs)\n"
            "  --force            replace an existing results file\n"
            "  --set KEY=VALUE    override a run key in every run (e.g. batch=32, backend=\n"
            "                     cpu_onednn, params.dropout=true, batch=[32,64] to sweep)\n"
            "  --dump DIR         write the first step of each run (initial parameters, the\n"
            "                     batch, losses, gradients) as .npy files + manifest.json\n"
            "                     (docs/dump.md); several runs go to DIR/<run id>/\n"
            "  --yes              start a scenario of more runs than its max_runs (default\n"
            "                     100): the count and the least time are printed first\n\n"
            "Ctrl-C stops after the current step; finished runs stay in the results file,\n"
            "which then says the invocation was interrupted. A run that cannot be saved\n"
            "(disk full, file gone) stops the invocation and says what was not saved.\n"
            "Started by mpirun or srun as several ranks, the runs train data-parallel over\n"
            "them (docs/distributed.md); rank 0 prints and writes the results file.\n"
            "Exit: 0 all runs ok or unsupported, 1 a run failed or could not be saved, 2 usage\n"
            "(also: the output file exists, more runs than the scenario's limit without --yes),\n"
            "3 bad scenario,\n"
            "4 plugin or MPI module missing, 5 a plugin crashed (stderr names the plugin,\n"
            "its entry point and the run; finished runs stay in the file), 130 interrupted.\n");
}

/* One line on stderr when a run ends: its throughput, step time and losses, or its status
 * and error. */
static void summary_line(const struct xpb_results_run *run)
{
    const struct xpb_results_metrics *m = &run->metrics;
    if (run->ok && run->has_tta) {
        const struct xpb_results_tta *t = &run->tta;
        fprintf(stderr, "%s: ok, %lld of %lld runs reached test accuracy %.4f", run->id,
                (long long)t->seconds.converged, (long long)t->seconds.runs, t->target);
        char why[64];
        xpb_results_tta_stopped_note(why, sizeof why, t);
        fputs(why, stderr);
        if (!isnan(t->seconds.mean))
            fprintf(stderr, ", time to target %.1f s (Olympic mean of %lld)", t->seconds.mean,
                    (long long)t->seconds.used);
        else
            fprintf(stderr, ", no time to target (a scored run did not converge)");
        fprintf(stderr, "\n");
    } else if (run->ok && run->has_metrics) {
        fprintf(stderr, "%s: ok, %.1f samples/s, step p50 %.2f ms", run->id,
                isnan(m->throughput.median) ? 0.0 : m->throughput.median,
                isnan(m->step_time_s.p50) ? 0.0 : m->step_time_s.p50 * 1e3);
        if (m->tokens_per_s > 0)
            fprintf(stderr, ", %.0f tokens/s", m->tokens_per_s);
        if (!isnan(m->loss.first) && !isnan(m->loss.last))
            fprintf(stderr, ", loss %.4f -> %.4f", m->loss.first, m->loss.last);
        if (run->has_verification && run->verification.requested == 1)
            fprintf(stderr, ", %s", run->verification.message ? run->verification.message : "");
        fprintf(stderr, "\n");
    } else {
        fprintf(stderr, "%s: %s: %s\n", run->id ? run->id : "?", run->status ? run->status : "?",
                run->error);
    }
}

static void sanitize(char *out, size_t size, const char *id)
{
    size_t n = 0;
    for (const char *p = id; *p && n + 1 < size; p++)
        out[n++] = (char)((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                                  (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.'
                              ? *p
                              : '_');
    out[n] = 0;
}

/* What `run` was asked for. */
typedef struct run_args {
    const char *path, *output, *dump;
    int force; /* --force: an existing results file may be replaced */
    int yes;   /* --yes: more runs than the scenario's limit may start */
    xpb_cli_sets sets;
} run_args;

/* Parses the command line. -1: print usage (and return `*rc`). */
static int parse_args(run_args *a, int argc, char **argv, int *rc)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            *rc = XPB_EXIT_OK;
            return -1;
        } else if ((strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) &&
                   i + 1 < argc) {
            a->output = argv[++i];
        } else if (strcmp(argv[i], "--force") == 0) {
            a->force = 1;
        } else if (strcmp(argv[i], "--dump") == 0 && i + 1 < argc) {
            a->dump = argv[++i];
        } else if (strcmp(argv[i], "--yes") == 0) {
            a->yes = 1;
        } else if (strcmp(argv[i], "--set") == 0 && i + 1 < argc) {
            if (xpb_cli_sets_add(&a->sets, "run", argv[++i])) {
                *rc = XPB_EXIT_USAGE;
                return -1;
            }
        } else if (argv[i][0] == '-' || a->path) {
            xpb_term_line(stderr, "xpubench run: unexpected argument '%s'", argv[i]);
            usage(stderr);
            *rc = XPB_EXIT_USAGE;
            return -1;
        } else {
            a->path = argv[i];
        }
    }
    if (!a->path) {
        usage(stderr);
        *rc = XPB_EXIT_USAGE;
        return -1;
    }
    return 0;
}

/* The results file: -o, else the scenario's `output`, else results/<name>-<UTC time>.json
 * (written into `buf`). */
static const char *output_path(const run_args *a, const xpb_scenario *s, char *buf, size_t size)
{
    if (a->output)
        return a->output;
    if (s->output)
        return s->output;
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    snprintf(buf, size, "results/%s-%s.json", s->name, stamp);
    return buf;
}

/* A new results document with the scenario and the environment (with the MPI library of a
 * run over several ranks); owned by the caller. */
static json_t *new_document(const run_args *a, const xpb_scenario *s, const xpb_registry *r,
                            const xpb_parallel *par)
{
    json_t *doc = xpb_results_new();
    json_t *scen = json_object(), *overrides = json_array();
    if (!doc || !scen || !overrides) {
        json_decref(doc);
        json_decref(scen);
        json_decref(overrides);
        return NULL;
    }
    for (size_t i = 0; i < a->sets.n; i++)
        json_array_append_new(overrides, json_string(a->sets.items[i]));
    json_object_set_new(scen, "path", json_string(a->path));
    json_object_set_new(scen, "name", json_string(s->name));
    json_object_set_new(scen, "sha256", json_string(s->sha256));
    json_object_set_new(scen, "overrides", overrides);
    json_object_set_new(scen, "baseline", s->baseline ? json_string(s->baseline) : json_null());
    json_object_set_new(doc, "scenario", scen);
    json_object_set_new(doc, "environment", xpb_env_collect(r));
    if (par)
        xpb_results_add_library(doc, "mpi", xpb_parallel_library(par));
    return doc;
}

/* How the runs went. */
typedef struct run_outcome {
    int failed;       /* a run's status is "failed" */
    int unsupported;  /* a run was unsupported and its scenario did not allow it */
    int write_failed; /* a finished run could not be saved (on any rank: rank 0's failure) */
    int out_of_memory;
    char unsaved[256];  /* the run that could not be saved (rank 0) */
    size_t not_started; /* runs not started because of it */
} run_outcome;

/* Before the first run, on the rank that writes: creates the results file with no run yet,
 * marked incomplete, so that a problem with the output location (a directory, a path without
 * permission, a full disk) stops the invocation before anything runs, and an invocation killed
 * at any moment leaves a file saying it did not complete. An existing file is never replaced
 * without --force (nor a directory with it). XPB_INVALID_ARGUMENT when the file exists,
 * otherwise the status of writing it; err says which, naming the file. */
static xpb_status open_output(json_t *doc, const char *output, int force, xpb_err *err)
{
    struct stat sb;
    if (lstat(output, &sb) == 0 && S_ISDIR(sb.st_mode))
        return xpb_err_set(err, XPB_IO_ERROR,
                           "%s is a directory: name the results file with -o (nothing was run)",
                           output);
    if (!force && lstat(output, &sb) == 0) {
        json_t *old = NULL;
        xpb_err why = {{0}};
        char held[96] = "not a results file";
        if (xpb_results_load(&old, output, &why) == XPB_OK) {
            size_t n = xpb_results_run_count(old);
            snprintf(held, sizeof held, "results of %zu run%s, %s", n, n == 1 ? "" : "s",
                     xpb_results_complete(old) ? "complete" : "incomplete");
        }
        json_decref(old);
        return xpb_err_set(err, XPB_INVALID_ARGUMENT,
                           "%s exists (%s) and would be replaced: nothing was run. Write to "
                           "another file (-o FILE), or pass --force to replace it",
                           output, held);
    }
    xpb_results_mark_interrupted(doc);
    xpb_status st =
        force ? xpb_results_write(doc, output, err) : xpb_results_create(doc, output, err);
    if (st == XPB_INVALID_ARGUMENT) /* created meanwhile by someone else */
        xpb_err_prefix(err, "pass --force to replace it (nothing was run)");
    else if (st != XPB_OK)
        xpb_err_prefix(err, "cannot write the results file, so nothing was run");
    return st;
}

/* After run `id`: rank 0 rewrites the document; with several ranks every rank learns whether
 * that worked, so that all stop together when it did not. 0 when saved. */
static int save(run_outcome *o, json_t *doc, const char *output, const char *id, xpb_parallel *par)
{
    xpb_err err = {{0}}, agreed = {{0}};
    xpb_status st = XPB_OK;
    if (!par || par->comm.rank == 0)
        st = xpb_results_write(doc, output, &err);
    if (par)
        st = xpb_parallel_agree(par, st, &err, "saving the results", 0, &agreed);
    if (st == XPB_OK)
        return 0;
    if (!par || par->comm.rank == 0) {
        xpb_term_line(stderr, "xpubench run: run '%s' finished but cannot be saved: %s; stopping",
                      id, err.msg);
        snprintf(o->unsaved, sizeof o->unsaved, "%s", id);
    }
    o->write_failed = 1;
    return -1;
}

/* Runs every run of the scenario in order until Ctrl-C or a run that cannot be saved,
 * rewriting the results file after each one so that a crash loses at most the run in progress;
 * the last write of an invocation that ran everything clears the file's incomplete mark. Ranks
 * other than 0 run with rank 0 and keep nothing. */
static void run_all(run_outcome *o, json_t *doc, const xpb_scenario *s, const xpb_registry *r,
                    const char *output, const char *dump, xpb_parallel *par)
{
    int writer = !par || par->comm.rank == 0;
    size_t i = 0;
    for (; i < s->n_runs && !stop_requested && !o->write_failed; i++) {
        const xpb_run_config *c = &s->runs[i];
        char label[256], dump_dir[4096], safe[256];
        snprintf(label, sizeof label, "[%zu/%zu] %s", i + 1, s->n_runs, c->id);
        if (dump) {
            sanitize(safe, sizeof safe, c->id);
            if (s->n_runs == 1)
                snprintf(dump_dir, sizeof dump_dir, "%s", dump);
            else
                snprintf(dump_dir, sizeof dump_dir, "%s/%s", dump, safe);
        }
        xpb_guard_activity("during run '%s'", label);
        xpb_runner_opts ro = {.label = label,
                              .stop = &stop_requested,
                              .par = par,
                              .dump_dir = dump && writer ? dump_dir : NULL,
                              .dump_step = xpb_dump_step,
                              .verify_step = xpb_verify_step};
        json_t *run = xpb_run_one(r, c, &ro);
        xpb_guard_activity(NULL);
        if (!run) {
            fprintf(stderr, "xpubench run: out of memory\n");
            o->out_of_memory = 1;
            return;
        }
        xpb_arena arena = {0};
        struct xpb_results_run view;
        if (xpb_results_view_run(&view, &arena, run, XPB_RESULTS_SCHEMA_VERSION) != XPB_OK) {
            fprintf(stderr, "xpubench run: out of memory\n");
            o->out_of_memory = 1;
            xpb_arena_free(&arena);
            json_decref(run);
            return;
        }
        if (view.status && strcmp(view.status, "failed") == 0)
            o->failed = 1;
        if (view.status && strcmp(view.status, "unsupported") == 0 && !c->allow_unsupported)
            o->unsupported = 1;
        if (view.status && strcmp(view.status, "interrupted") == 0)
            stop_requested = 1; /* a stop asked of another rank ends this one too */
        if (writer)
            summary_line(&view);
        xpb_arena_free(&arena);
        if (writer) {
            xpb_results_append_run(doc, run);
            if (i + 1 == s->n_runs && !stop_requested)
                xpb_results_mark_complete(doc); /* the last write of a complete invocation */
            xpb_results_add_comparisons(doc);
        } else {
            json_decref(run);
        }
        if (save(o, doc, output, c->id, par) == 0 && writer)
            xpb_guard_epilogue("the %zu finished run%s kept in %s%s", xpb_results_run_count(doc),
                               xpb_results_run_count(doc) == 1 ? " is" : "s are", output,
                               xpb_results_complete(doc) ? "" : " (marked incomplete)");
    }
    o->not_started = s->n_runs - i;
    if (s->n_runs == 0 && writer && !stop_requested) { /* nothing to run: complete at once */
        xpb_results_mark_complete(doc);
        save(o, doc, output, "(none)", NULL);
    }
}

/* Launched as several ranks: every rank must run the same scenario with the same plugins.
 * Agrees on `st` (this rank's loading so far), then compares the scenario's hash and runs with
 * rank 0's. XPB_OK, or the agreed failure in err. */
static xpb_status agree_on_scenario(xpb_parallel *par, xpb_status st, const xpb_scenario *s,
                                    xpb_err *err)
{
    xpb_err mine = *err;
    if ((st = xpb_parallel_agree(par, st, &mine, "loading the scenario", 0, err)))
        return st;
    struct {
        char sha[72];
        uint64_t runs;
    } me = {.runs = s->n_runs}, *all = calloc(par->comm.size, sizeof *all);
    if (!all)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    snprintf(me.sha, sizeof me.sha, "%s", s->sha256);
    st = xpb_parallel_gather(par, &me, all, sizeof me, "comparing the scenarios", err);
    for (uint32_t r = 1; st == XPB_OK && r < par->comm.size; r++)
        if (strcmp(all[r].sha, all[0].sha) != 0 || all[r].runs != all[0].runs)
            st = xpb_err_set(err, XPB_INVALID_ARGUMENT,
                             "rank %u read another scenario than rank 0 (SHA-256 %.12s... with "
                             "%llu runs against %.12s... with %llu): every rank needs the same "
                             "file and --set options",
                             r, all[r].sha, (unsigned long long)all[r].runs, all[0].sha,
                             (unsigned long long)all[0].runs);
    free(all);
    return st;
}

/* Prints the table and profiles, says where the results are, and returns the exit code. */
static int report(const json_t *doc, const char *output, const run_outcome *o)
{
    size_t n_runs = xpb_results_run_count(doc);
    printf("\n");
    xpb_results_print_table(stdout, doc);
    xpb_results_print_profiles(stdout, doc, 10, NULL); /* runs with profile: true */
    if (!o->write_failed) {
        putchar('\n');
        xpb_term_line(stdout, "results: %s", output);
    }
    if (o->write_failed) { /* what the file lacks, once more at the end */
        size_t kept = n_runs ? n_runs - 1 : 0;
        xpb_term_line(stderr,
                      "xpubench run: NOT SAVED: run '%s' (its row is in the table above) is not in "
                      "%s, and %zu run%s not started; the file holds the %zu run%s before it and "
                      "says it is incomplete",
                      o->unsaved, output, o->not_started, o->not_started == 1 ? " was" : "s were",
                      kept, kept == 1 ? "" : "s");
        return XPB_EXIT_FAILURE;
    }
    if (stop_requested) {
        xpb_term_line(stderr,
                      "xpubench run: interrupted; %zu finished run%s kept in %s, which says it is "
                      "incomplete",
                      n_runs, n_runs == 1 ? "" : "s", output);
        return XPB_EXIT_INTERRUPTED;
    }
    if (o->out_of_memory || o->failed || o->write_failed)
        return XPB_EXIT_FAILURE;
    if (o->unsupported) {
        fprintf(stderr, "xpubench run: a run was unsupported (see above); set allow_unsupported: "
                        "true on runs that may be\n");
        return XPB_EXIT_UNSUPPORTED;
    }
    return XPB_EXIT_OK;
}

/* What a run invocation works with, from its command line to its results file. */
typedef struct run_setup {
    xpb_scenario *s;
    xpb_registry *r;
    json_t *doc;        /* the results document (every rank builds one; rank 0 writes it) */
    const char *output; /* the results file (-o, the scenario's, or default_out) */
    char default_out[512];
} run_setup;

/* Loads the scenario and the plugins, builds the results document and (rank 0) creates the
 * results file, agreeing with the other ranks when there are some. XPB_OK, or the exit code in
 * *rc with the message printed. */
static xpb_status prepare(run_setup *su, const run_args *a, xpb_parallel *par, int *rc)
{
    xpb_err err = {{0}};
    int writer = !par || par->comm.rank == 0;
    xpb_status st = xpb_scenario_load(&su->s, a->path, a->sets.items, a->sets.n, &err);
    *rc = st == XPB_INVALID_ARGUMENT ? XPB_EXIT_USAGE : XPB_EXIT_INPUT;
    if (st == XPB_OK && !(su->r = xpb_cli_registry(!writer))) {
        st = xpb_err_set(&err, XPB_NOT_FOUND, "no plugin could be loaded");
        *rc = XPB_EXIT_PLUGIN;
    }
    if (st == XPB_OK && (st = xpb_scenario_check_plugins(su->s, su->r, &err)))
        *rc = st == XPB_NOT_FOUND ? XPB_EXIT_PLUGIN : XPB_EXIT_INPUT;
    if (st == XPB_OK && writer) {
        char size[160];
        xpb_term_line(stderr, "xpubench run: %s: scenario '%s', %s", a->path, su->s->name,
                      xpb_scenario_size_text(size, sizeof size, su->s));
    }
    /* before the output exists: a refused sweep leaves nothing behind */
    if (st == XPB_OK && (st = xpb_scenario_guard(su->s, a->yes, &err)))
        *rc = XPB_EXIT_USAGE;
    if (st == XPB_OK) {
        if (writer)
            xpb_scenario_warn_backends(su->s, su->r, stderr);
        su->output = output_path(a, su->s, su->default_out, sizeof su->default_out);
        if (!(su->doc = new_document(a, su->s, su->r, par))) {
            st = xpb_err_set(&err, XPB_OUT_OF_MEMORY, "out of memory");
            *rc = XPB_EXIT_FAILURE;
        }
    }
    if (st == XPB_OK && writer && (st = open_output(su->doc, su->output, a->force, &err)))
        *rc = st == XPB_INVALID_ARGUMENT ? XPB_EXIT_USAGE : XPB_EXIT_FAILURE;
    if (par && (st = agree_on_scenario(par, st, su->s, &err)) && *rc == XPB_EXIT_OK)
        *rc = XPB_EXIT_INPUT;
    if (st)
        xpb_term_line(stderr, "xpubench run: %s", err.msg);
    return st;
}

int xpb_cli_run(int argc, char **argv)
{
    run_args a = {0};
    int rc = XPB_EXIT_OK;
    if (parse_args(&a, argc, argv, &rc)) {
        xpb_cli_sets_free(&a.sets);
        return rc;
    }
    xpb_err err = {{0}};
    xpb_parallel *par = NULL;
    run_setup su = {0};
    if (xpb_parallel_open(&par, &err)) {
        xpb_term_line(stderr, "xpubench run: %s", err.msg);
        xpb_cli_sets_free(&a.sets);
        return XPB_EXIT_PLUGIN;
    }
    if (par && par->comm.rank != 0)
        setenv("XPB_NO_PROGRESS", "1", 1); /* one progress bar: rank 0's */
    if (prepare(&su, &a, par, &rc))
        goto free_setup;

    struct sigaction sa = {0};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    stop_requested = 0;
    if (!par || par->comm.rank == 0)
        xpb_guard_epilogue("no run had finished; %s holds none and says it is incomplete",
                           su.output);
    run_outcome o = {0};
    run_all(&o, su.doc, su.s, su.r, su.output, a.dump, par);
    rc = !par || par->comm.rank == 0                     ? report(su.doc, su.output, &o)
         : stop_requested                                ? XPB_EXIT_INTERRUPTED
         : o.out_of_memory || o.failed || o.write_failed ? XPB_EXIT_FAILURE
         : o.unsupported                                 ? XPB_EXIT_UNSUPPORTED
                                                         : XPB_EXIT_OK;
    signal(SIGINT, SIG_DFL);
free_setup:
    json_decref(su.doc);
    xpb_registry_free(su.r);
    xpb_scenario_free(su.s);
    xpb_cli_sets_free(&a.sets);
    xpb_parallel_close(par);
    return rc;
}
