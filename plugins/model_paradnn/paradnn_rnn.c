/* ParaDnn's recurrent family (paradnn/rnn.py): tokens of a `vocab`-word vocabulary ->
 * embedding of `embedding` units -> `layers` recurrent layers of `embedding` units each ->
 * a linear decoder to `vocab` logits at every position, softmax cross-entropy against the next
 * tokens, the mean over every position (rnn.py masks random lengths; here every position
 * counts). Initialisation is TensorFlow's: glorot-uniform on the embedding [vocab, embedding],
 * on each cell's kernel (as TensorFlow holds it: [2 x embedding, gates x embedding]) and on the
 * decoder, zero biases.
 *
 *   cell lstm  tokens[N, S] -> permuted to [S, N] -> embedding -> one LSTM op per layer over the
 *              whole sequence (torch.nn.LSTM's weights and both biases: 8E^2 + 8E per layer,
 *              4E more than TensorFlow's BasicLSTMCell, whose one bias this has twice) ->
 *              permuted back to [N, S, E] -> decoder -> logits[N, S, vocab]
 *   cell rnn   h_t = tanh(x_t W + b + h_(t-1) U) (BasicRNNCell, zero initial state: no U term
 *              at t = 0), unrolled from op set 3's MATMUL and op set 1's ADD and TANH. Op set 3
 *              has no op that takes one step out of a sequence or stacks steps into one, so
 *              the sequence arrives as S inputs tokens.<t> and targets.<t> of [N] each, every
 *              step has its own embedding lookup, decoder and loss (weight 1 / S), and the
 *              program has no [N, S] token input (results then have no tokens_per_sample).
 *              Taking the steps out of one [S, N, E] tensor by gathering rows (the
 *              transformer's way of splitting) would make every step's backward write a
 *              gradient of the whole sequence: S^2 x N x E bytes that no RNN moves. */
#include "paradnn.h"

#define MAX_LAYERS 1024 /* the declared range of `layers` (checked by the host) */

static const xpb_init zeros = {XPB_INIT_ZEROS, 0, 0};

/* decoder.weight [vocab, E] and decoder.bias [vocab]. */
static xpb_status decoder_params(xpb_value *w, xpb_value *bias, const pdn *p)
{
    XPB_TRY(pdn_param(w, p, "decoder.weight", p->c.vocab, p->c.embed,
                      pdn_glorot(p->c.embed, p->c.vocab)));
    return pdn_param(bias, p, "decoder.bias", p->c.vocab, 0, zeros);
}

/* One LSTM op per layer over x[S, N, E]. */
static xpb_status lstm_layers(xpb_value *x, const pdn *p)
{
    static const char *const kind[4] = {"weight_ih", "weight_hh", "bias_ih", "bias_hh"};
    const int64_t e = p->c.embed;
    for (int64_t l = 0; l < p->c.layers; l++) {
        xpb_value in[5] = {*x};
        char name[48];
        for (int i = 0; i < 4; i++) {
            pdn_name(name, sizeof name, "rnn.%s_l%lld", kind[i], (long long)l);
            XPB_TRY(pdn_param(&in[i + 1], p, name, 4 * e, i < 2 ? e : 0,
                              i < 2 ? pdn_glorot(2 * e, 4 * e) : zeros));
        }
        pdn_name(name, sizeof name, "rnn.l%lld", (long long)l);
        XPB_TRY(p->api->op3(x, p->b, name, XPB_OP_LSTM, in, 5, NULL, NULL));
    }
    return XPB_OK;
}

static xpb_status build_lstm(const pdn *p, uint32_t phase, xpb_value emb)
{
    const pdn_cfg *c = &p->c;
    xpb_value tok, targets, x, w, bias, logits, loss;
    const xpb_input_desc tokens_desc = {"tokens", XPB_DTYPE_I32,         2, {c->n, c->seq},
                                        0,        (double)(c->vocab - 1)};
    const xpb_input_desc targets_desc = {"targets", XPB_DTYPE_I32,         2, {c->n, c->seq},
                                         0,         (double)(c->vocab - 1)};
    XPB_TRY(p->api->input(&tok, p->b, &tokens_desc));
    XPB_TRY(p->api->input(&targets, p->b, &targets_desc));
    const xpb_op_attrs3 swap = {.struct_size = sizeof swap, .perm = {1, 0, 2}};
    XPB_TRY(p->api->op3(&tok, p->b, "tokens.seq_first", XPB_OP_PERMUTE, &tok, 1, NULL, &swap));
    xpb_value lookup[2] = {tok, emb};
    XPB_TRY(p->api->op3(&x, p->b, "embedding", XPB_OP_EMBEDDING, lookup, 2, NULL, NULL));
    XPB_TRY(lstm_layers(&x, p));
    XPB_TRY(p->api->op3(&x, p->b, "batch_first", XPB_OP_PERMUTE, &x, 1, NULL, &swap));
    XPB_TRY(decoder_params(&w, &bias, p));
    xpb_value dec[3] = {x, w, bias};
    XPB_TRY(p->api->op3(&logits, p->b, "decoder", XPB_OP_LINEAR, dec, 3, NULL, NULL));
    XPB_TRY(p->api->output(p->b, "logits", logits));
    xpb_value xent[2] = {logits, targets};
    XPB_TRY(p->api->op3(&loss, p->b, "loss", XPB_OP_SOFTMAX_XENT, xent, 2, NULL, NULL));
    return p->api->loss(p->b, phase, loss, 1.0);
}

