/* Scenario runs against loaded plugins (see scenario_check.h). */
#include "scenario_check.h"

#include <stdio.h>

#include "builder.h"

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

size_t xpb_scenario_warn_backends(const xpb_scenario *s, const xpb_registry *r, FILE *f)
{
    char names[512];
    size_t missing = 0;
    names_of(names, sizeof names, r, XPB_PLUGIN_BACKEND);
    for (size_t i = 0; i < s->n_runs; i++) {
        const xpb_run_config *c = &s->runs[i];
        if (xpb_registry_backend(r, c->backend))
            continue;
        missing++;
        fprintf(f,
                "xpubench: warning: %s:%d: run '%s': backend '%s' is not loaded (loaded: %s); "
                "the run will be reported as unsupported\n",
                c->file, c->line, c->id, c->backend, names);
    }
    return missing;
}
