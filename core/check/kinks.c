/* Counting kink flips between two runs of one step (see kinks.h). */
#include "check/kinks.h"

#include <stdlib.h>

/* Both sides' values of the tensors an op's kink depends on: inputs[0] (and, for L1,
 * inputs[1]) of one backward op. */
typedef struct kink_values {
    int64_t n;
    float *a[2]; /* session a: the op's first input, and its second for L1 */
    float *b[2]; /* session b: likewise */
} kink_values;

static void values_free(kink_values *v)
{
    for (int k = 0; k < 2; k++) {
        free(v->a[k]);
        free(v->b[k]);
    }
}

/* Reads what `op` (RELU_BWD, LEAKY_RELU_BWD: its input y; L1_LOSS_BWD: x and t) depends on from
 * both sessions into *v (released with values_free, also on failure). */
static xpb_status values_read(kink_values *v, xpb_session *a, xpb_session *b,
                              const xpb_model_program *mp, const xpb_op *op, int l1, xpb_err *err)
{
    uint32_t first = op->inputs[l1 ? 0 : 1];
    v->n = xpb_tensor_numel(&mp->tensors[first]);
    for (int k = 0; k < (l1 ? 2 : 1); k++) {
        uint32_t t = k == 0 ? first : op->inputs[1];
        v->a[k] = malloc((size_t)v->n * sizeof(float));
        v->b[k] = malloc((size_t)v->n * sizeof(float));
        if (!v->a[k] || !v->b[k])
            return xpb_err_set(err, XPB_OUT_OF_MEMORY, "kink flips: out of memory");
        xpb_status st = xpb_session_read(a, t, v->a[k], err);
        if (st == XPB_OK)
            st = xpb_session_read(b, t, v->b[k], err);
        if (st != XPB_OK)
            return st;
    }
    return XPB_OK;
}

static int64_t count_flips(const kink_values *v, int l1)
{
    int64_t flips = 0;
    for (int64_t j = 0; j < v->n; j++) {
        if (l1) {
            float da = v->a[0][j] - v->a[1][j], db = v->b[0][j] - v->b[1][j];
            flips += (da > 0) != (db > 0) || (da < 0) != (db < 0);
        } else {
            flips += (v->a[0][j] > 0) != (v->b[0][j] > 0);
        }
    }
    return flips;
}

xpb_status xpb_kink_flips(int64_t *flips, xpb_session *a, xpb_session *b,
                          const xpb_model_program *mp, xpb_err *err)
{
    *flips = 0;
    for (uint32_t i = 0; i < mp->n_ops; i++) {
        const xpb_op *op = &mp->ops[i];
        int l1 = op->kind == XPB_OP_L1_LOSS_BWD;
        if (!l1 && op->kind != XPB_OP_RELU_BWD && op->kind != XPB_OP_LEAKY_RELU_BWD)
            continue;
        kink_values v = {0};
        xpb_status st = values_read(&v, a, b, mp, op, l1, err);
        if (st == XPB_OK)
            *flips += count_flips(&v, l1);
        values_free(&v);
        if (st != XPB_OK)
            return st;
    }
    return XPB_OK;
}
