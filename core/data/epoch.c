/* Epoch permutations (see epoch.h). */
#include "data/epoch.h"

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A uniform integer in [0, bound) without modulo bias (Lemire's method, rejection). */
static uint32_t below(uint64_t *state, uint32_t bound)
{
    uint64_t m = (uint64_t)(uint32_t)(splitmix64(state) >> 32) * bound;
    uint32_t low = (uint32_t)m;
    if (low < bound) {
        uint32_t threshold = (uint32_t)(-bound) % bound;
        while (low < threshold) {
            m = (uint64_t)(uint32_t)(splitmix64(state) >> 32) * bound;
            low = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}

void xpb_epoch_order(uint32_t *order, uint32_t n, uint64_t seed, uint32_t epoch)
{
    uint64_t state = seed ^ (0xD1B54A32D192ED03ull * ((uint64_t)epoch + 1));
    for (uint32_t i = 0; i < n; i++)
        order[i] = i;
    for (uint32_t i = n; i > 1; i--) {
        uint32_t j = below(&state, i);
        uint32_t t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
}

uint32_t xpb_epoch_batches(uint32_t n, uint32_t batch, uint32_t ranks)
{
    uint64_t g = (uint64_t)batch * (ranks ? ranks : 1);
    return g ? (uint32_t)(n / g) : 0;
}
