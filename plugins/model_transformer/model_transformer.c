/* The transformer plugin: two published architectures on one set of layers (transformer.h).
 *
 *   base        Vaswani et al. 2017's base model as torch.nn.Transformer (6 + 6 post-norm
 *               layers, d_model 512, 8 heads, feed-forward 2048, dropout 0.1) with one shared
 *               37,000-token embedding and sinusoidal positions; 63,084,544 parameters
 *               (transformer_base.c)
 *   gpt2-small  GPT-2 small as Hugging Face's GPT2LMHeadModel (12 pre-norm blocks of 768, 12
 *               heads, 50,257 tokens, 1,024 learned positions, tied output); 124,439,808
 *               parameters (transformer_gpt2.c)
 *
 * Sequence length, vocabulary, width, heads, layers and feed-forward width are parameters, so
 * that a scenario can sweep them and tests can build tiny instances; 0 means the variant's
 * published value. docs/models.md has the layer lists and the numbers. */
#include <stdio.h>
#include <string.h>

#include "transformer.h"

static const xpb_model_param tfm_params[] = {
    {"variant", XPB_MPARAM_STRING, "base", "base|gpt2-small",
     "base = Vaswani et al. 2017 (torch.nn.Transformer, 6+6 layers, 512); gpt2-small = GPT-2 "
     "124M"},
    {"seq_len", XPB_MPARAM_INT, "0", "0..65536",
     "tokens per sequence (base: source and target each); 0 = the variant's (128, 1024)"},
    {"vocab", XPB_MPARAM_INT, "0", "0..10000000", "vocabulary; 0 = the variant's (37000, 50257)"},
    {"d_model", XPB_MPARAM_INT, "0", "0..65536", "width; 0 = the variant's (512, 768)"},
    {"heads", XPB_MPARAM_INT, "0", "0..1024",
     "attention heads, dividing d_model; 0 = the variant's (8, 12)"},
    {"layers", XPB_MPARAM_INT, "0", "0..1024",
     "layers (base: of the encoder and of the decoder each); 0 = the variant's (6, 12)"},
    {"d_ff", XPB_MPARAM_INT, "0", "0..262144", "feed-forward width; 0 = 4 x d_model (2048, 3072)"},
    {"context", XPB_MPARAM_INT, "0", "0..65536",
     "gpt2-small only: rows of the learned position table; 0 = 1024"},
    {"dropout", XPB_MPARAM_FLOAT, "0.1", "0.0..0.99", "every dropout of the model (0: none)"},
};

/* Reads the parameters into t->c, the variant's values for those left at 0, and checks that
 * they fit together. */
static xpb_status read_cfg(tfm *t)
{
    tfm_cfg *c = &t->c;
    const char *variant;
    XPB_TRY(t->api->param_string(&variant, t->b, "variant"));
    c->gpt2 = strcmp(variant, "gpt2-small") == 0;
    static const char *const names[7] = {"seq_len", "vocab", "d_model", "heads",
                                         "layers",  "d_ff",  "context"};
    int64_t *const fields[7] = {&c->seq,    &c->vocab, &c->d,      &c->heads,
                                &c->layers, &c->ff,    &c->context};
    for (int i = 0; i < 7; i++)
        XPB_TRY(t->api->param_int(fields[i], t->b, names[i]));
    XPB_TRY(t->api->param_float(&c->dropout, t->b, "dropout"));
    if (!c->gpt2 && c->context != 0)
        return xpb_model_fail(t->b, t->api, XPB_INVALID_ARGUMENT,
                              "parameter 'context' applies to gpt2-small only (base has "
                              "sinusoidal positions for any seq_len)");
    const int64_t published[6] = {c->gpt2 ? 1024 : 128, c->gpt2 ? 50257 : 37000,
                                  c->gpt2 ? 768 : 512,  c->gpt2 ? 12 : 8,
                                  c->gpt2 ? 12 : 6,     c->gpt2 ? 1024 : 0};
    int64_t *const defaulted[6] = {&c->seq, &c->vocab, &c->d, &c->heads, &c->layers, &c->context};
    for (int i = 0; i < 6; i++)
        if (*defaulted[i] == 0)
            *defaulted[i] = published[i];
    if (c->ff == 0)
        c->ff = 4 * c->d;
    if (c->d % c->heads != 0)
        return xpb_model_fail(t->b, t->api, XPB_INVALID_ARGUMENT,
                              "d_model %lld is not a multiple of heads %lld", (long long)c->d,
                              (long long)c->heads);
    if (c->gpt2 && c->seq > c->context)
        return xpb_model_fail(t->b, t->api, XPB_INVALID_ARGUMENT,
                              "seq_len %lld is longer than the %lld learned positions (context)",
                              (long long)c->seq, (long long)c->context);
    c->n = t->api->batch_size(t->b);
    return XPB_OK;
}

static xpb_status tfm_build(xpb_builder *b, const xpb_builder_api *api)
{
    if (!XPB_HAS_MEMBER(api, xpb_builder_api, clip_grad_norm))
        return xpb_model_fail(b, api, XPB_UNSUPPORTED, "needs a builder of ABI 1.3 (op set 3)");
    tfm t = {.b = b, .api = api};
    XPB_TRY(read_cfg(&t));
    return t.c.gpt2 ? tfm_build_gpt2(&t) : tfm_build_base(&t);
}

static const xpb_model_api tfm_api = {
    .struct_size = sizeof(xpb_model_api),
    .params = tfm_params,
    .n_params = sizeof tfm_params / sizeof tfm_params[0],
    .build = tfm_build,
};

XPB_DEFINE_PLUGIN(XPB_PLUGIN_MODEL, "transformer", "1.0.0",
                  "Transformer base (Vaswani et al. 2017, torch.nn.Transformer) and GPT-2 small", 0,
                  &tfm_api)
