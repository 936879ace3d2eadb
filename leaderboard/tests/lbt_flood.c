/* A board of many runs, the crowd that floods its filtered pages, and the service's memory
 * watched from /proc (see lbt_attack.h). */
#include "lbt_attack.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "base/clock.h"
#include "lbt_support.h"

const char *const lbt_board_backends[LBT_BOARD_BACKENDS] = {
    "cpu_ref", "cpu_onednn", "cuda", "cpu_b3", "gpu_b4", "cpu_b5", "gpu_b6", "cpu_b7"};

#define RUNS_PER_SUBMISSION 250
#define FILLERS 4

static const char *const models[] = {"conv6", "resnet", "mlp", "lstm"};
static const char *const variants[] = {"cifar", "imagenet"};
static const char *const modes[] = {"train", "inference"};
static const char *const precisions[] = {"fp32", "bf16-mixed"};

struct fill {
    const char *base, *cacert;
    const char *const *auth;
    int n_auth;
    long submissions;
    unsigned nonce;
    int first; /* this filler uploads submissions first, first + FILLERS, ... */
    long stored, refused;
};

/* Submission k's document: run g = k * RUNS_PER_SUBMISSION + r spreads over every table,
 * backend and batch. New reference. */
static json_t *board_doc(long k, unsigned nonce)
{
    static _Thread_local struct lbt_run runs[RUNS_PER_SUBMISSION];
    static _Thread_local struct lbt_v2 v2[RUNS_PER_SUBMISSION];
    static _Thread_local char ids[RUNS_PER_SUBMISSION][16], devices[RUNS_PER_SUBMISSION][32];
    for (long r = 0; r < RUNS_PER_SUBMISSION; r++) {
        long g = k * RUNS_PER_SUBMISSION + r;
        const char *backend = lbt_board_backends[(g / 32) % LBT_BOARD_BACKENDS];
        int cpu = strncmp(backend, "cpu", 3) == 0;
        snprintf(ids[r], sizeof ids[r], "r%ld", r);
        snprintf(devices[r], sizeof devices[r], "%s device %ld", cpu ? "CPU" : "GPU", g % 7);
        runs[r] = (struct lbt_run){ids[r],
                                   models[g % 4],
                                   variants[(g / 4) % 2],
                                   modes[(g / 8) % 2],
                                   precisions[(g / 16) % 2],
                                   backend,
                                   devices[r],
                                   1L << ((g / 256) % 9),
                                   100.0 + (double)((g * 7919) % 100000) / 10.0,
                                   0.01,
                                   0,
                                   NULL};
        v2[r] = (struct lbt_v2){cpu ? "cpu" : "gpu", 0.02 + (double)(g % 5) / 100.0, 2};
    }
    return lbt_doc_v2("Board CPU", NULL, runs, v2, RUNS_PER_SUBMISSION,
                      nonce * 1000000u + (unsigned)k);
}

static void *fill_main(void *arg)
{
    struct fill *f = arg;
    char url[256];
    snprintf(url, sizeof url, "%s/api/v1/results", f->base);
    for (long k = f->first; k < f->submissions; k += FILLERS) {
        json_t *doc = board_doc(k, f->nonce);
        char *text = json_dumps(doc, JSON_COMPACT);
        json_decref(doc);
        const char *headers[] = {"Content-Type: application/json", f->auth[k % f->n_auth], NULL};
        struct lbt_reply r;
        int rc = text ? lbt_http(&r, "POST", url, f->cacert, headers, text, strlen(text), 0) : -1;
        if (rc == 0 && r.status == 201) {
            f->stored += RUNS_PER_SUBMISSION;
        } else {
            if (f->refused++ == 0)
                fprintf(stderr, "lbt_fill_board: upload %ld: %ld %.300s\n", k, rc ? 0 : r.status,
                        rc ? "(no answer)" : r.body);
        }
        if (rc == 0)
            lbt_reply_free(&r);
        free(text);
    }
    return NULL;
}

long lbt_fill_board(const char *base, const char *cacert, const char *const *auth, int n_auth,
                    long n_runs, unsigned nonce)
{
    struct fill fills[FILLERS];
    pthread_t threads[FILLERS];
    long submissions = (n_runs + RUNS_PER_SUBMISSION - 1) / RUNS_PER_SUBMISSION;
    int started = 0;
    for (int i = 0; i < FILLERS; i++) {
        fills[i] = (struct fill){base, cacert, auth, n_auth, submissions, nonce, i, 0, 0};
        if (pthread_create(&threads[i], NULL, fill_main, &fills[i]) != 0)
            break;
        started++;
    }
    long stored = 0, refused = started < FILLERS;
    for (int i = 0; i < started; i++) {
        pthread_join(threads[i], NULL);
        stored += fills[i].stored;
        refused += fills[i].refused;
    }
    return refused ? -1 : stored;
}

/* ---- the flood ---- */

