/* Connection deadlines and load shedding (see lb_conntrack.h). */
#include "server/lb_conntrack.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "base/clock.h"

#define SWEEP_INTERVAL_NS 100000000L /* 0.1 s */

struct lb_conn {
    int fd;
    enum lb_conn_state state;
    double since;  /* when the state's clock started */
    double opened; /* when the connection came: the age that decides who is shed first */
    int cut;       /* shut down already */
    struct lb_conn *prev, *next;
};

struct lb_conntrack {
    struct lb_conntrack_opts opts;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t watchdog;
    int stopping;
    struct lb_conn *head; /* every open connection, newest first */
    struct lb_conntrack_stats stats;
};

/* Shuts a connection's socket down once (under the lock: the library closes the descriptor
 * only after lb_conntrack_close, so fd is still this connection's). */
static void cut(struct lb_conn *c)
{
    if (!c->cut) {
        shutdown(c->fd, SHUT_RDWR);
        c->cut = 1;
    }
}

static double deadline(const struct lb_conntrack *ct, const struct lb_conn *c)
{
    switch (c->state) {
    case LB_CONN_HEAD:
        return c->since + (ct->opts.head_timeout < ct->opts.request_timeout
                               ? ct->opts.head_timeout
                               : ct->opts.request_timeout);
    case LB_CONN_BODY:
    case LB_CONN_SENDING:
        return c->since + ct->opts.request_timeout;
    default:
        return -1; /* BUSY: none */
    }
}

void lb_conntrack_sweep(struct lb_conntrack *ct, double now)
{
    pthread_mutex_lock(&ct->lock);
    for (struct lb_conn *c = ct->head; c; c = c->next) {
        double d = deadline(ct, c);
        if (!c->cut && d >= 0 && now > d) {
            cut(c);
            ct->stats.expired++;
        }
    }
    pthread_mutex_unlock(&ct->lock);
}

static void *watchdog_main(void *arg)
{
    struct lb_conntrack *ct = arg;
    pthread_mutex_lock(&ct->lock);
    while (!ct->stopping) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += SWEEP_INTERVAL_NS;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&ct->wake, &ct->lock, &until);
        if (ct->stopping)
            break;
        pthread_mutex_unlock(&ct->lock);
        lb_conntrack_sweep(ct, xpb_now());
        pthread_mutex_lock(&ct->lock);
    }
    pthread_mutex_unlock(&ct->lock);
    return NULL;
}

xpb_status lb_conntrack_start(struct lb_conntrack **out, const struct lb_conntrack_opts *opts,
                              xpb_err *err)
{
    *out = NULL;
    struct lb_conntrack *ct = calloc(1, sizeof *ct);
    if (!ct)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    ct->opts = *opts;
    pthread_mutex_init(&ct->lock, NULL);
    pthread_cond_init(&ct->wake, NULL);
    int rc = pthread_create(&ct->watchdog, NULL, watchdog_main, ct);
    if (rc != 0) {
        pthread_cond_destroy(&ct->wake);
        pthread_mutex_destroy(&ct->lock);
        free(ct);
        return xpb_err_set(err, XPB_INTERNAL, "cannot start the connection watchdog: %s",
                           strerror(rc));
    }
    *out = ct;
    return XPB_OK;
}

void lb_conntrack_stop(struct lb_conntrack *ct)
{
    if (!ct)
        return;
    pthread_mutex_lock(&ct->lock);
    ct->stopping = 1;
    pthread_cond_signal(&ct->wake);
    pthread_mutex_unlock(&ct->lock);
    pthread_join(ct->watchdog, NULL);
    while (ct->head) { /* none should be left; do not leak if some are */
        struct lb_conn *c = ct->head;
        ct->head = c->next;
        free(c);
    }
    pthread_cond_destroy(&ct->wake);
    pthread_mutex_destroy(&ct->lock);
    free(ct);
}

/* The connection to shed for a newcomer: the oldest in HEAD, else in BODY, else in SENDING
 * (never BUSY, never one already cut); NULL when there is none. */
static struct lb_conn *victim(struct lb_conntrack *ct, const struct lb_conn *newcomer)
{
    static const enum lb_conn_state order[] = {LB_CONN_HEAD, LB_CONN_BODY, LB_CONN_SENDING};
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
        struct lb_conn *oldest = NULL;
        for (struct lb_conn *c = ct->head; c; c = c->next)
            if (c != newcomer && !c->cut && c->state == order[k] &&
                (!oldest || c->opened <= oldest->opened))
                oldest = c;
        if (oldest)
            return oldest;
    }
    return NULL;
}

struct lb_conn *lb_conntrack_open(struct lb_conntrack *ct, int fd)
{
    struct lb_conn *c = calloc(1, sizeof *c);
    if (!c) {
        shutdown(fd, SHUT_RDWR);
        return NULL;
    }
    c->fd = fd;
    c->state = LB_CONN_HEAD;
    c->since = c->opened = xpb_now();
    pthread_mutex_lock(&ct->lock);
    c->next = ct->head;
    if (ct->head)
        ct->head->prev = c;
    ct->head = c;
    ct->stats.open++;
    unsigned long long live = 0;
    for (struct lb_conn *k = ct->head; k; k = k->next)
        live += !k->cut;
    if (live > ct->opts.soft_limit) {
        struct lb_conn *v = victim(ct, c);
        cut(v ? v : c);
        ct->stats.shed++;
    }
    pthread_mutex_unlock(&ct->lock);
    return c;
}

void lb_conntrack_close(struct lb_conntrack *ct, struct lb_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&ct->lock);
    if (c->prev)
        c->prev->next = c->next;
    else
        ct->head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    ct->stats.open--;
    pthread_mutex_unlock(&ct->lock);
    free(c);
}

void lb_conntrack_enter(struct lb_conntrack *ct, struct lb_conn *c, enum lb_conn_state state)
{
    if (!c)
        return;
    pthread_mutex_lock(&ct->lock);
    if (state != LB_CONN_BODY)
        c->since = xpb_now();
    c->state = state;
    pthread_mutex_unlock(&ct->lock);
}

void lb_conntrack_stats(const struct lb_conntrack *ct, struct lb_conntrack_stats *out)
{
    pthread_mutex_lock((pthread_mutex_t *)&ct->lock);
    *out = ct->stats;
    pthread_mutex_unlock((pthread_mutex_t *)&ct->lock);
}