/* The plain cell's parameters of every layer: w[l][0] = W [E, E], w[l][1] = U [E, E],
 * w[l][2] = b [E]. */
static xpb_status rnn_params(xpb_value (*w)[3], const pdn *p)
{
    static const char *const kind[3] = {"w_x", "w_h", "bias"};
    const int64_t e = p->c.embed;
    for (int64_t l = 0; l < p->c.layers; l++)
        for (int i = 0; i < 3; i++) {
            char name[48];
            pdn_name(name, sizeof name, "rnn.%s_l%lld", kind[i], (long long)l);
            XPB_TRY(pdn_param(&w[l][i], p, name, e, i < 2 ? e : 0,
                              i < 2 ? pdn_glorot(2 * e, e) : zeros));
        }
    return XPB_OK;
}

/* Layer l at step t: h[l] = tanh(x W + b + h[l] U), the U term from step 1 on; x = h[l]. */
static xpb_status rnn_cell(xpb_value *x, xpb_value *h, const pdn *p, const xpb_value *w, int64_t l,
                           int64_t t)
{
    char layer[64];
    xpb_value a, in[3] = {*x, w[0], w[2]};
    pdn_name(layer, sizeof layer, "rnn.l%lld.t%lld.x", (long long)l, (long long)t);
    XPB_TRY(p->api->op3(&a, p->b, layer, XPB_OP_MATMUL, in, 3, NULL, NULL));
    if (t > 0) {
        xpb_value hu, mm[2] = {*h, w[1]};
        pdn_name(layer, sizeof layer, "rnn.l%lld.t%lld.h", (long long)l, (long long)t);
        XPB_TRY(p->api->op3(&hu, p->b, layer, XPB_OP_MATMUL, mm, 2, NULL, NULL));
        xpb_value sum[2] = {a, hu};
        pdn_name(layer, sizeof layer, "rnn.l%lld.t%lld.add", (long long)l, (long long)t);
        XPB_TRY(p->api->op(&a, p->b, layer, XPB_OP_ADD, sum, 2, NULL));
    }
    pdn_name(layer, sizeof layer, "rnn.l%lld.t%lld.tanh", (long long)l, (long long)t);
    XPB_TRY(xpb_layer_unary(h, p->b, p->api, layer, XPB_OP_TANH, a, NULL));
    *x = *h;
    return XPB_OK;
}

/* Step t of the unrolled plain RNN: its inputs, lookup, cells, decoder and loss. */
static xpb_status rnn_step(const pdn *p, uint32_t phase, xpb_value emb, xpb_value (*w)[3],
                           xpb_value *h, const xpb_value *dec_w, int64_t t)
{
    const pdn_cfg *c = &p->c;
    char name[48];
    xpb_value tok, target, x, logits, loss;
    xpb_input_desc d = {name, XPB_DTYPE_I32, 1, {c->n, 1, 1, 1}, 0, (double)(c->vocab - 1)};
    pdn_name(name, sizeof name, "tokens.%lld", (long long)t);
    XPB_TRY(p->api->input(&tok, p->b, &d));
    pdn_name(name, sizeof name, "targets.%lld", (long long)t);
    XPB_TRY(p->api->input(&target, p->b, &d));
    xpb_value lookup[2] = {tok, emb};
    pdn_name(name, sizeof name, "embedding.t%lld", (long long)t);
    XPB_TRY(p->api->op3(&x, p->b, name, XPB_OP_EMBEDDING, lookup, 2, NULL, NULL));
    for (int64_t l = 0; l < c->layers; l++)
        XPB_TRY(rnn_cell(&x, &h[l], p, w[l], l, t));
    xpb_value dec[3] = {x, dec_w[0], dec_w[1]};
    pdn_name(name, sizeof name, "decoder.t%lld", (long long)t);
    XPB_TRY(p->api->op(&logits, p->b, name, XPB_OP_LINEAR, dec, 3, NULL));
    pdn_name(name, sizeof name, "logits.%lld", (long long)t);
    XPB_TRY(p->api->output(p->b, name, logits));
    xpb_value xent[2] = {logits, target};
    pdn_name(name, sizeof name, "loss.t%lld", (long long)t);
    XPB_TRY(p->api->op(&loss, p->b, name, XPB_OP_SOFTMAX_XENT, xent, 2, NULL));
    return p->api->loss(p->b, phase, loss, 1.0 / (double)c->seq);
}

static xpb_status build_plain(const pdn *p, uint32_t phase, xpb_value emb)
{
    xpb_value w[MAX_LAYERS][3], h[MAX_LAYERS], dec_w[2];
    XPB_TRY(rnn_params(w, p));
    XPB_TRY(decoder_params(&dec_w[0], &dec_w[1], p));
    for (int64_t t = 0; t < p->c.seq; t++)
        XPB_TRY(rnn_step(p, phase, emb, w, h, dec_w, t));
    return XPB_OK;
}

xpb_status pdn_build_rnn(const pdn *p)
{
    uint32_t phase;
    xpb_value emb;
    XPB_TRY(p->api->phase(&phase, p->b, "train", 0, &pdn_optimizer));
    XPB_TRY(pdn_param(&emb, p, "embeddings", p->c.vocab, p->c.embed,
                      pdn_glorot(p->c.vocab, p->c.embed)));
    return p->c.lstm ? build_lstm(p, phase, emb) : build_plain(p, phase, emb);
}
