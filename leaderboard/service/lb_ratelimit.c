/* Token-bucket rate limiting per key (see lb_ratelimit.h). */
#include "service/lb_ratelimit.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#define BUCKETS 256
/* Buckets are swept for idle entries every SWEEP_EVERY takes. */
#define SWEEP_EVERY 1024

struct entry {
    long long key;
    double tokens, last;
    struct entry *next;
};

struct lb_ratelimit {
    pthread_mutex_t lock;
    double rate; /* tokens per second */
    double burst;
    unsigned long takes;
    struct entry *table[BUCKETS];
};

struct lb_ratelimit *lb_ratelimit_new(double per_minute, double burst)
{
    struct lb_ratelimit *rl = calloc(1, sizeof *rl);
    if (!rl)
        return NULL;
    pthread_mutex_init(&rl->lock, NULL);
    rl->rate = per_minute > 0 ? per_minute / 60.0 : 0;
    rl->burst = burst >= 1 ? burst : 1;
    return rl;
}

void lb_ratelimit_free(struct lb_ratelimit *rl)
{
    if (!rl)
        return;
    for (int i = 0; i < BUCKETS; i++) {
        struct entry *e = rl->table[i];
        while (e) {
            struct entry *next = e->next;
            free(e);
            e = next;
        }
    }
    pthread_mutex_destroy(&rl->lock);
    free(rl);
}

/* Drops entries that would be full by now: they carry no information. */
static void sweep(struct lb_ratelimit *rl, double now)
{
    for (int i = 0; i < BUCKETS; i++) {
        struct entry **link = &rl->table[i];
        while (*link) {
            struct entry *e = *link;
            if (e->tokens + (now - e->last) * rl->rate >= rl->burst) {
                *link = e->next;
                free(e);
            } else {
                link = &e->next;
            }
        }
    }
}

int lb_ratelimit_take(struct lb_ratelimit *rl, long long key, double now, long *retry_after_s)
{
    *retry_after_s = 0;
    if (rl->rate <= 0)
        return 1;
    pthread_mutex_lock(&rl->lock);
    if (++rl->takes % SWEEP_EVERY == 0)
        sweep(rl, now);
    unsigned h = (unsigned)((unsigned long long)key * 0x9E3779B97F4A7C15ull >> 56) % BUCKETS;
    struct entry *e = rl->table[h];
    while (e && e->key != key)
        e = e->next;
    if (!e) {
        e = calloc(1, sizeof *e);
        if (!e) {
            pthread_mutex_unlock(&rl->lock);
            return 1; /* out of memory: fail open rather than lock everyone out */
        }
        e->key = key;
        e->tokens = rl->burst;
        e->last = now;
        e->next = rl->table[h];
        rl->table[h] = e;
    }
    if (now > e->last) {
        e->tokens += (now - e->last) * rl->rate;
        if (e->tokens > rl->burst)
            e->tokens = rl->burst;
        e->last = now;
    }
    int ok = e->tokens >= 1.0;
    if (ok)
        e->tokens -= 1.0;
    else
        *retry_after_s = (long)ceil((1.0 - e->tokens) / rl->rate);
    pthread_mutex_unlock(&rl->lock);
    return ok;
}
