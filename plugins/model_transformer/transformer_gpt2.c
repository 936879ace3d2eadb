/* GPT-2 small (Radford et al. 2019) as Hugging Face's GPT2LMHeadModel with its default GPT2Config:
 * vocabulary 50,257, a learned table of 1,024 positions, 12 pre-norm blocks of width 768 with
 * 12 heads, GELU (tanh) MLP of 3,072, a final LayerNorm and the output tied to the token
 * embedding; dropout 0.1 after the embeddings (embd_pdrop), on the attention weights
 * (attn_pdrop) and after each block's two projections (resid_pdrop).
 *
 * Parameter names are that model's state-dict keys (transformer.wte.weight,
 * transformer.h.0.attn.c_attn.weight, transformer.ln_f.bias, ...; lm_head.weight is wte
 * itself): 124,439,808. Its projections are Conv1D, weight [in, out], y = x @ w + b: a MATMUL
 * with a bias here, on the same layout. c_attn writes q, k and v side by side ([B*S, 3D]); they
 * are split as its .split(D, dim=2) then viewed as heads.
 *
 * Initialisation is the model's _init_weights: every weight N(0, 0.02), the two c_proj weights
 * of a block N(0, 0.02 / sqrt(2 x blocks)), biases 0, LayerNorm ones and zeros.
 *
 * Trained with the token loss (positions are predicted from the ones before, causal attention),
 * AdamW (lr 6e-4, betas 0.9 and 0.95, eps 1e-8, weight decay 0.1) and gradients clipped at a
 * global norm of 1, the GPT-2 small recipe of nanoGPT's reproduction (the paper gives none);
 * weight decay applies to every parameter (nanoGPT spares biases and norms: one phase has one
 * optimizer here). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "transformer.h"

/* A Conv1D `layer`: weight [in, out] N(0, std), bias zeros; y = x @ weight + bias. */
static xpb_status conv1d(xpb_value *out, const tfm *t, const char *layer, xpb_value x, int64_t in,
                         int64_t outs, double std)
{
    char name[256];
    xpb_value v[3] = {x};
    tfm_name(name, sizeof name, "%s.weight", layer);
    XPB_TRY(tfm_param(&v[1], t, name, in, outs, (xpb_init){XPB_INIT_NORMAL, 0.0, std}));
    tfm_name(name, sizeof name, "%s.bias", layer);
    XPB_TRY(tfm_param(&v[2], t, name, outs, 0, (xpb_init){XPB_INIT_ZEROS, 0, 0}));
    return t->api->op3(out, t->b, layer, XPB_OP_MATMUL, v, 3, NULL, NULL);
}

/* Block `prefix` = transformer.h.<l> on the residual stream x[B*S, D]. */
static xpb_status block(xpb_value *x, const tfm *t, const char *prefix)
{
    const int64_t d = t->c.d, ff = t->c.ff;
    const double proj_std = 0.02 / sqrt(2.0 * (double)t->c.layers);
    char name[256], attn[192];
    xpb_value h, qkv[3];
    tfm_name(attn, sizeof attn, "%s.attn", prefix);
    tfm_name(name, sizeof name, "%s.ln_1", prefix);
    XPB_TRY(tfm_layer_norm(&h, t, name, *x));
    tfm_name(name, sizeof name, "%s.c_attn", attn);
    XPB_TRY(conv1d(&h, t, name, h, d, 3 * d, 0.02));
    XPB_TRY(tfm_split_heads(qkv, t, attn, h, 3, t->c.seq));
    XPB_TRY(tfm_attend(&h, t, attn, qkv[0], qkv[1], qkv[2], 1, t->c.seq));
    tfm_name(name, sizeof name, "%s.c_proj", attn);
    XPB_TRY(conv1d(&h, t, name, h, d, d, proj_std));
    tfm_name(name, sizeof name, "%s.resid_dropout", attn);
    XPB_TRY(tfm_dropout(&h, t, name));
    tfm_name(name, sizeof name, "%s.residual1", prefix);
    XPB_TRY(tfm_add(x, t, name, *x, h));

    tfm_name(name, sizeof name, "%s.ln_2", prefix);
    XPB_TRY(tfm_layer_norm(&h, t, name, *x));
    tfm_name(name, sizeof name, "%s.mlp.c_fc", prefix);
    XPB_TRY(conv1d(&h, t, name, h, d, ff, 0.02));
    const xpb_op_attrs3 tanh_gelu = {.struct_size = sizeof tanh_gelu, .approximate = XPB_GELU_TANH};
    tfm_name(name, sizeof name, "%s.mlp.act", prefix);
    XPB_TRY(t->api->op3(&h, t->b, name, XPB_OP_GELU, &h, 1, NULL, &tanh_gelu));
    tfm_name(name, sizeof name, "%s.mlp.c_proj", prefix);
    XPB_TRY(conv1d(&h, t, name, h, ff, d, proj_std));
    tfm_name(name, sizeof name, "%s.mlp.dropout", prefix);
    XPB_TRY(tfm_dropout(&h, t, name));
    tfm_name(name, sizeof name, "%s.residual2", prefix);
    return tfm_add(x, t, name, *x, h);
}

