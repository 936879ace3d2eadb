/* The transformer plugin's internals: the configuration both architectures read
 * (model_transformer.c), the layers they share (transformer_layers.c) and the two builders
 * (transformer_base.c: Vaswani et al.'s encoder-decoder as torch.nn.Transformer;
 * transformer_gpt2.c: GPT-2 as Hugging Face's GPT2LMHeadModel). Only the builder is touched:
 * every function returns the status of the failing builder call. */
#ifndef TFM_TRANSFORMER_H
#define TFM_TRANSFORMER_H

#include <stddef.h>
#include <stdint.h>

#include <xpubench/xpubench.h>

/* The resolved model parameters (docs/models.md): the variant's values where the scenario left
 * a parameter at 0 (or dropout at -1). */
typedef struct tfm_cfg {
    int gpt2;        /* 0: the encoder-decoder "base", 1: "gpt2-small" */
    int64_t n;       /* batch */
    int64_t seq;     /* tokens per sequence (base: source and target each) */
    int64_t vocab;   /* shared by source, target and output (base); GPT-2's BPE vocabulary */
    int64_t d;       /* d_model */
    int64_t heads;   /* attention heads; d % heads == 0 */
    int64_t layers;  /* base: encoder and decoder layers each; GPT-2: blocks */
    int64_t ff;      /* feed-forward width */
    int64_t context; /* GPT-2: rows of the learned position table (n_positions) */
    double dropout;
} tfm_cfg;

/* A build in progress: the builder, its functions and the configuration. */
typedef struct tfm {
    xpb_builder *b;
    const xpb_builder_api *api;
    tfm_cfg c;
} tfm;

/* Formats a layer or parameter name into out[size] (cut at size - 1 characters: names here are
 * far shorter). */
void tfm_name(char *out, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A trainable parameter `name` of 1 or 2 dims ([d0] or [d0, d1]) with initialiser `init`. */
xpb_status tfm_param(xpb_value *out, const tfm *t, const char *name, int64_t d0, int64_t d1,
                     xpb_init init);

/* Dropout with the model's p on x (any rank), named `layer`; nothing at p = 0. */
xpb_status tfm_dropout(xpb_value *x, const tfm *t, const char *layer);

/* `layer`.weight (ones) and `layer`.bias (zeros) of D elements, and LAYER_NORM (eps 1e-5,
 * torch.nn.LayerNorm's and GPT-2's) of x over its last axis. */
xpb_status tfm_layer_norm(xpb_value *out, const tfm *t, const char *layer, xpb_value x);

/* a + b, same shapes (the residual connections). */
xpb_status tfm_add(xpb_value *out, const tfm *t, const char *layer, xpb_value a, xpb_value b);

/* Rows of a value: x viewed as [n_rows, numel / n_rows], the `count` rows listed in `rows`
 * gathered (an EMBEDDING of a constant index list named `layer`.index), the result reshaped to
 * dims[0..ndim). This is how a packed tensor is split (torch.split / chunk): the gradient
 * flows back into the rows taken. */
xpb_status tfm_rows(xpb_value *out, const tfm *t, const char *layer, xpb_value x, int64_t n_rows,
                    const int32_t *rows, int64_t count, uint32_t ndim, const int64_t *dims);

/* The heads of `parts` packed projections: y[B*S, parts*D] (q|k|v side by side, as a fused
 * in-projection writes them) -> out[0..parts), each [B, H, S, D/H] (view(B, S, H, D/H) then
 * transpose(1, 2) of each part). `layer` prefixes the layer names. */
xpb_status tfm_split_heads(xpb_value *out, const tfm *t, const char *layer, xpb_value y, int parts,
                           int64_t s);

/* Scaled dot-product attention over heads: q[B, H, Sq, hd] against k and v [B, H, Sk, hd]:
 * softmax(q k^T / sqrt(hd)) (causal: key j > query i masked), dropout on the weights, times v,
 * heads merged back: out[B*Sq, D]. Layers `layer`.scores, .softmax, .dropout, .context,
 * .merge. */
xpb_status tfm_attend(xpb_value *out, const tfm *t, const char *layer, xpb_value q, xpb_value k,
                      xpb_value v, int causal, int64_t sq);

/* The two architectures. */
xpb_status tfm_build_base(const tfm *t);
xpb_status tfm_build_gpt2(const tfm *t);

#endif
