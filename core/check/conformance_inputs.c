/* Seeded inputs of a conformance case (see conformance_case.h): the same numbers on both
 * sides, from a splitmix64 stream. */
#include "check/conformance_case.h"

#include <math.h>
#include <stdlib.h>

static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The nearest bf16-representable float (round to nearest even). */
static float bf16_round(float f)
{
    union {
        float f;
        uint32_t u;
    } x = {.f = f};
    x.u += 0x7fffu + ((x.u >> 16) & 1u);
    x.u &= 0xffff0000u;
    return x.f;
}

/* One float of tensor t from the uniform draw u in [0, 1). */
static float value(const xpb_ct_case *c, uint32_t t, int64_t numel, double u)
{
    switch (c->init[t]) {
    case XPB_CT_INIT_POSITIVE:
        return (float)(0.5 + u);
    case XPB_CT_INIT_STEP:
        return 3.0f;
    case XPB_CT_INIT_FANIN:
        return (float)((2.0 * u - 1.0) / sqrt((double)(numel / c->t[t].dims[0])));
    default:
        return (float)(2.0 * u - 1.0);
    }
}

/* Fills tensor t of c (numel elements) into buf from the stream s. */
static void fill(void *buf, const xpb_ct_case *c, uint32_t t, int64_t numel, uint64_t *s,
                 int round_bf16)
{
    for (int64_t i = 0; i < numel; i++) {
        double u = (double)(mix(s) >> 11) * 0x1p-53;
        if (c->init[t] == XPB_CT_INIT_LABELS) {
            ((int32_t *)buf)[i] = (int32_t)(u * (double)c->labels[t]);
            continue;
        }
        float v = value(c, t, numel, u);
        ((float *)buf)[i] = round_bf16 ? bf16_round(v) : v;
    }
}

void xpb_ct_buffers_free(void **b)
{
    if (!b)
        return;
    for (size_t i = 0; i < XPB_CT_MAX_TENSORS; i++)
        free(b[i]);
    free(b);
}

void **xpb_ct_inputs(const xpb_ct_case *c, uint64_t seed, int round_bf16)
{
    void **data = calloc(XPB_CT_MAX_TENSORS, sizeof *data);
    if (!data)
        return NULL;
    uint64_t s = seed;
    for (uint32_t t = 0; t < c->n_t; t++) {
        if (c->init[t] == XPB_CT_INIT_NONE)
            continue;
        int64_t n = xpb_tensor_numel(&c->t[t]);
        if (!(data[t] = malloc((size_t)n * 4))) {
            xpb_ct_buffers_free(data);
            return NULL;
        }
        fill(data[t], c, t, n, &s, round_bf16);
    }
    return data;
}
