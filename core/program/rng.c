/* Deterministic random streams (see rng.h). */
#include "program/rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void xpb_rng_init(xpb_rng *r, uint64_t seed, const char *key, uint64_t index)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a of the key */
    for (const unsigned char *p = (const unsigned char *)(key ? key : ""); *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    r->state = seed;
    uint64_t a = splitmix64(&r->state) ^ h;
    r->state = a;
    uint64_t b = splitmix64(&r->state) ^ index;
    r->state = b;
    splitmix64(&r->state);
}

uint64_t xpb_rng_next(xpb_rng *r)
{
    return splitmix64(&r->state);
}

double xpb_rng_uniform(xpb_rng *r)
{
    return (double)(xpb_rng_next(r) >> 11) * 0x1.0p-53;
}

double xpb_rng_normal(xpb_rng *r)
{
    double u1 = xpb_rng_uniform(r), u2 = xpb_rng_uniform(r);
    if (u1 < 1e-300)
        u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}
