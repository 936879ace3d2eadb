/* Seeded inputs of a conformance case (see conformance_case.h): the same numbers on both
 * sides, from a splitmix64 stream.
 *
 * Data (XPB_CT_INIT_UNIFORM) is of mixed magnitude: a random sign, a magnitude spread evenly
 * over eight binades [2^-8, 1] and a full mantissa. Products of such numbers have exponents
 * 16 binades apart, so the sums of a backward op (a weight gradient over the batch and the
 * pixels, a batch-norm statistic over a channel) are not exact in fp32, not even of
 * bf16-rounded inputs: a backend that sums in another order shows a small non-zero error,
 * one that sums in too low a precision fails, instead of both computing the reference's
 * numbers exactly (as they did on uniform inputs of one binade, whose bf16-rounded products
 * sum exactly). */
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

/* A uniform draw in [0, 1) from the stream s (53 bits). */
static double uniform(uint64_t *s)
{
    return (double)(mix(s) >> 11) * 0x1p-53;
}

/* One float of tensor t from the uniform draw u in [0, 1) (and more of the stream s). */
static float value(const xpb_ct_case *c, uint32_t t, int64_t numel, double u, uint64_t *s)
{
    switch (c->init[t]) {
    case XPB_CT_INIT_UNIFORM: {
        uint64_t bits = mix(s); /* sign and binade; u gives the mantissa */
        double magnitude = ldexp(0.5 + 0.5 * u, -(int)((bits >> 1) % 8u));
        return (float)(bits & 1u ? -magnitude : magnitude);
    }
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
        double u = uniform(s);
        if (c->init[t] == XPB_CT_INIT_LABELS) {
            ((int32_t *)buf)[i] = (int32_t)(u * (double)c->labels[t]);
            continue;
        }
        float v = value(c, t, numel, u, s);
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
