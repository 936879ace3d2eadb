/* Additive attention masks of conformance cases (XPB_CT_INIT_MASK, see conformance_case.h): the
 * seeded uniform values of xpb_ct_inputs with about a third of the keys hidden by -inf. Which
 * keys depends only on the seeded values, so both sides of a case see the same mask, under
 * reduced precision too (the -inf are written after the rounding to bf16). */
#include "check/conformance_case.h"

#include <math.h>

void xpb_ct_masks(const xpb_ct_case *c, void **inputs)
{
    for (uint32_t t = 0; t < c->n_t; t++) {
        if (c->init[t] != XPB_CT_INIT_MASK || !inputs[t])
            continue;
        float *m = inputs[t];
        int64_t sk = c->t[t].dims[c->t[t].ndim - 1], n = xpb_tensor_numel(&c->t[t]);
        for (int64_t i = 0; i < n; i++)
            if (i % sk != 0 && m[i] < -1.0f / 3.0f) /* key 0 stays visible: no row all -inf */
                m[i] = -INFINITY;
    }
}
