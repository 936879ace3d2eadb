/* `xpubench info MODEL [--variant V] [--set k=v] [--batch N] [--json]`: a model's declared
 * parameters, parameter count, FLOPs per sample (forward and training) and layers with their
 * shapes; with `--program [--mode train|infer] [--precision P]` the lowered program a backend
 * receives instead (cli_info_program.c). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "render/terminal.h"
#include "base/names.h"
#include "cli/cli_common.h"
#include "cli/cli_info_program.h"
#include "plugin/guard.h"
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

#define USAGE                                                                                      \
    "usage: xpubench info MODEL [--variant V] [--set NAME=VALUE]... [--batch N] [--json]\n"        \
    "                           [--program [--mode train|infer] [--precision P]]\n"

static void usage(FILE *f)
{
    fprintf(f,
            USAGE
            "\n"
            "Shows a model's declared parameters (variant and friends), its trainable\n"
            "parameter count, FLOPs per sample for the forward pass and for a training\n"
            "step (multiply-add = 2), its inputs and every layer with its output shape.\n\n"
            "  --variant V       the model's variant (the same as --set variant=V)\n"
            "  --set NAME=VALUE  a model parameter, as a scenario's params: would set it\n"
            "  --batch N         samples per step (default 1)\n"
            "  --json            the same as JSON\n"
            "  --program         instead: the program a backend's compile receives, as the\n"
            "                    host lowered it: op kinds used, tensors (role, dtype, shape,\n"
            "                    flags, lifetime), then every op of every phase in order with\n"
            "                    the attributes it sets and its input and output tensors\n"
            "  --mode M          with --program: train (default: forward, backward,\n"
            "                    optimizer updates) or infer (the inference program)\n"
            "  --precision P     with --program: the precision policy a run would compile it\n"
            "                    with (%s; a compile option: the program\n"
            "                    itself is the same for every policy)\n",
            xpb_precision_expected());
}

/* What `info` was asked for. */
typedef struct info_args {
    const char *model;
    int as_json, program, mode_given, precision_given;
    long batch;
    xpb_kv kv[64];
    size_t n_kv;
    uint32_t precision;
    xpb_program_options cfg;
} info_args;

/* Option `a` with value `v`; -1 when fine, else the exit code after a message. */
static int parse_value(info_args *a, const char *opt, char *v)
{
    if (strcmp(opt, "--batch") == 0) {
        char *end;
        a->batch = strtol(v, &end, 10);
        if (*end || a->batch < 1 || a->batch > 65536) {
            fprintf(stderr, "xpubench info: --batch: expected 1..65536, found '%s'\n", v);
            return XPB_EXIT_USAGE;
        }
    } else if (strcmp(opt, "--variant") == 0) {
        a->cfg.variant = v;
    } else if (strcmp(opt, "--mode") == 0) {
        a->mode_given = 1;
        if (strcmp(v, "train") == 0) {
            a->cfg.mode = XPB_MODE_TRAIN;
        } else if (strcmp(v, "infer") == 0 || strcmp(v, "inference") == 0) {
            a->cfg.mode = XPB_MODE_INFERENCE;
        } else {
            fprintf(stderr, "xpubench info: --mode: expected train or infer, found '%s'\n", v);
            return XPB_EXIT_USAGE;
        }
    } else if (strcmp(opt, "--precision") == 0) {
        a->precision_given = 1;
        if (xpb_precision_parse(&a->precision, v) != 0) {
            fprintf(stderr, "xpubench info: --precision: expected %s, found '%s'\n",
                    xpb_precision_expected(), v);
            return XPB_EXIT_USAGE;
        }
    } else { /* --set */
        char *eq = strchr(v, '=');
        if (!eq || eq == v || a->n_kv == 64) {
            fprintf(stderr, "xpubench info: --set needs NAME=VALUE, found '%s'\n", v);
            return XPB_EXIT_USAGE;
        }
        *eq = 0;
        const char *key = strncmp(v, "params.", 7) == 0 ? v + 7 : v;
        if (strcmp(key, "variant") == 0)
            a->cfg.variant = eq + 1;
        else
            a->kv[a->n_kv++] = (xpb_kv){(char *)key, eq + 1};
    }
    return -1;
}