/* The I32 positions 0 .. S-1, the indices of the learned position table. */
static xpb_status position_ids(xpb_value *out, const tfm *t)
{
    const int64_t dims[1] = {t->c.seq};
    int32_t *ids = malloc((size_t)t->c.seq * sizeof *ids);
    if (!ids)
        return xpb_model_fail(t->b, t->api, XPB_OUT_OF_MEMORY, "out of memory");
    for (int64_t i = 0; i < t->c.seq; i++)
        ids[i] = (int32_t)i;
    xpb_status st =
        t->api->constant_data(out, t->b, "transformer.wpe.index", XPB_DTYPE_I32, 1, dims, ids);
    free(ids);
    return st;
}

xpb_status tfm_build_gpt2(const tfm *t)
{
    const tfm_cfg *c = &t->c;
    const double top = (double)(c->vocab - 1);
    const xpb_input_desc tokens_desc = {"tokens", XPB_DTYPE_I32, 2, {c->n, c->seq}, 0, top};
    const xpb_input_desc targets_desc = {"targets", XPB_DTYPE_I32, 2, {c->n, c->seq}, 0, top};
    const xpb_init embed_init = {XPB_INIT_NORMAL, 0.0, 0.02};
    xpb_value tokens, targets, wte, wpe, pos, x, p, logits, loss, in[2];
    XPB_TRY(t->api->input(&tokens, t->b, &tokens_desc));
    XPB_TRY(t->api->input(&targets, t->b, &targets_desc));
    XPB_TRY(tfm_param(&wte, t, "transformer.wte.weight", c->vocab, c->d, embed_init));
    XPB_TRY(tfm_param(&wpe, t, "transformer.wpe.weight", c->context, c->d, embed_init));
    XPB_TRY(position_ids(&pos, t));
    in[0] = tokens, in[1] = wte;
    XPB_TRY(t->api->op3(&x, t->b, "transformer.wte", XPB_OP_EMBEDDING, in, 2, NULL, NULL));
    in[0] = pos, in[1] = wpe;
    XPB_TRY(t->api->op3(&p, t->b, "transformer.wpe", XPB_OP_EMBEDDING, in, 2, NULL, NULL));
    in[0] = x, in[1] = p;
    XPB_TRY(t->api->op3(&x, t->b, "transformer.embed", XPB_OP_ADD_BROADCAST, in, 2, NULL, NULL));
    XPB_TRY(tfm_dropout(&x, t, "transformer.drop"));
    const int64_t rows[2] = {c->n * c->seq, c->d};
    XPB_TRY(t->api->reshape(&x, t->b, "transformer.rows", x, 2, rows));
    for (int64_t l = 0; l < c->layers; l++) {
        char prefix[64];
        tfm_name(prefix, sizeof prefix, "transformer.h.%lld", (long long)l);
        XPB_TRY(block(&x, t, prefix));
    }
    XPB_TRY(tfm_layer_norm(&x, t, "transformer.ln_f", x));

    /* lm_head: the token embedding, transposed, no bias */
    const xpb_op_attrs3 trans_b = {.struct_size = sizeof trans_b, .transpose = XPB_TRANSPOSE_B};
    const int64_t seq_logits[3] = {c->n, c->seq, c->vocab};
    in[0] = x, in[1] = wte;
    XPB_TRY(t->api->op3(&logits, t->b, "lm_head", XPB_OP_MATMUL, in, 2, NULL, &trans_b));
    XPB_TRY(t->api->reshape(&logits, t->b, "logits", logits, 3, seq_logits));
    XPB_TRY(t->api->output(t->b, "logits", logits));
    in[0] = logits, in[1] = targets;
    XPB_TRY(t->api->op3(&loss, t->b, "loss", XPB_OP_SOFTMAX_XENT, in, 2, NULL, NULL));
    const xpb_optimizer_desc adamw = {.kind = XPB_OPTIMIZER_ADAMW,
                                      .lr = 6e-4,
                                      .weight_decay = 0.1,
                                      .beta1 = 0.9,
                                      .beta2 = 0.95,
                                      .eps = 1e-8};
    uint32_t phase;
    XPB_TRY(t->api->phase(&phase, t->b, "train", 0, &adamw));
    XPB_TRY(t->api->loss(t->b, phase, loss, 1.0));
    return t->api->clip_grad_norm(t->b, phase, 1.0);
}
