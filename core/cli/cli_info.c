/* `xpubench info MODEL [--set k=v] [--batch N] [--json]`: a model's declared parameters,
 * parameter count, FLOPs per sample (forward and training) and layers with their shapes. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "base/names.h"
#include "cli/cli_common.h"
#include "program/graph.h"
#include "program/model_program.h"

static const char *type_name(uint32_t t)
{
    switch (t) {
    case XPB_MPARAM_STRING:
        return "string";
    case XPB_MPARAM_INT:
        return "int";
    case XPB_MPARAM_FLOAT:
        return "float";
    case XPB_MPARAM_BOOL:
        return "bool";
    }
    return "?";
}

static json_t *shape_json(uint32_t ndim, const int64_t *dims)
{
    json_t *a = json_array();
    for (uint32_t d = 0; d < ndim; d++)
        json_array_append_new(a, json_integer(dims[d]));
    return a;
}

static int64_t numel(const xpb_gvalue *v)
{
    int64_t n = 1;
    for (uint32_t d = 0; d < v->ndim; d++)
        n *= v->dims[d];
    return n;
}

static json_t *info_json(const char *name, const xpb_model_api *m, const xpb_model_program *mp)
{
    const xpb_graph *g = mp->graph;
    json_t *doc = json_object(), *params = json_array(), *layers = json_array();
    json_object_set_new(doc, "model", json_string(name));
    for (uint32_t i = 0; i < m->n_params; i++) {
        const xpb_model_param *p = &m->params[i];
        json_t *e = json_object();
        json_object_set_new(e, "name", json_string(p->name));
        json_object_set_new(e, "type", json_string(type_name(p->type)));
        json_object_set_new(e, "default", json_string(p->default_value ? p->default_value : ""));
        json_object_set_new(e, "allowed", p->allowed ? json_string(p->allowed) : json_null());
        json_object_set_new(e, "help", json_string(p->help ? p->help : ""));
        json_array_append_new(params, e);
    }
    json_object_set_new(doc, "model_parameters", params);
    json_object_set_new(doc, "parameters", json_integer(mp->param_count));
    json_object_set_new(doc, "flops_per_sample_forward", json_integer(mp->flops_forward));
    json_object_set_new(doc, "flops_per_sample_train", json_integer(mp->flops_train));
    json_object_set_new(doc, "batch", json_integer(g->batch));
    json_t *inputs = json_array();
    for (size_t v = 1; v < g->n_values; v++)
        if (g->values[v].kind == XPB_VALUE_INPUT) {
            json_t *e = json_object();
            json_object_set_new(e, "name", json_string(g->values[v].name));
            json_object_set_new(
                e, "dtype", json_string(g->values[v].dtype == XPB_DTYPE_I32 ? "int32" : "float32"));
            json_object_set_new(e, "shape", shape_json(g->values[v].ndim, g->values[v].dims));
            json_array_append_new(inputs, e);
        }
    json_object_set_new(doc, "inputs", inputs);
    for (size_t nid = 1; nid < g->n_nodes; nid++) {
        const xpb_gnode *n = &g->nodes[nid];
        const xpb_gvalue *y = &g->values[n->output];
        json_t *e = json_object(), *w = json_array();
        int64_t count = 0;
        json_object_set_new(e, "layer", json_string(n->layer));
        json_object_set_new(e, "op",
                            json_string(n->kind == XPB_GNODE_STOP_GRADIENT ? "STOP_GRADIENT"
                                                                           : xpb_op_name(n->kind)));
        json_object_set_new(e, "output", shape_json(y->ndim, y->dims));
        for (uint32_t i = 0; i < n->n_inputs; i++) {
            const xpb_gvalue *v = &g->values[n->inputs[i]];
            if (v->kind != XPB_VALUE_PARAM)
                continue;
            json_t *pw = json_object();
            json_object_set_new(pw, "name", json_string(v->name));
            json_object_set_new(pw, "shape", shape_json(v->ndim, v->dims));
            json_object_set_new(pw, "trainable", json_boolean(v->trainable));
            json_array_append_new(w, pw);
            if (v->trainable)
                count += numel(v);
        }
        json_object_set_new(e, "weights", w);
        json_object_set_new(e, "parameters", json_integer(count));
        json_array_append_new(layers, e);
    }
    json_object_set_new(doc, "layers", layers);
    return doc;
}

static void print_text(const char *name, const xpb_model_api *m, const xpb_model_program *mp)
{
    const xpb_graph *g = mp->graph;
    char s[96];
    printf("model %s\n", name);
    if (m->n_params) {
        printf("\nmodel parameters (set with --set NAME=VALUE, or params: in a scenario):\n");
        for (uint32_t i = 0; i < m->n_params; i++) {
            const xpb_model_param *p = &m->params[i];
            printf("  %-12s %-6s default %-8s %s%s%s\n", p->name, type_name(p->type),
                   p->default_value ? p->default_value : "", p->help ? p->help : "",
                   p->allowed ? "  allowed: " : "", p->allowed ? p->allowed : "");
        }
    }
    printf("\nparameters (trainable): %lld\n", (long long)mp->param_count);
    printf("FLOPs per sample:       forward %.4g G, training step %.4g G (multiply-add = 2)\n",
           mp->flops_forward / 1e9, mp->flops_train / 1e9);
    printf("\ninputs (batch %u):\n", g->batch);
    for (size_t v = 1; v < g->n_values; v++)
        if (g->values[v].kind == XPB_VALUE_INPUT)
            printf("  %-16s %s %s\n", g->values[v].name,
                   g->values[v].dtype == XPB_DTYPE_I32 ? "int32  " : "float32",
                   xpb_shape_str(s, sizeof s, g->values[v].ndim, g->values[v].dims));
    printf("\n  %-28s %-16s %-22s %12s\n", "layer", "op", "output", "parameters");
    for (size_t nid = 1; nid < g->n_nodes; nid++) {
        const xpb_gnode *n = &g->nodes[nid];
        const xpb_gvalue *y = &g->values[n->output];
        int64_t count = 0;
        for (uint32_t i = 0; i < n->n_inputs; i++) {
            const xpb_gvalue *v = &g->values[n->inputs[i]];
            if (v->kind == XPB_VALUE_PARAM && v->trainable)
                count += numel(v);
        }
        printf("  %-28s %-16s %-22s %12lld\n", n->layer,
               n->kind == XPB_GNODE_STOP_GRADIENT ? "STOP_GRADIENT" : xpb_op_name(n->kind),
               xpb_shape_str(s, sizeof s, y->ndim, y->dims), (long long)count);
    }
}

int xpb_cli_info(int argc, char **argv)
{
    const char *model_name = NULL;
    int as_json = 0, rc = XPB_EXIT_OK;
    long batch = 1;
    xpb_kv kv[64];
    size_t n_kv = 0;
    xpb_program_options cfg = {
        .mode = XPB_MODE_TRAIN, .seed = 42, .lr = NAN, .momentum = NAN, .weight_decay = NAN};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: xpubench info MODEL [--set NAME=VALUE]... [--batch N] [--json]\n\n"
                   "Shows a model's declared parameters (variant and friends), its trainable\n"
                   "parameter count, FLOPs per sample for the forward pass and for a training\n"
                   "step (multiply-add = 2), its inputs and every layer with its output shape.\n");
            return XPB_EXIT_OK;
        } else if (strcmp(argv[i], "--json") == 0) {
            as_json = 1;
        } else if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc) {
            char *end;
            batch = strtol(argv[++i], &end, 10);
            if (*end || batch < 1 || batch > 65536) {
                fprintf(stderr, "xpubench info: --batch: expected 1..65536, found '%s'\n", argv[i]);
                return XPB_EXIT_USAGE;
            }
        } else if (strcmp(argv[i], "--set") == 0 && i + 1 < argc) {
            char *eq = strchr(argv[++i], '=');
            if (!eq || eq == argv[i] || n_kv == 64) {
                fprintf(stderr, "xpubench info: --set needs NAME=VALUE, found '%s'\n", argv[i]);
                return XPB_EXIT_USAGE;
            }
            *eq = 0;
            const char *key = strncmp(argv[i], "params.", 7) == 0 ? argv[i] + 7 : argv[i];
            if (strcmp(key, "variant") == 0)
                cfg.variant = eq + 1;
            else
                kv[n_kv++] = (xpb_kv){(char *)key, eq + 1};
        } else if (argv[i][0] == '-' || model_name) {
            fprintf(stderr, "xpubench info: unexpected argument '%s' (see --help)\n", argv[i]);
            return XPB_EXIT_USAGE;
        } else {
            model_name = argv[i];
        }
    }
    if (!model_name) {
        fprintf(stderr, "usage: xpubench info MODEL [--set NAME=VALUE]... [--batch N] [--json]\n");
        return XPB_EXIT_USAGE;
    }
    xpb_registry *r = xpb_cli_registry(1);
    if (!r)
        return XPB_EXIT_PLUGIN;
    const xpb_model_api *m = xpb_registry_model(r, model_name);
    if (!m) {
        fprintf(stderr, "xpubench info: no model plugin named '%s' (see `xpubench list`)\n",
                model_name);
        xpb_registry_free(r);
        return XPB_EXIT_PLUGIN;
    }
    cfg.model = model_name;
    cfg.batch = (uint32_t)batch;
    cfg.params = kv;
    cfg.n_params = n_kv;
    xpb_model_program *mp;
    xpb_err err = {{0}};
    if (xpb_model_program_create(&mp, m, &cfg, &err) != XPB_OK) {
        fprintf(stderr, "xpubench info: %s\n", err.msg);
        xpb_registry_free(r);
        return XPB_EXIT_INPUT;
    }
    if (as_json) {
        json_t *doc = info_json(model_name, m, mp);
        char *text = json_dumps(doc, JSON_INDENT(2));
        if (text)
            puts(text);
        else
            rc = XPB_EXIT_FAILURE;
        free(text);
        json_decref(doc);
    } else {
        print_text(model_name, m, mp);
    }
    xpb_model_program_free(mp);
    xpb_registry_free(r);
    return rc;
}
