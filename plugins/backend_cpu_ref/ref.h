/* Reference backend internals: one kernel per op of op sets 1 to 3, plain C, no dependencies.
 * Kernels are grouped one concept per file (conv.c, linear.c, pool.c, ...); kernels.c maps
 * op kinds to kernels; plugin.c is the ABI glue (tensors, executables, run). Shapes and
 * attributes are checked before a kernel runs by the SDK's rules (xpb_op_check,
 * include/xpubench/shapes.h). */
#ifndef XPB_REF_H
#define XPB_REF_H

#include <stddef.h>
#include <stdint.h>

#include <xpubench/comm.h>
#include <xpubench/program.h>
#include <xpubench/shapes.h>
#include <xpubench/status.h>

/* The most operands one op may have: every one the SDK's rules accept (CLIP_GRAD_NORM takes one
 * input per gradient of a phase, LSTM_BWD ten inputs and seven outputs). */
#define REF_MAX_INPUTS XPB_SHP_MAX_IN
#define REF_MAX_OUTPUTS XPB_SHP_MAX_OUT

/* Everything a kernel sees of one op. `op` is a complete xpb_op of these headers (the plugin
 * copies an older host's shorter op into one, the members it lacks zero), so that kernels read
 * every attribute directly. Operand i of the op (input i < op->n_inputs, output j <
 * op->n_outputs, however many: xpb_op_input / xpb_op_output) is in_desc[i] / in[i] and
 * out_desc[j] / out[j], NULL when absent or not wanted. Data pointers are dense
 * canonical-layout buffers (float, or int32_t for I32 tensors: cast). An in-place input (marked
 * * in XPB_OP_MAP) is written through in[i]. */
typedef struct ref_op_args {
    const xpb_op *op;
    const xpb_tensor_desc *in_desc[REF_MAX_INPUTS];
    const xpb_tensor_desc *out_desc[REF_MAX_OUTPUTS];
    float *in[REF_MAX_INPUTS];
    float *out[REF_MAX_OUTPUTS];
    uint64_t call_index;          /* how many times this op ran before (DROPOUT's mask stream) */
    const xpb_communicator *comm; /* ALL_REDUCE: the ranks to average over; NULL: one process */
    char *err;                    /* message buffer for a failure (names what is wrong) */
    size_t err_size;
} ref_op_args;

typedef xpb_status (*ref_kernel_fn)(const ref_op_args *a);

/* The kernel of an op kind (static), or NULL when the reference does not implement it. */
ref_kernel_fn ref_kernel_for(uint32_t kind);

/* C[M,N] = alpha * op(A) op(B) + beta * C, row-major, op = transpose when trans_* is set.
 * lda/ldb/ldc are row strides of the matrices as stored. Cache-blocked, single-threaded. */
void ref_gemm(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, float alpha,
              const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
              int64_t ldc);

/* y[m, n] += bias[n] on every row (fp32), and out[n] = the sum of the rows of x[m, n] (in
 * double): a bias and its gradient (gemm.c). */
void ref_add_bias_rows(float *y, int64_t m, int64_t n, const float *bias);
void ref_sum_rows(float *out, const float *x, int64_t m, int64_t n);

