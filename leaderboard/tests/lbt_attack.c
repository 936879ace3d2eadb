/* Attack crowds and a timing client (see lbt_attack.h). */
#define _GNU_SOURCE /* POLLRDHUP */
#include "lbt_attack.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <gnutls/gnutls.h>

#include "base/clock.h"

/* What a slow connection sends: a request head whose last header line never ends. */
static const char SLOW_HEAD[] = "GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";

struct peer {
    int fd;
    gnutls_session_t tls;
    size_t sent;
};

struct lbt_crowd {
    struct lbt_crowd_opts o;
    pthread_t thread;
    atomic_int stop;
    long reopened;
    struct peer *peers;
    gnutls_certificate_credentials_t cred;
};

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

static void close_peer(struct peer *p)
{
    if (p->tls)
        gnutls_deinit(p->tls);
    if (p->fd >= 0)
        close(p->fd);
    p->tls = NULL;
    p->fd = -1;
}

/* A TCP connection from 127.0.0.(2 + index % n_sources) to the server; -1 on failure. */
static int dial(const struct lbt_crowd_opts *o, int index)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct timeval tv = {2, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (o->pipeline && o->rcvbuf > 0) /* before connect: the window offered is this small */
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &o->rcvbuf, sizeof o->rcvbuf);
    struct sockaddr_in src = {0}, dst = {0};
    src.sin_family = dst.sin_family = AF_INET;
    src.sin_addr.s_addr =
        htonl(0x7f000002u + (unsigned)(index % (o->n_sources ? o->n_sources : 1)));
    dst.sin_addr.s_addr = htonl(0x7f000001u);
    dst.sin_port = htons((uint16_t)o->port);
    if (bind(fd, (struct sockaddr *)&src, sizeof src) != 0 ||
        connect(fd, (struct sockaddr *)&dst, sizeof dst) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Sends all of n bytes; 0 when the connection failed. */
static int send_all(struct peer *p, const char *data, size_t n)
{
    while (n > 0) {
        ssize_t k =
            p->tls ? gnutls_record_send(p->tls, data, n) : send(p->fd, data, n, MSG_NOSIGNAL);
        if (k <= 0)
            return 0;
        data += k;
        n -= (size_t)k;
    }
    return 1;
}

/* A slow reader's requests, all at once; 0 on failure. */
static int send_pipeline(struct lbt_crowd *c, struct peer *p)
{
    for (int i = 0; i < c->o.pipelined; i++)
        if (!send_all(p, c->o.pipeline, strlen(c->o.pipeline)))
            return 0;
    return 1;
}

/* A TLS session on p's socket (none without a CA); 0 when the handshake succeeded. */
static int handshake(struct lbt_crowd *c, struct peer *p)
{
    if (!c->o.cacert)
        return 0;
    if (gnutls_init(&p->tls, GNUTLS_CLIENT) < 0) {
        p->tls = NULL;
        close_peer(p);
        return -1;
    }
    gnutls_set_default_priority(p->tls);
    gnutls_credentials_set(p->tls, GNUTLS_CRD_CERTIFICATE, c->cred);
    gnutls_transport_set_int(p->tls, p->fd);
    gnutls_handshake_set_timeout(p->tls, 3000);
    int rc;
    do
        rc = gnutls_handshake(p->tls);
    while (rc < 0 && !gnutls_error_is_fatal(rc) && !atomic_load(&c->stop));
    if (rc < 0) {
        close_peer(p);
        return -1;
    }
    return 0;
}

static int open_peer(struct lbt_crowd *c, struct peer *p, int index)
{
    p->fd = dial(&c->o, index);
    p->tls = NULL;
    p->sent = 0;
    if (p->fd < 0 || handshake(c, p) != 0)
        return -1;
    if (c->o.pipeline && !send_pipeline(c, p)) {
        close_peer(p);
        return -1;
    }
    return 0;
}

/* Sends the next byte of the never-ending head; 0 when the server closed the connection. */
static int send_byte(struct peer *p)
{
    char b = p->sent < sizeof SLOW_HEAD - 1 ? SLOW_HEAD[p->sent] : 'a';
    ssize_t n = p->tls ? gnutls_record_send(p->tls, &b, 1)
                       : send(p->fd, &b, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n != 1)
        return 0;
    p->sent++;
    return 1;
}

/* 1 while an idle connection is still open. */
static int still_open(struct peer *p)
{
    char b;
    ssize_t n = recv(p->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    return n < 0; /* nothing to read (EAGAIN): open; 0 or data: the server is done with it */
}

/* 1 while the server has not closed a slow reader's connection (whatever it sent, unread). */
static int not_hung_up(struct peer *p)
{
    struct pollfd pfd = {p->fd, POLLRDHUP, 0};
    return poll(&pfd, 1, 0) == 0 || !(pfd.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/* One look at a connection: 1 while it stays open (a slow one sends its next byte). */
static int keep(const struct lbt_crowd *c, struct peer *p)
{
    if (p->fd < 0)
        return 0;
    if (c->o.pipeline)
        return not_hung_up(p);
    return c->o.slow ? send_byte(p) : still_open(p);
}

static void *crowd_main(void *arg)
{
    struct lbt_crowd *c = arg;
    for (int i = 0; i < c->o.connections && !atomic_load(&c->stop); i++)
        open_peer(c, &c->peers[i], i);
    while (!atomic_load(&c->stop)) {
        for (int i = 0; i < c->o.connections && !atomic_load(&c->stop); i++) {
            struct peer *p = &c->peers[i];
            if (!keep(c, p)) {
                close_peer(p);
                if (open_peer(c, p, i) == 0)
                    c->reopened++;
            }
        }
        double waited = 0, step = 0.05;
        double interval = c->o.slow && !c->o.pipeline ? c->o.interval_s : 0.2;
        for (; waited < interval && !atomic_load(&c->stop); waited += step)
            sleep_s(step);
    }
    for (int i = 0; i < c->o.connections; i++)
        close_peer(&c->peers[i]);
    return NULL;
}

struct lbt_crowd *lbt_crowd_start(const struct lbt_crowd_opts *opts)
{
    struct lbt_crowd *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->o = *opts;
    c->peers = calloc((size_t)opts->connections, sizeof *c->peers);
    if (!c->peers || gnutls_certificate_allocate_credentials(&c->cred) < 0)
        goto fail_crowd;
    for (int i = 0; i < opts->connections; i++)
        c->peers[i].fd = -1;
    if (pthread_create(&c->thread, NULL, crowd_main, c) != 0) {
        gnutls_certificate_free_credentials(c->cred);
        goto fail_crowd;
    }
    return c;

fail_crowd:
    free(c->peers);
    free(c);
    return NULL;
}

void lbt_crowd_stop(struct lbt_crowd *c, long *reopened_out)
{
    if (!c)
        return;
    atomic_store(&c->stop, 1);
    pthread_join(c->thread, NULL);
    if (reopened_out)
        *reopened_out = c->reopened;
    gnutls_certificate_free_credentials(c->cred);
    free(c->peers);
    free(c);
}

struct lbt_prober {
    char url[512], cacert[512];
    double pause_s;
    pthread_t thread;
    atomic_int stop;
    struct lbt_probe_stats stats;
};

static size_t discard(char *ptr, size_t size, size_t nmemb, void *user)
{
    (void)ptr;
    (void)user;
    return size * nmemb;
}

/* One request on a new connection: its latency in seconds, or -1 without a 200 answer. */
static double probe_once(const struct lbt_prober *p)
{
    CURL *curl = curl_easy_init();
    if (!curl)
        return -1;
    curl_easy_setopt(curl, CURLOPT_URL, p->url);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 5L);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, discard);
    if (p->cacert[0])
        curl_easy_setopt(curl, CURLOPT_CAINFO, p->cacert);
    double t0 = xpb_now();
    long code = 0;
    CURLcode rc = curl_easy_perform(curl);
    double took = xpb_now() - t0;
    if (rc == CURLE_OK)
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(curl);
    return code == 200 ? took : -1;
}

static void *prober_main(void *arg)
{
    struct lbt_prober *p = arg;
    while (!atomic_load(&p->stop)) {
        double took = probe_once(p);
        p->stats.requests++;
        if (took < 0) {
            p->stats.failures++;
        } else {
            if (took > p->stats.max_latency)
                p->stats.max_latency = took;
            p->stats.slow += took >= 1.0;
        }
        sleep_s(p->pause_s);
    }
    return NULL;
}

struct lbt_prober *lbt_prober_start(const char *url, const char *cacert, double pause_s)
{
    struct lbt_prober *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    snprintf(p->url, sizeof p->url, "%s", url);
    snprintf(p->cacert, sizeof p->cacert, "%s", cacert ? cacert : "");
    p->pause_s = pause_s;
    if (pthread_create(&p->thread, NULL, prober_main, p) != 0) {
        free(p);
        return NULL;
    }
    return p;
}

void lbt_prober_stop(struct lbt_prober *p, struct lbt_probe_stats *out)
{
    atomic_store(&p->stop, 1);
    pthread_join(p->thread, NULL);
    *out = p->stats;
    free(p);
}
