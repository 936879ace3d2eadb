/* The Transformer "base" of Vaswani et al. (2017) as torch.nn.Transformer(d_model=512, nhead=8,
 * num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048, dropout=0.1): post-norm
 * layers with ReLU, the encoder's and the decoder's final LayerNorm, inside a model whose one
 * embedding (37,000 tokens, the paper's shared BPE vocabulary) embeds the source and the target
 * and is the output projection (no bias), as the paper ties them. Embeddings are scaled by
 * sqrt(d_model) and added to the paper's sinusoidal positions (a constant), then dropout.
 *
 * Parameter names are the state-dict keys of that model: embedding.weight and
 * transformer.<torch.nn.Transformer's keys> (encoder.layers.0.self_attn.in_proj_weight,
 * decoder.layers.5.multihead_attn.out_proj.bias, decoder.norm.weight, ...): 63,084,544.
 * nn.MultiheadAttention's packed in-projection is one [3D, D] parameter: self-attention applies
 * it whole and splits q, k, v (PyTorch's in_projection_packed, q is k is v); cross-attention
 * takes its first D rows for the queries and the other 2D for the keys and values of the
 * memory (PyTorch's split for k is v).
 *
 * Initialisation is PyTorch's: nn.Transformer's _reset_parameters (xavier_uniform_ on every
 * matrix), nn.MultiheadAttention's zero in_proj_bias and out_proj.bias, nn.Linear's default for
 * linear1.bias and linear2.bias, LayerNorm ones and zeros; the shared embedding N(0, D^-1/2),
 * the paper's reference implementation's (tensor2tensor), so that the scaled embedding has
 * unit variance.
 *
 * Trained as the paper: label smoothing 0.1, Adam (0.9, 0.98, eps 1e-9) at lr D^-1/2 x 4000^-1/2,
 * the peak of its warm-up schedule (no schedule: a benchmark step is a step). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "transformer.h"

/* torch.nn.init.xavier_uniform_ of a [rows, cols] matrix. */
static xpb_init xavier(int64_t rows, int64_t cols)
{
    double bound = sqrt(6.0 / (double)(rows + cols));
    return (xpb_init){XPB_INIT_UNIFORM, -bound, bound};
}

static const xpb_init zeros = {XPB_INIT_ZEROS, 0, 0};

/* A linear layer with xavier weights and the given bias initialiser: `layer`.weight [out, in]. */
static xpb_status linear(xpb_value *out, const tfm *t, const char *layer, xpb_value x, int64_t in,
                         int64_t outs, xpb_init bias)
{
    xpb_layer_opts o = {.bias = 1, .weight_init = xavier(outs, in), .bias_init = bias};
    return xpb_layer_linear(out, t->b, t->api, layer, x, in, outs, &o);
}

/* `which` ("src" or "tgt") tokens[B, S] -> x[B*S, D]: the shared embedding, times sqrt(D), plus
 * the positions, dropout. */
static xpb_status embed(xpb_value *out, const tfm *t, const char *which, xpb_value tokens,
                        xpb_value table, xpb_value positions)
{
    char name[64];
    xpb_value x, in[2] = {tokens, table};
    const int64_t rows[2] = {t->c.n * t->c.seq, t->c.d};
    const xpb_op_attrs scale = {.value = (float)sqrt((double)t->c.d)};
    tfm_name(name, sizeof name, "embedding.%s", which);
    XPB_TRY(t->api->op3(&x, t->b, name, XPB_OP_EMBEDDING, in, 2, NULL, NULL));
    tfm_name(name, sizeof name, "embedding.%s.scale", which);
    XPB_TRY(t->api->op3(&x, t->b, name, XPB_OP_SCALE, &x, 1, &scale, NULL));
    in[0] = x, in[1] = positions;
    tfm_name(name, sizeof name, "positions.%s", which);
    XPB_TRY(t->api->op3(&x, t->b, name, XPB_OP_ADD_BROADCAST, in, 2, NULL, NULL));
    tfm_name(name, sizeof name, "dropout.%s", which);
    XPB_TRY(tfm_dropout(&x, t, name));
    tfm_name(name, sizeof name, "%s.rows", which);
    return t->api->reshape(out, t->b, name, x, 2, rows);
}

/* The sinusoidal positions of the paper, [S, D]: PE(pos, 2i) = sin(pos / 10000^(2i/D)),
 * PE(pos, 2i+1) = cos(pos / 10000^(2i/D)). */
static xpb_status positions(xpb_value *out, const tfm *t)
{
    const int64_t s = t->c.seq, d = t->c.d, dims[2] = {s, d};
    float *pe = malloc((size_t)(s * d) * sizeof *pe);
    if (!pe)
        return xpb_model_fail(t->b, t->api, XPB_OUT_OF_MEMORY, "out of memory");
    for (int64_t pos = 0; pos < s; pos++)
        for (int64_t i = 0; i < d; i++) {
            double angle = (double)pos / pow(10000.0, (double)(i - i % 2) / (double)d);
            pe[pos * d + i] = (float)(i % 2 ? cos(angle) : sin(angle));
        }
    xpb_status st = t->api->constant_data(out, t->b, "positions.table", XPB_DTYPE_F32, 2, dims, pe);
    free(pe);
    return st;
}