/* Kernels, by file. */
/* conv.c */
xpb_status ref_conv2d(const ref_op_args *a);
xpb_status ref_conv2d_bwd_data(const ref_op_args *a);
xpb_status ref_conv2d_bwd_weights(const ref_op_args *a);
xpb_status ref_conv_t2d(const ref_op_args *a);
xpb_status ref_conv_t2d_bwd_data(const ref_op_args *a);
xpb_status ref_conv_t2d_bwd_weights(const ref_op_args *a);
/* linear.c */
xpb_status ref_linear(const ref_op_args *a);
xpb_status ref_linear_bwd_data(const ref_op_args *a);
xpb_status ref_linear_bwd_weights(const ref_op_args *a);
/* norm.c */
xpb_status ref_batchnorm_train(const ref_op_args *a);
xpb_status ref_batchnorm_infer(const ref_op_args *a);
xpb_status ref_batchnorm_bwd(const ref_op_args *a);
xpb_status ref_instancenorm(const ref_op_args *a);
xpb_status ref_instancenorm_bwd(const ref_op_args *a);
/* eltwise.c */
xpb_status ref_relu(const ref_op_args *a);
xpb_status ref_relu_bwd(const ref_op_args *a);
xpb_status ref_leaky_relu(const ref_op_args *a);
xpb_status ref_leaky_relu_bwd(const ref_op_args *a);
xpb_status ref_tanh(const ref_op_args *a);
xpb_status ref_tanh_bwd(const ref_op_args *a);
xpb_status ref_add(const ref_op_args *a);
xpb_status ref_reshape(const ref_op_args *a);
xpb_status ref_fill(const ref_op_args *a);
xpb_status ref_copy(const ref_op_args *a);
/* pool.c */
xpb_status ref_maxpool(const ref_op_args *a);
xpb_status ref_maxpool_bwd(const ref_op_args *a);
xpb_status ref_avgpool(const ref_op_args *a);
xpb_status ref_avgpool_bwd(const ref_op_args *a);
xpb_status ref_global_avgpool(const ref_op_args *a);
xpb_status ref_global_avgpool_bwd(const ref_op_args *a);
/* pad.c */
xpb_status ref_reflection_pad(const ref_op_args *a);
xpb_status ref_reflection_pad_bwd(const ref_op_args *a);
/* loss.c */
xpb_status ref_softmax_xent(const ref_op_args *a);
xpb_status ref_softmax_xent_bwd(const ref_op_args *a);
xpb_status ref_mse_loss(const ref_op_args *a);
xpb_status ref_mse_loss_bwd(const ref_op_args *a);
xpb_status ref_l1_loss(const ref_op_args *a);
xpb_status ref_l1_loss_bwd(const ref_op_args *a);
/* dropout.c */
xpb_status ref_dropout(const ref_op_args *a);
xpb_status ref_dropout_bwd(const ref_op_args *a);
/* optim.c */
xpb_status ref_sgd_update(const ref_op_args *a);
xpb_status ref_adam_update(const ref_op_args *a);
/* collective.c (op set 2) */
xpb_status ref_all_reduce(const ref_op_args *a);

/* ---- op set 3 ---- */

/* The element strides, in the row-major tensor t, of the `nd` dims `dims` that t broadcasts to
 * (numpy's rules, aligned right): strides[k] is 0 where t lacks dim k or has 1 there
 * (broadcast.c). */
void ref_bcast_strides(int64_t *strides, const xpb_tensor_desc *t, uint32_t nd,
                       const int64_t *dims);

/* Writes "<OP> (layer '<layer>'): " and the formatted message into a->err and returns `st`:
 * a kernel's run-time refusal names its op and layer (message.c). */
xpb_status ref_fail(const ref_op_args *a, xpb_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* matmul.c */
xpb_status ref_matmul(const ref_op_args *a);
xpb_status ref_matmul_bwd(const ref_op_args *a);
xpb_status ref_batched_matmul(const ref_op_args *a);
xpb_status ref_batched_matmul_bwd(const ref_op_args *a);
/* broadcast.c */
xpb_status ref_permute(const ref_op_args *a);
xpb_status ref_add_broadcast(const ref_op_args *a);
xpb_status ref_mul(const ref_op_args *a);
xpb_status ref_sum_to(const ref_op_args *a);
xpb_status ref_scale(const ref_op_args *a);
/* softmax.c */
xpb_status ref_softmax(const ref_op_args *a);
xpb_status ref_softmax_bwd(const ref_op_args *a);
/* layer_norm.c */
xpb_status ref_layer_norm(const ref_op_args *a);
xpb_status ref_layer_norm_bwd(const ref_op_args *a);
/* gelu.c */
xpb_status ref_gelu(const ref_op_args *a);
xpb_status ref_gelu_bwd(const ref_op_args *a);
/* embedding.c */
xpb_status ref_embedding(const ref_op_args *a);
xpb_status ref_embedding_bwd(const ref_op_args *a);
/* lstm.c */
xpb_status ref_lstm(const ref_op_args *a);
xpb_status ref_lstm_bwd(const ref_op_args *a);
/* optim.c */
xpb_status ref_adamw_update(const ref_op_args *a);
xpb_status ref_clip_grad_norm(const ref_op_args *a);

#endif
