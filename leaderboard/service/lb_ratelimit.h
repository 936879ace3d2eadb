/* Per-token request limits: a token bucket per key (the token's id). A bucket holds up to
 * `burst` requests and refills at `per_minute` / 60 per second; a request takes one. Thread-
 * safe. Buckets idle long enough to be full again are forgotten, so memory stays bounded by
 * the number of recently active tokens. */
#ifndef LB_RATELIMIT_H
#define LB_RATELIMIT_H

struct lb_ratelimit;

/* NULL when out of memory. per_minute <= 0 disables limiting (every take succeeds). The
 * caller owns the limiter: lb_ratelimit_free. */
struct lb_ratelimit *lb_ratelimit_new(double per_minute, double burst);
void lb_ratelimit_free(struct lb_ratelimit *rl);

/* Takes one request for `key` at time `now` (seconds, monotonic: xpb_now). Returns 1 when allowed;
 * 0 when limited, with *retry_after_s set to the whole seconds until one is available. */
int lb_ratelimit_take(struct lb_ratelimit *rl, long long key, double now, long *retry_after_s);

#endif