/* The command line into *a: -1 to go on, otherwise the exit code. */
static int parse_args(info_args *a, int argc, char **argv)
{
    static const char *const valued[] = {"--batch", "--set", "--variant", "--mode", "--precision"};
    for (int i = 1; i < argc; i++) {
        int takes = 0;
        for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++)
            takes |= strcmp(argv[i], valued[k]) == 0;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return XPB_EXIT_OK;
        } else if (strcmp(argv[i], "--json") == 0) {
            a->as_json = 1;
        } else if (strcmp(argv[i], "--program") == 0) {
            a->program = 1;
        } else if (takes && i + 1 < argc) {
            int rc = parse_value(a, argv[i], argv[i + 1]);
            i++;
            if (rc >= 0)
                return rc;
        } else if (argv[i][0] == '-' || a->model) {
            fprintf(stderr, "xpubench info: unexpected argument '%s' (see --help)\n", argv[i]);
            return XPB_EXIT_USAGE;
        } else {
            a->model = argv[i];
        }
    }
    if (!a->model) {
        fprintf(stderr, USAGE);
        return XPB_EXIT_USAGE;
    }
    if ((a->mode_given || a->precision_given) && !a->program) {
        fprintf(stderr, "xpubench info: --mode and --precision describe the program: add "
                        "--program\n");
        return XPB_EXIT_USAGE;
    }
    return -1;
}

/* The variant the model is built with: the one asked for, else the model's default. */
static const char *variant_built(const xpb_model_api *m, const char *asked)
{
    if (asked)
        return asked;
    for (uint32_t i = 0; i < m->n_params; i++)
        if (strcmp(m->params[i].name, "variant") == 0)
            return m->params[i].default_value;
    return NULL;
}

/* Prints the document (reals as the shortest text that reads back as the same float);
 * XPB_EXIT_FAILURE when it could not be made. Takes `doc`. */
static int print_json(json_t *doc)
{
    char *text = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(9)) : NULL;
    int rc = text ? XPB_EXIT_OK : XPB_EXIT_FAILURE;
    if (text)
        puts(text);
    free(text);
    json_decref(doc);
    return rc;
}

int xpb_cli_info(int argc, char **argv)
{
    info_args a = {
        .batch = 1,
        .precision = XPB_PRECISION_FP32,
        .cfg = {
            .mode = XPB_MODE_TRAIN, .seed = 42, .lr = NAN, .momentum = NAN, .weight_decay = NAN}};
    int rc = parse_args(&a, argc, argv);
    if (rc >= 0)
        return rc;
    rc = XPB_EXIT_OK;
    xpb_registry *r = xpb_cli_registry(1);
    if (!r)
        return XPB_EXIT_PLUGIN;
    const xpb_model_api *m = xpb_registry_model(r, a.model);
    if (!m) {
        fprintf(stderr, "xpubench info: no model plugin named '%s' (see `xpubench list`)\n",
                a.model);
        xpb_registry_free(r);
        return XPB_EXIT_PLUGIN;
    }
    a.cfg.model = a.model;
    a.cfg.batch = (uint32_t)a.batch;
    a.cfg.params = a.kv;
    a.cfg.n_params = a.n_kv;
    xpb_model_program *mp;
    xpb_err err = {{0}};
    xpb_guard_activity("during info");
    xpb_status st = xpb_model_program_create(&mp, m, &a.cfg, &err);
    xpb_guard_activity(NULL);
    if (st != XPB_OK) {
        xpb_term_line(stderr, "xpubench info: %s", err.msg);
        xpb_registry_free(r);
        return XPB_EXIT_INPUT;
    }
    xpb_program_view view = {a.model, variant_built(m, a.cfg.variant), a.precision};
    if (a.program && a.as_json)
        rc = print_json(xpb_program_view_json(&view, mp));
    else if (a.program)
        xpb_program_view_print(stdout, &view, mp);
    else if (a.as_json)
        rc = print_json(info_json(a.model, m, mp));
    else
        print_text(a.model, m, mp);
    xpb_model_program_free(mp);
    xpb_registry_free(r);
    return rc;
}
