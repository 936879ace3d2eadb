/* Deadlines and load shedding for the server's connections: what keeps the service answering
 * when clients are slow on purpose (slowloris) or open connections and send nothing.
 *
 * Every connection is in one state, entered at a time:
 *   HEAD     waiting for a request head (a new connection, including its TLS handshake, or a
 *            kept-alive one after its last answer): the head must be complete within
 *            head_timeout of entering the state, and head and body together within
 *            request_timeout;
 *   BODY     the head arrived, the body is being received: still within request_timeout of
 *            entering HEAD (a deadline for the whole request, not one per read);
 *   BUSY     the service is working on the request: no deadline (that time is ours);
 *   SENDING  the answer is being sent: within request_timeout of entering the state.
 * A watchdog thread looks at every connection ten times a second and shuts the socket down
 * (shutdown(2); the HTTP library then closes it) when its deadline has passed.
 *
 * At most soft_limit connections are kept: when one more arrives, the oldest connection in
 * HEAD (an idle or slow client) is shed, else the oldest in BODY, else the oldest in SENDING;
 * requests being worked on are never shed. When every connection is busy, the new one is shed
 * itself. So new clients always get in ahead of connections that hold a slot doing nothing.
 *
 * Thread-safe. */
#ifndef LB_CONNTRACK_H
#define LB_CONNTRACK_H

#include "base/errmsg.h"

enum lb_conn_state { LB_CONN_HEAD, LB_CONN_BODY, LB_CONN_BUSY, LB_CONN_SENDING };

struct lb_conntrack_opts {
    unsigned soft_limit;    /* connections kept at once */
    double head_timeout;    /* seconds */
    double request_timeout; /* seconds */
};

struct lb_conntrack_stats {
    unsigned long long open;    /* connections open now */
    unsigned long long shed;    /* connections closed to make room */
    unsigned long long expired; /* connections closed at their deadline */
};

struct lb_conntrack;
struct lb_conn;

/* Starts tracking (and the watchdog thread). *out is owned by the caller: lb_conntrack_stop. */
xpb_status lb_conntrack_start(struct lb_conntrack **out, const struct lb_conntrack_opts *opts,
                              xpb_err *err);

/* Stops the watchdog and frees the tracker; every connection must have been closed. */
void lb_conntrack_stop(struct lb_conntrack *ct);

/* A new connection on socket fd, in state HEAD. Sheds one connection when over the soft limit
 * (possibly this one). The record is owned by the tracker until lb_conntrack_close; NULL when
 * out of memory (the connection is then shut down). */
struct lb_conn *lb_conntrack_open(struct lb_conntrack *ct, int fd);

/* The connection is closing: forgets it (its socket must still be open: the tracker shuts it
 * down only while it knows it). NULL is a no-op. */
void lb_conntrack_close(struct lb_conntrack *ct, struct lb_conn *c);

/* Moves a connection to `state`. BODY keeps the clock of HEAD; the others restart it. NULL is
 * a no-op. */
void lb_conntrack_enter(struct lb_conntrack *ct, struct lb_conn *c, enum lb_conn_state state);

/* Runs the deadline check once at time `now` (the watchdog does this by itself; tests call it
 * to be independent of timing). */
void lb_conntrack_sweep(struct lb_conntrack *ct, double now);

void lb_conntrack_stats(const struct lb_conntrack *ct, struct lb_conntrack_stats *out);

#endif