/* `prefix`.<attn>.out_proj of the merged heads, dropout `drop`, added to x, LayerNorm `norm`
 * (the post-norm residual of nn.TransformerEncoderLayer / DecoderLayer). */
static xpb_status residual(xpb_value *x, const tfm *t, const char *prefix, xpb_value y,
                           const char *drop, const char *add, const char *norm)
{
    char name[256];
    tfm_name(name, sizeof name, "%s.%s", prefix, drop);
    XPB_TRY(tfm_dropout(&y, t, name));
    tfm_name(name, sizeof name, "%s.%s", prefix, add);
    XPB_TRY(tfm_add(&y, t, name, *x, y));
    tfm_name(name, sizeof name, "%s.%s", prefix, norm);
    return tfm_layer_norm(x, t, name, y);
}

/* nn.MultiheadAttention `layer` (in_proj_weight [3D, D], in_proj_bias, out_proj) of queries
 * x[B*S, D] over memory (XPB_NO_VALUE: self-attention over x) -> [B*S, D]. */
static xpb_status attention(xpb_value *out, const tfm *t, const char *layer, xpb_value x,
                            xpb_value memory, int causal)
{
    const int64_t d = t->c.d;
    char name[256];
    xpb_value w, bias, qkv[3];
    tfm_name(name, sizeof name, "%s.in_proj_weight", layer);
    XPB_TRY(tfm_param(&w, t, name, 3 * d, d, xavier(3 * d, d)));
    tfm_name(name, sizeof name, "%s.in_proj_bias", layer);
    XPB_TRY(tfm_param(&bias, t, name, 3 * d, 0, zeros));
    if (memory == XPB_NO_VALUE) {
        xpb_value in[3] = {x, w, bias}, y;
        tfm_name(name, sizeof name, "%s.in_proj", layer);
        XPB_TRY(t->api->op(&y, t->b, name, XPB_OP_LINEAR, in, 3, NULL));
        XPB_TRY(tfm_split_heads(qkv, t, layer, y, 3, t->c.seq));
    } else {
        static const int32_t q_rows[1] = {0}, kv_rows[2] = {1, 2};
        const int64_t wq[2] = {d, d}, wkv[2] = {2 * d, d}, bq[1] = {d}, bkv[1] = {2 * d};
        xpb_value in[3];
        tfm_name(name, sizeof name, "%s.w_q", layer);
        XPB_TRY(tfm_rows(&in[1], t, name, w, 3, q_rows, 1, 2, wq));
        tfm_name(name, sizeof name, "%s.b_q", layer);
        XPB_TRY(tfm_rows(&in[2], t, name, bias, 3, q_rows, 1, 1, bq));
        in[0] = x;
        tfm_name(name, sizeof name, "%s.q_proj", layer);
        XPB_TRY(t->api->op(&qkv[0], t->b, name, XPB_OP_LINEAR, in, 3, NULL));
        tfm_name(name, sizeof name, "%s.q", layer);
        XPB_TRY(tfm_split_heads(qkv, t, name, qkv[0], 1, t->c.seq));
        tfm_name(name, sizeof name, "%s.w_kv", layer);
        XPB_TRY(tfm_rows(&in[1], t, name, w, 3, kv_rows, 2, 2, wkv));
        tfm_name(name, sizeof name, "%s.b_kv", layer);
        XPB_TRY(tfm_rows(&in[2], t, name, bias, 3, kv_rows, 2, 1, bkv));
        in[0] = memory;
        tfm_name(name, sizeof name, "%s.kv_proj", layer);
        XPB_TRY(t->api->op(&qkv[1], t->b, name, XPB_OP_LINEAR, in, 3, NULL));
        XPB_TRY(tfm_split_heads(&qkv[1], t, layer, qkv[1], 2, t->c.seq));
    }
    xpb_value y;
    XPB_TRY(tfm_attend(&y, t, layer, qkv[0], qkv[1], qkv[2], causal, t->c.seq));
    tfm_name(name, sizeof name, "%s.out_proj", layer);
    return linear(out, t, name, y, d, d, zeros);
}

/* linear1, ReLU (`prefix`.activation), dropout, linear2: the feed-forward block. */
static xpb_status feed_forward(xpb_value *out, const tfm *t, const char *prefix, xpb_value x)
{
    const int64_t d = t->c.d, ff = t->c.ff;
    char name[256];
    xpb_value y;
    tfm_name(name, sizeof name, "%s.linear1", prefix);
    XPB_TRY(linear(&y, t, name, x, d, ff, xpb_init_pytorch_default(d)));
    tfm_name(name, sizeof name, "%s.activation", prefix);
    XPB_TRY(xpb_layer_unary(&y, t->b, t->api, name, XPB_OP_RELU, y, NULL));
    tfm_name(name, sizeof name, "%s.dropout", prefix);
    XPB_TRY(tfm_dropout(&y, t, name));
    tfm_name(name, sizeof name, "%s.linear2", prefix);
    return linear(out, t, name, y, ff, d, xpb_init_pytorch_default(ff));
}

