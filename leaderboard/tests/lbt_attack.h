/* The attacks of issues 14 and 22 as test support: crowds of slow, idle or never-reading
 * connections from several loopback addresses, a crowd of clients asking for distinct filtered
 * rankings pages, a board filled with many runs, the service's memory watched from /proc, and a
 * normal client that keeps asking for a page and times every answer. test_lb_attacks runs them
 * at test scale by default and at the full scale of docs/leaderboard.md's figures when the
 * environment says so. */
#ifndef LBT_ATTACK_H
#define LBT_ATTACK_H

#include <stddef.h>
#include <sys/types.h>

/* A crowd of connections to 127.0.0.1:port, spread over source addresses 127.0.0.2 ..
 * 127.0.0.(1 + n_sources). Each connection completes TLS (when cacert is given), then:
 *   - `pipeline` set (slow readers): sends that request `pipelined` times at once with a
 *     receive buffer of `rcvbuf` bytes, and never reads a byte of the answers;
 *   - else `slow` (slowloris): sends a request head one byte every `interval_s` seconds,
 *     never finishing it;
 *   - else sends nothing at all.
 * A connection the server closes is opened again, as an attacker would. */
struct lbt_crowd_opts {
    int port;
    int connections;
    int n_sources;
    const char *cacert; /* NULL: plain TCP (no TLS handshake either) */
    int slow;
    double interval_s;
    const char *pipeline; /* a whole request ("GET ... HTTP/1.1\r\n...\r\n\r\n"), or NULL */
    int pipelined;        /* times it is sent on each connection */
    int rcvbuf;           /* SO_RCVBUF of a slow reader's socket, bytes (0: the system's) */
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

/* ---- lbt_flood.c: a board of many runs, and the crowd that floods its filtered pages ---- */

/* The backends the filled board's runs use (filters of the flood's views). */
#define LBT_BOARD_BACKENDS 8
extern const char *const lbt_board_backends[LBT_BOARD_BACKENDS];

/* Uploads about n_runs finished runs (schema version 2, 250 per submission) to the service at
 * base: 4 models x 2 variants x 2 modes x 2 precisions (32 tables), LBT_BOARD_BACKENDS
 * backends, batches 1 to 256, CPU and GPU device kinds, each submission from one of the
 * n_auth tokens ("Authorization: Bearer ..." header lines) in turn, four uploads at a time.
 * `nonce` makes the documents differ from another fill's. Returns the runs stored, or -1 when
 * an upload was refused. */
long lbt_fill_board(const char *base, const char *cacert, const char *const *auth, int n_auth,
                    long n_runs, unsigned nonce);

/* Clients that each keep one connection and ask, as fast as they are answered, for rankings
 * pages no one asked for before: /?backend=B&sort=S&dir=D&offset=O, every client its own
 * sequence of views. */
struct lbt_flood_opts {
    const char *base; /* "https://127.0.0.1:PORT" */
    const char *cacert;
    int clients;
};

struct lbt_flood_stats {
    long requests;
    long pages;     /* answered 200 */
    long busy;      /* answered 503 (with Retry-After) */
    long other;     /* any other answer, or none */
    double slowest; /* seconds, over the answered ones */
};

struct lbt_flood;

/* Starts the clients (a thread each); NULL on failure. lbt_flood_stop stops and frees them. */
struct lbt_flood *lbt_flood_start(const struct lbt_flood_opts *opts);
void lbt_flood_stop(struct lbt_flood *flood, struct lbt_flood_stats *out);

/* Samples lbt_rss(pid) every 20 ms in its own thread, keeping the largest; NULL on failure.
 * lbt_memwatch_stop returns that peak (bytes) and frees the watch. */
struct lbt_memwatch;
struct lbt_memwatch *lbt_memwatch_start(pid_t pid);
long long lbt_memwatch_stop(struct lbt_memwatch *w);

#endif
