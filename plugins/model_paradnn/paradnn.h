/* The paradnn plugin's internals: the configuration every family reads (model_paradnn.c),
 * what they share (paradnn_common.c) and the three builders, one per family of ParaDnn (Wang,
 * Wei and Brooks, "Benchmarking TPU, GPU, and CPU Platforms for Deep Learning", 2019, and its
 * generator github.com/Emma926/paradnn): fully connected (paradnn_fc.c), residual
 * convolutional (paradnn_cnn.c) and recurrent (paradnn_rnn.c). Only the builder is touched:
 * every function returns the status of the failing builder call. */
#ifndef PDN_PARADNN_H
#define PDN_PARADNN_H

#include <stddef.h>
#include <stdint.h>

#include <xpubench/xpubench.h>

enum pdn_family { PDN_FC, PDN_CNN, PDN_RNN };

/* The resolved model parameters (docs/models.md, "ParaDnn"). */
typedef struct pdn_cfg {
    int family;      /* enum pdn_family */
    int64_t n;       /* batch */
    int64_t layers;  /* fc: hidden layers; rnn: stacked recurrent layers */
    int64_t nodes;   /* fc: units of every hidden layer */
    int64_t input;   /* fc: input features */
    int64_t output;  /* fc, cnn: classes */
    int bottleneck;  /* cnn: bottleneck blocks (1x1, 3x3, 1x1 x4) instead of residual ones */
    int64_t blocks;  /* cnn: blocks in each of the four groups */
    int64_t filters; /* cnn: filters of the stem and the first group (doubled per group) */
    int64_t image;   /* cnn: input height and width */
    int lstm;        /* rnn: LSTM cells instead of plain (tanh) RNN cells */
    int64_t embed;   /* rnn: embedding size, also the units of every recurrent layer */
    int64_t seq;     /* rnn: tokens per sample */
    int64_t vocab;   /* rnn: vocabulary */
} pdn_cfg;

/* A build in progress: the builder, its functions and the configuration. */
typedef struct pdn {
    xpb_builder *b;
    const xpb_builder_api *api;
    pdn_cfg c;
} pdn;

/* Formats a layer or parameter name into out[size] (cut at size - 1 characters: names here are
 * far shorter). */
void pdn_name(char *out, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* TensorFlow's default initialiser of a dense or recurrent kernel (glorot_uniform):
 * U(-sqrt(6 / (fan_in + fan_out)), +sqrt(6 / (fan_in + fan_out))). */
xpb_init pdn_glorot(int64_t fan_in, int64_t fan_out);

/* A trainable parameter `name` of 1 or 2 dims ([d0] or [d0, d1]) with initialiser `init`. */
xpb_status pdn_param(xpb_value *out, const pdn *p, const char *name, int64_t d0, int64_t d1,
                     xpb_init init);

/* The optimizer of every family: ParaDnn's "momentum" choice (lr 0.1, momentum 0.9). Its
 * default, RMSProp, is not an update of the op set; the step's cost differs only in the
 * update ops, which move the parameters' bytes either way. */
extern const xpb_optimizer_desc pdn_optimizer;

/* The ending of the fc and cnn families: `logits` becomes the output "logits", and softmax
 * cross-entropy against `labels` (layer "loss") the loss of the one phase "train", which
 * updates every parameter with pdn_optimizer. */
xpb_status pdn_classifier_head(const pdn *p, xpb_value logits, xpb_value labels);

/* The three families. */
xpb_status pdn_build_fc(const pdn *p);
xpb_status pdn_build_cnn(const pdn *p);
xpb_status pdn_build_rnn(const pdn *p);

#endif
