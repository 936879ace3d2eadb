/* The host's deterministic random numbers: splitmix64 streams keyed by (seed, name, index),
 * so that a tensor's values do not depend on what else the model declares. */
#ifndef XPB_CORE_RNG_H
#define XPB_CORE_RNG_H

#include <stdint.h>

typedef struct xpb_rng {
    uint64_t state;
} xpb_rng;

/* A stream for `seed`, the string `key` (e.g. a parameter name) and `index`. */
void xpb_rng_init(xpb_rng *r, uint64_t seed, const char *key, uint64_t index);
uint64_t xpb_rng_next(xpb_rng *r);
/* Uniform in [0, 1) with 53 random bits. */
double xpb_rng_uniform(xpb_rng *r);
/* Standard normal (Box-Muller). */
double xpb_rng_normal(xpb_rng *r);

#endif
