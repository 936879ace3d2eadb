/* Scenario runs against loaded plugins (see scenario_check.h). */
#include "scenario/scenario_check.h"

#include <stdio.h>
#include <string.h>

#include "program/builder.h"

static void names_of(char *buf, size_t size, const xpb_registry *r, uint32_t kind)
{
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < xpb_registry_count(r) && used < size; i++) {
        const xpb_plugin_descriptor *d = xpb_registry_at(r, i, NULL);
        if (d->kind == kind)
            used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? ", " : "", d->name);
    }
    if (!used)
        snprintf(buf, size, "none");
}

xpb_status xpb_scenario_check_plugins(const xpb_scenario *s, const xpb_registry *r, xpb_err *err)
{
    char names[512];
    for (size_t i = 0; i < s->n_runs; i++) {
        const xpb_run_config *c = &s->runs[i];
        const xpb_model_api *m = xpb_registry_model(r, c->model);
        if (!m) {
            names_of(names, sizeof names, r, XPB_PLUGIN_MODEL);
            return xpb_err_set(err, XPB_NOT_FOUND,
                               "%s:%d: run '%s': model: expected one of the loaded models (%s), "
                               "found '%s'",
                               c->file, c->line, c->id, names, c->model);
        }
        xpb_status st =
            xpb_model_params_check(m, c->model, c->variant, c->params, c->n_params, err);
        if (st) {
            xpb_err_prefix(err, "%s:%d: run '%s'", c->file, c->line, c->id);
            return st;
        }
    }
    return XPB_OK;
}

/* The capabilities a run's settings rely on; a backend without one ignores the setting. */
enum needs { NEEDS_FUSION, NEEDS_THREADS };

/* Whether run c sets what `need` is about to something other than the backend's default
 * behaviour: unfused ops, or a thread count. */
static int asks_for(const xpb_run_config *c, enum needs need)
{
    return need == NEEDS_FUSION ? c->fusion == 0 : c->threads != 0;
}

/* Whether an earlier run of the same scenario run (same file and line), on the same backend,
 * already asked for `need`: its warning was printed then. The runs of one scenario run are
 * next to each other, so the walk stops at the first run of another one. */
static int warned_before(const xpb_scenario *s, size_t i, enum needs need)
{
    const xpb_run_config *c = &s->runs[i];
    for (size_t j = i; j-- > 0;) {
        const xpb_run_config *p = &s->runs[j];
        if (p->line != c->line || strcmp(p->file, c->file) != 0)
            return 0;
        if (strcmp(p->backend, c->backend) == 0 && asks_for(p, need))
            return 1;
    }
    return 0;
}

/* Prints the warnings of run i on a loaded backend with capabilities `caps`; returns their
 * number. */
static size_t warn_ignored_settings(const xpb_scenario *s, size_t i, uint64_t caps, FILE *f)
{
    const xpb_run_config *c = &s->runs[i];
    size_t printed = 0;
    if (!(caps & XPB_CAP_FUSION) && asks_for(c, NEEDS_FUSION) &&
        !warned_before(s, i, NEEDS_FUSION)) {
        fprintf(f,
                "xpubench: warning: %s:%d: run '%s': backend '%s' does not fuse: fusion true "
                "and false measure the same thing\n",
                c->file, c->line, c->id, c->backend);
        printed++;
    }
    if (!(caps & XPB_CAP_THREADS) && asks_for(c, NEEDS_THREADS) &&
        !warned_before(s, i, NEEDS_THREADS)) {
        fprintf(f,
                "xpubench: warning: %s:%d: run '%s': backend '%s' ignores threads: threads %u "
                "measures the same as 0 (the backend's default)\n",
                c->file, c->line, c->id, c->backend, (unsigned)c->threads);
        printed++;
    }
    return printed;
}

size_t xpb_scenario_warn_backends(const xpb_scenario *s, const xpb_registry *r, FILE *f)
{
    char names[512];
    size_t printed = 0;
    names_of(names, sizeof names, r, XPB_PLUGIN_BACKEND);
    for (size_t i = 0; i < s->n_runs; i++) {
        const xpb_run_config *c = &s->runs[i];
        const xpb_plugin_descriptor *d = xpb_registry_find(r, XPB_PLUGIN_BACKEND, c->backend);
        if (d) {
            printed += warn_ignored_settings(s, i, xpb_plugin_caps(d), f);
            continue;
        }
        printed++;
        fprintf(f,
                "xpubench: warning: %s:%d: run '%s': backend '%s' is not loaded (loaded: %s); "
                "the run will be reported as unsupported\n",
                c->file, c->line, c->id, c->backend, names);
    }
    /* a baseline no run uses gives no backend comparison at all */
    int used = s->baseline == NULL;
    for (size_t i = 0; i < s->n_runs && !used; i++)
        used = strcmp(s->runs[i].backend, s->baseline) == 0;
    if (!used) {
        printed++;
        fprintf(f,
                "xpubench: warning: %s: baseline '%s' is the backend of no run: there will be no "
                "backend comparison\n",
                s->path, s->baseline);
    }
    return printed;
}