static const char *const sorts[] = {"throughput", "step", "speedup", "energy", "batch", "date"};
#define N_SORTS 6
#define N_OFFSETS 41 /* 0, 25, ..., 1000 */
#define N_VIEWS (LBT_BOARD_BACKENDS * N_SORTS * 2 * N_OFFSETS)

struct client {
    struct lbt_flood *flood;
    int index;
    pthread_t thread;
    struct lbt_flood_stats stats;
};

struct lbt_flood {
    struct lbt_flood_opts o;
    atomic_int stop;
    int started;
    struct client *clients;
};

static size_t drop(char *ptr, size_t size, size_t nmemb, void *user)
{
    (void)ptr;
    (void)user;
    return size * nmemb;
}

/* Aborts a transfer in progress when the flood stops. */
static int on_progress(void *user, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
    (void)a;
    (void)b;
    (void)c;
    (void)d;
    return atomic_load(&((struct lbt_flood *)user)->stop);
}

/* View number v of the N_VIEWS, as a URL into out. */
static void view_url(char *out, size_t cap, const char *base, long v)
{
    long offset = (v % N_OFFSETS) * 25;
    v /= N_OFFSETS;
    const char *dir = v % 2 ? "asc" : "desc";
    v /= 2;
    const char *sort = sorts[v % N_SORTS];
    v /= N_SORTS;
    snprintf(out, cap, "%s/?backend=%s&sort=%s&dir=%s&offset=%ld", base,
             lbt_board_backends[v % LBT_BOARD_BACKENDS], sort, dir, offset);
}

static void *client_main(void *arg)
{
    struct client *cl = arg;
    struct lbt_flood *f = cl->flood;
    CURL *curl = curl_easy_init();
    if (!curl)
        return NULL;
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 60L);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, drop);
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, f);
    if (f->o.cacert)
        curl_easy_setopt(curl, CURLOPT_CAINFO, f->o.cacert);
    /* every client walks the views with its own stride from its own start: no two ask for
     * the same page for a long while, so the page cache never answers */
    long v = (long)cl->index * 977, stride = 7919;
    while (!atomic_load(&f->stop)) {
        char url[512];
        view_url(url, sizeof url, f->o.base, v);
        v = (v + stride) % N_VIEWS;
        curl_easy_setopt(curl, CURLOPT_URL, url);
        double t0 = xpb_now();
        long code = 0;
        CURLcode rc = curl_easy_perform(curl);
        if (atomic_load(&f->stop))
            break;
        double took = xpb_now() - t0;
        if (rc == CURLE_OK)
            curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
        cl->stats.requests++;
        cl->stats.pages += code == 200;
        cl->stats.busy += code == 503;
        cl->stats.other += code != 200 && code != 503;
        if (code && took > cl->stats.slowest)
            cl->stats.slowest = took;
    }
    curl_easy_cleanup(curl);
    return NULL;
}

struct lbt_flood *lbt_flood_start(const struct lbt_flood_opts *opts)
{
    struct lbt_flood *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->o = *opts;
    f->clients = calloc((size_t)opts->clients, sizeof *f->clients);
    if (!f->clients) {
        free(f);
        return NULL;
    }
    for (int i = 0; i < opts->clients; i++) {
        f->clients[i].flood = f;
        f->clients[i].index = i;
        if (pthread_create(&f->clients[i].thread, NULL, client_main, &f->clients[i]) != 0)
            break;
        f->started++;
    }
    return f;
}

void lbt_flood_stop(struct lbt_flood *f, struct lbt_flood_stats *out)
{
    memset(out, 0, sizeof *out);
    atomic_store(&f->stop, 1);
    for (int i = 0; i < f->started; i++) {
        pthread_join(f->clients[i].thread, NULL);
        const struct lbt_flood_stats *s = &f->clients[i].stats;
        out->requests += s->requests;
        out->pages += s->pages;
        out->busy += s->busy;
        out->other += s->other;
        if (s->slowest > out->slowest)
            out->slowest = s->slowest;
    }
    if (f->started < f->o.clients)
        out->other = -1; /* not every client started */
    free(f->clients);
    free(f);
}

/* ---- memory ---- */

struct lbt_memwatch {
    pid_t pid;
    pthread_t thread;
    atomic_int stop;
    long long peak;
};

static void *watch_main(void *arg)
{
    struct lbt_memwatch *w = arg;
    struct timespec step = {0, 20 * 1000 * 1000};
    while (!atomic_load(&w->stop)) {
        long long now = lbt_rss(w->pid);
        if (now > w->peak)
            w->peak = now;
        nanosleep(&step, NULL);
    }
    return NULL;
}

struct lbt_memwatch *lbt_memwatch_start(pid_t pid)
{
    struct lbt_memwatch *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->pid = pid;
    w->peak = lbt_rss(pid);
    if (pthread_create(&w->thread, NULL, watch_main, w) != 0) {
        free(w);
        return NULL;
    }
    return w;
}

long long lbt_memwatch_stop(struct lbt_memwatch *w)
{
    atomic_store(&w->stop, 1);
    pthread_join(w->thread, NULL);
    long long peak = w->peak;
    free(w);
    return peak;
}
