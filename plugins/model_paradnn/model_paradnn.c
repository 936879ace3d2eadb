/* ParaDnn's three families of models as one plugin (paradnn.h): Wang, Wei and Brooks generate
 * fully connected, convolutional and recurrent models from grids of hyperparameters and map a
 * platform's utilisation over them. The variant picks the family; its hyperparameters are the
 * model's parameters, so that a scenario sweeps them like any other key:
 *
 *   fc   `layers` hidden layers of `nodes` units with ReLU, from `input` features to `output`
 *        classes (ParaDnn: layers 4..128, nodes 32..8192, input 2000, output 1000)
 *   cnn  ResNet v1 with four groups of `blocks` residual or bottleneck blocks (`block`), the
 *        first group `filters` wide and each next twice the one before, on 3 x `image` x
 *        `image` inputs (ParaDnn: blocks 1..8, filters 16..64, image 100..300, output 1000)
 *   rnn  `layers` LSTM or plain tanh RNN layers (`cell`) of `embedding` units over `seq_len`
 *        tokens of a `vocab`-word vocabulary, predicting every next token (ParaDnn: layers
 *        1..13, embedding 100..900, length 10..90)
 *
 * A parameter of another family than the variant's must keep its default: a sweep that set it
 * would repeat the same model under different names. docs/models.md has the layers, the
 * parameter counts and how the families depart from ParaDnn's TensorFlow code. */
#include <stdio.h>
#include <string.h>

#include "paradnn.h"

static const xpb_model_param pdn_params[] = {
    {"variant", XPB_MPARAM_STRING, "fc", "fc|cnn|rnn",
     "ParaDnn's family: fully connected, residual convolutional or recurrent"},
    {"layers", XPB_MPARAM_INT, "0", "0..1024",
     "fc: hidden layers (ParaDnn 4..128); rnn: recurrent layers (ParaDnn 1..13); 0 = 4 (fc), "
     "1 (rnn)"},
    {"nodes", XPB_MPARAM_INT, "1024", "1..65536", "fc: units of every hidden layer (32..8192)"},
    {"input", XPB_MPARAM_INT, "2000", "1..1000000", "fc: input features (ParaDnn: 2000)"},
    {"output", XPB_MPARAM_INT, "1000", "2..1000000", "fc, cnn: classes (ParaDnn: 1000)"},
    {"block", XPB_MPARAM_STRING, "residual", "residual|bottleneck",
     "cnn: two 3x3 convolutions per block, or 1x1, 3x3 and a 1x1 four times as wide"},
    {"blocks", XPB_MPARAM_INT, "1", "1..64", "cnn: blocks in each of the four groups (1..8)"},
    {"filters", XPB_MPARAM_INT, "16", "1..4096",
     "cnn: filters of the stem and the first group, doubled in each next group (16..64)"},
    {"image", XPB_MPARAM_INT, "200", "32..1024", "cnn: input height and width (100..300)"},
    {"cell", XPB_MPARAM_STRING, "lstm", "lstm|rnn",
     "rnn: LSTM cells, or plain RNN cells h = tanh(x W + h U + b)"},
    {"embedding", XPB_MPARAM_INT, "100", "1..65536",
     "rnn: embedding size, also the units of every layer (100..900)"},
    {"seq_len", XPB_MPARAM_INT, "50", "1..1024", "rnn: tokens per sample (ParaDnn 10..90)"},
    {"vocab", XPB_MPARAM_INT, "1024", "2..10000000", "rnn: vocabulary"},
};

/* Which family each parameter belongs to (bits of 1 << enum pdn_family). */
static const struct {
    const char *name;
    unsigned families;
} owners[] = {
    {"nodes", 1u << PDN_FC},    {"input", 1u << PDN_FC},   {"output", 1u << PDN_FC | 1u << PDN_CNN},
    {"block", 1u << PDN_CNN},   {"blocks", 1u << PDN_CNN}, {"filters", 1u << PDN_CNN},
    {"image", 1u << PDN_CNN},   {"cell", 1u << PDN_RNN},   {"embedding", 1u << PDN_RNN},
    {"seq_len", 1u << PDN_RNN}, {"vocab", 1u << PDN_RNN},
};

