/* The attacks of issue 14 as test support: crowds of slow or idle connections from several
 * loopback addresses, and a normal client that keeps asking for a page and times every
 * answer. test_lb_attacks runs them at test scale; lbt_attack (the tool) at full scale, for
 * the figures in docs/leaderboard.md. */
#ifndef LBT_ATTACK_H
#define LBT_ATTACK_H

#include <stddef.h>

/* A crowd of connections to 127.0.0.1:port, spread over source addresses 127.0.0.2 ..
 * 127.0.0.(1 + n_sources). `slow`: each connection completes TLS (when cacert is given) and
 * then sends a request head one byte every `interval_s` seconds, never finishing it
 * (slowloris); otherwise it sends nothing at all. A connection the server closes is opened
 * again, as an attacker would. */
struct lbt_crowd_opts {
    int port;
    int connections;
    int n_sources;
    const char *cacert; /* NULL: plain TCP (no TLS handshake either) */
    int slow;
    double interval_s;
};

struct lbt_crowd;

/* Starts the crowd in its own thread; NULL on failure. The caller stops it: lbt_crowd_stop. */
struct lbt_crowd *lbt_crowd_start(const struct lbt_crowd_opts *opts);

/* Stops and frees it; *reopened_out (may be NULL) receives how many times the server closed
 * one of its connections (and it came back). */
void lbt_crowd_stop(struct lbt_crowd *crowd, long *reopened_out);

/* A normal client: GET url (HTTPS with cacert) again and again, each with a 5 s timeout, a
 * pause of pause_s between them. */
struct lbt_prober;

struct lbt_probe_stats {
    long requests;
    long failures;      /* no answer, or not 200 */
    double max_latency; /* seconds, over the answered ones */
    long slow;          /* answers that took a second or more */
};

/* Starts the client in its own thread; NULL on failure. The caller stops it (and gets its
 * statistics): lbt_prober_stop, which frees it. */
struct lbt_prober *lbt_prober_start(const char *url, const char *cacert, double pause_s);
void lbt_prober_stop(struct lbt_prober *p, struct lbt_probe_stats *out);

#endif