/* transformer.encoder: its layers over x[B*S, D], then its norm. */
static xpb_status encoder(xpb_value *x, const tfm *t)
{
    char prefix[128], name[256];
    for (int64_t l = 0; l < t->c.layers; l++) {
        xpb_value y;
        tfm_name(prefix, sizeof prefix, "transformer.encoder.layers.%lld", (long long)l);
        tfm_name(name, sizeof name, "%s.self_attn", prefix);
        XPB_TRY(attention(&y, t, name, *x, XPB_NO_VALUE, 0));
        XPB_TRY(residual(x, t, prefix, y, "dropout1", "add1", "norm1"));
        XPB_TRY(feed_forward(&y, t, prefix, *x));
        XPB_TRY(residual(x, t, prefix, y, "dropout2", "add2", "norm2"));
    }
    return tfm_layer_norm(x, t, "transformer.encoder.norm", *x);
}

/* transformer.decoder over x[B*S, D] with the encoder's memory, then its norm. */
static xpb_status decoder(xpb_value *x, const tfm *t, xpb_value memory)
{
    char prefix[128], name[256];
    for (int64_t l = 0; l < t->c.layers; l++) {
        xpb_value y;
        tfm_name(prefix, sizeof prefix, "transformer.decoder.layers.%lld", (long long)l);
        tfm_name(name, sizeof name, "%s.self_attn", prefix);
        XPB_TRY(attention(&y, t, name, *x, XPB_NO_VALUE, 1));
        XPB_TRY(residual(x, t, prefix, y, "dropout1", "add1", "norm1"));
        tfm_name(name, sizeof name, "%s.multihead_attn", prefix);
        XPB_TRY(attention(&y, t, name, *x, memory, 0));
        XPB_TRY(residual(x, t, prefix, y, "dropout2", "add2", "norm2"));
        XPB_TRY(feed_forward(&y, t, prefix, *x));
        XPB_TRY(residual(x, t, prefix, y, "dropout3", "add3", "norm3"));
    }
    return tfm_layer_norm(x, t, "transformer.decoder.norm", *x);
}

xpb_status tfm_build_base(const tfm *t)
{
    const tfm_cfg *c = &t->c;
    const double top = (double)(c->vocab - 1);
    const xpb_input_desc src_desc = {"src", XPB_DTYPE_I32, 2, {c->n, c->seq}, 0, top};
    const xpb_input_desc tgt_desc = {"tgt", XPB_DTYPE_I32, 2, {c->n, c->seq}, 0, top};
    const xpb_input_desc next_desc = {"targets", XPB_DTYPE_I32, 2, {c->n, c->seq}, 0, top};
    xpb_value src, tgt, targets, table, pe, memory, x, logits, loss;
    XPB_TRY(t->api->input(&src, t->b, &src_desc));
    XPB_TRY(t->api->input(&tgt, t->b, &tgt_desc));
    XPB_TRY(t->api->input(&targets, t->b, &next_desc));
    XPB_TRY(tfm_param(&table, t, "embedding.weight", c->vocab, c->d,
                      (xpb_init){XPB_INIT_NORMAL, 0.0, 1.0 / sqrt((double)c->d)}));
    XPB_TRY(positions(&pe, t));
    XPB_TRY(embed(&memory, t, "src", src, table, pe));
    XPB_TRY(encoder(&memory, t));
    XPB_TRY(embed(&x, t, "tgt", tgt, table, pe));
    XPB_TRY(decoder(&x, t, memory));

    /* the output projection: the embedding, transposed, no bias */
    const xpb_op_attrs3 trans_b = {.struct_size = sizeof trans_b, .transpose = XPB_TRANSPOSE_B};
    const int64_t seq_logits[3] = {c->n, c->seq, c->vocab};
    xpb_value in[2] = {x, table};
    XPB_TRY(t->api->op3(&logits, t->b, "generator", XPB_OP_MATMUL, in, 2, NULL, &trans_b));
    XPB_TRY(t->api->reshape(&logits, t->b, "logits", logits, 3, seq_logits));
    XPB_TRY(t->api->output(t->b, "logits", logits));
    const xpb_op_attrs3 smooth = {.struct_size = sizeof smooth, .label_smoothing = 0.1f};
    in[0] = logits, in[1] = targets;
    XPB_TRY(t->api->op3(&loss, t->b, "loss", XPB_OP_SOFTMAX_XENT, in, 2, NULL, &smooth));
    const xpb_optimizer_desc adam = {.kind = XPB_OPTIMIZER_ADAM,
                                     .lr = 1.0 / sqrt((double)c->d * 4000.0),
                                     .beta1 = 0.9,
                                     .beta2 = 0.98,
                                     .eps = 1e-9};
    uint32_t phase;
    XPB_TRY(t->api->phase(&phase, t->b, "train", 0, &adam));
    return t->api->loss(t->b, phase, loss, 1.0);
}