/* The declared default of parameter `name` (static). */
static const char *default_of(const char *name)
{
    for (size_t i = 0; i < sizeof pdn_params / sizeof pdn_params[0]; i++)
        if (strcmp(pdn_params[i].name, name) == 0)
            return pdn_params[i].default_value;
    return "";
}

/* Refuses a parameter of another family that is not at its default. */
static xpb_status check_owners(const pdn *p, const char *variant)
{
    for (size_t i = 0; i < sizeof owners / sizeof owners[0]; i++) {
        if (owners[i].families & (1u << p->c.family))
            continue;
        const char *def = default_of(owners[i].name);
        int differs;
        if (strcmp(owners[i].name, "block") == 0 || strcmp(owners[i].name, "cell") == 0) {
            const char *s;
            XPB_TRY(p->api->param_string(&s, p->b, owners[i].name));
            differs = strcmp(s, def) != 0;
        } else {
            int64_t v;
            XPB_TRY(p->api->param_int(&v, p->b, owners[i].name));
            char text[32];
            snprintf(text, sizeof text, "%lld", (long long)v);
            differs = strcmp(text, def) != 0;
        }
        if (differs)
            return xpb_model_fail(p->b, p->api, XPB_INVALID_ARGUMENT,
                                  "parameter '%s' does not apply to variant %s (leave it at %s)",
                                  owners[i].name, variant, def);
    }
    return XPB_OK;
}

/* Reads the parameters into p->c. */
static xpb_status read_cfg(pdn *p)
{
    pdn_cfg *c = &p->c;
    const char *variant, *block, *cell;
    XPB_TRY(p->api->param_string(&variant, p->b, "variant"));
    c->family = strcmp(variant, "cnn") == 0   ? PDN_CNN
                : strcmp(variant, "rnn") == 0 ? PDN_RNN
                                              : PDN_FC;
    static const char *const names[9] = {"layers",  "nodes", "input",     "output", "blocks",
                                         "filters", "image", "embedding", "seq_len"};
    int64_t *const fields[9] = {&c->layers,  &c->nodes, &c->input, &c->output, &c->blocks,
                                &c->filters, &c->image, &c->embed, &c->seq};
    for (int i = 0; i < 9; i++)
        XPB_TRY(p->api->param_int(fields[i], p->b, names[i]));
    XPB_TRY(p->api->param_int(&c->vocab, p->b, "vocab"));
    XPB_TRY(p->api->param_string(&block, p->b, "block"));
    XPB_TRY(p->api->param_string(&cell, p->b, "cell"));
    c->bottleneck = strcmp(block, "bottleneck") == 0;
    c->lstm = strcmp(cell, "lstm") == 0;
    if (c->family == PDN_CNN && c->layers != 0)
        return xpb_model_fail(p->b, p->api, XPB_INVALID_ARGUMENT,
                              "parameter 'layers' does not apply to variant cnn (its depth is "
                              "'blocks')");
    if (c->layers == 0)
        c->layers = c->family == PDN_FC ? 4 : 1;
    c->n = p->api->batch_size(p->b);
    return check_owners(p, variant);
}

static xpb_status pdn_build(xpb_builder *b, const xpb_builder_api *api)
{
    pdn p = {.b = b, .api = api};
    XPB_TRY(read_cfg(&p));
    if (p.c.family == PDN_RNN && !XPB_HAS_MEMBER(api, xpb_builder_api, op3))
        return xpb_model_fail(b, api, XPB_UNSUPPORTED,
                              "variant rnn needs a builder of ABI 1.3 (op set 3)");
    switch (p.c.family) {
    case PDN_CNN:
        return pdn_build_cnn(&p);
    case PDN_RNN:
        return pdn_build_rnn(&p);
    default:
        return pdn_build_fc(&p);
    }
}

static const xpb_model_api pdn_api = {
    .struct_size = sizeof(xpb_model_api),
    .params = pdn_params,
    .n_params = sizeof pdn_params / sizeof pdn_params[0],
    .build = pdn_build,
};

XPB_DEFINE_PLUGIN(XPB_PLUGIN_MODEL, "paradnn", "1.0.0",
                  "ParaDnn's fully connected, residual convolutional and recurrent families "
                  "(Wang, Wei and Brooks 2019)",
                  0, &pdn_api)
