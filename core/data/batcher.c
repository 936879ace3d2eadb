/* The input pipeline (see batcher.h): one assembling thread and two buffers. Slot k % 2 holds
 * batch k. The caller takes batch k once it is ready; the thread may then fill batch k + 1 into
 * the other slot, which the caller gave back when it took batch k (the backend was done with it:
 * the step that read it ended before the caller asked for the next batch). */
#include "data/batcher.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "data/epoch.h"

typedef struct slot {
    float *images;
    int32_t *labels;
    uint32_t count;
    uint32_t batch_index; /* which batch of the pass it holds */
    int ready;
} slot;

struct xpb_batcher {
    const xpb_dataset *ds;
    uint32_t batch, ranks, rank;
    uint64_t seed;
    size_t sample_floats;
    uint32_t *order; /* the training permutation of the current epoch */
    slot slots[2];
    /* the pass: guarded by mu */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int test;           /* 0: training epoch, 1: test pass */
    uint32_t n_batches; /* of the pass */
    uint32_t next_fill; /* the batch the thread assembles next */
    uint32_t next_take; /* the batch the caller takes next */
    uint32_t pass;      /* bumped by every new pass, so a stale fill is dropped */
    int stop;
    int busy; /* the thread is assembling (reading `order`) outside the lock */
    pthread_t thread;
    double waited;
};

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Assembles batch k of the pass into s (no lock held: the slot is the thread's). */
static void assemble(xpb_batcher *b, slot *s, int test, const uint32_t *order, uint32_t k)
{
    xpb_split split = test ? XPB_SPLIT_TEST : XPB_SPLIT_TRAIN;
    uint32_t n = b->ds->count[split];
    s->count = 0;
    for (uint32_t i = 0; i < b->batch; i++) {
        uint32_t sample;
        if (test) {
            uint64_t g = (uint64_t)k * b->batch + i;
            sample = g < n ? (uint32_t)g : 0; /* padding of the partial last batch */
            s->count += g < n;
        } else {
            sample = xpb_epoch_sample(order, k, b->batch, b->ranks, b->rank, i);
            s->count++;
        }
        xpb_dataset_image(b->ds, split, sample, s->images + (size_t)i * b->sample_floats);
        s->labels[i] = xpb_dataset_label(b->ds, split, sample);
    }
    s->batch_index = k;
}

static void *worker(void *arg)
{
    xpb_batcher *b = arg;
    pthread_mutex_lock(&b->mu);
    for (;;) {
        /* a batch to fill whose slot the caller gave back */
        while (!b->stop && !(b->next_fill < b->n_batches && b->next_fill <= b->next_take + 1 &&
                             !b->slots[b->next_fill % 2].ready))
            pthread_cond_wait(&b->cv, &b->mu);
        if (b->stop)
            break;
        uint32_t k = b->next_fill, pass = b->pass;
        int test = b->test;
        slot *s = &b->slots[k % 2];
        b->busy = 1;
        pthread_mutex_unlock(&b->mu);
        assemble(b, s, test, b->order, k);
        pthread_mutex_lock(&b->mu);
        b->busy = 0;
        pthread_cond_broadcast(&b->cv);
        if (pass == b->pass) {
            s->ready = 1;
            b->next_fill = k + 1;
            pthread_cond_broadcast(&b->cv);
        }
    }
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

xpb_status xpb_batcher_new(xpb_batcher **out, const xpb_dataset *ds, uint32_t batch, uint32_t ranks,
                           uint32_t rank, uint64_t seed, xpb_err *err)
{
    *out = NULL;
    if (batch == 0 || ranks == 0 || rank >= ranks)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "input pipeline: batch %u, rank %u of %u",
                           batch, rank, ranks);
    xpb_batcher *b = calloc(1, sizeof *b);
    if (!b)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "input pipeline: out of memory");
    b->ds = ds;
    b->batch = batch;
    b->ranks = ranks;
    b->rank = rank;
    b->seed = seed;
    b->sample_floats = (size_t)ds->channels * ds->height * ds->width;
    b->order = malloc((size_t)(ds->count[XPB_SPLIT_TRAIN] ? ds->count[XPB_SPLIT_TRAIN] : 1) *
                      sizeof *b->order);
    for (int k = 0; k < 2; k++) {
        b->slots[k].images = malloc((size_t)batch * b->sample_floats * sizeof(float));
        b->slots[k].labels = malloc((size_t)batch * sizeof(int32_t));
    }
    if (!b->order || !b->slots[0].images || !b->slots[1].images || !b->slots[0].labels ||
        !b->slots[1].labels)
        goto free_buffers;
    pthread_mutex_init(&b->mu, NULL);
    pthread_cond_init(&b->cv, NULL);
    if (pthread_create(&b->thread, NULL, worker, b) != 0) {
        pthread_cond_destroy(&b->cv);
        pthread_mutex_destroy(&b->mu);
        goto free_buffers;
    }
    *out = b;
    return XPB_OK;
free_buffers:
    for (int k = 0; k < 2; k++) {
        free(b->slots[k].images);
        free(b->slots[k].labels);
    }
    free(b->order);
    free(b);
    return xpb_err_set(err, XPB_OUT_OF_MEMORY, "input pipeline: out of memory");
}

/* Starts a pass of n batches (the caller holds no batch of the previous one any more). */
static void begin_pass(xpb_batcher *b, int test, uint32_t n)
{
    pthread_mutex_lock(&b->mu);
    while (b->busy) /* a batch of the old pass may still be assembled into a slot */
        pthread_cond_wait(&b->cv, &b->mu);
    b->test = test;
    b->n_batches = n;
    b->next_fill = b->next_take = 0;
    b->pass++;
    b->slots[0].ready = b->slots[1].ready = 0;
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

uint32_t xpb_batcher_train_epoch(xpb_batcher *b, uint32_t epoch)
{
    uint32_t n = b->ds->count[XPB_SPLIT_TRAIN];
    /* the thread must not read the order while it changes: end the old pass and wait until
     * the thread is idle */
    pthread_mutex_lock(&b->mu);
    b->n_batches = 0;
    b->pass++;
    while (b->busy)
        pthread_cond_wait(&b->cv, &b->mu);
    xpb_epoch_order(b->order, n, b->seed, epoch);
    pthread_mutex_unlock(&b->mu);
    uint32_t batches = xpb_epoch_batches(n, b->batch, b->ranks);
    begin_pass(b, 0, batches);
    return batches;
}

uint32_t xpb_batcher_test_pass(xpb_batcher *b)
{
    uint32_t n = b->ds->count[XPB_SPLIT_TEST];
    uint32_t batches = (n + b->batch - 1) / b->batch;
    begin_pass(b, 1, batches);
    return batches;
}

xpb_status xpb_batcher_next(xpb_batch *out, xpb_batcher *b)
{
    double t0 = seconds();
    pthread_mutex_lock(&b->mu);
    uint32_t k = b->next_take;
    if (k >= b->n_batches) {
        pthread_mutex_unlock(&b->mu);
        return XPB_NOT_FOUND;
    }
    /* give back the slot of batch k - 1 (k + 1 goes there) */
    if (k > 0)
        b->slots[(k - 1) % 2].ready = 0;
    b->next_take = k + 1;
    pthread_cond_broadcast(&b->cv);
    slot *s = &b->slots[k % 2];
    while (!(s->ready && s->batch_index == k))
        pthread_cond_wait(&b->cv, &b->mu);
    double waited = seconds() - t0;
    b->waited += waited;
    pthread_mutex_unlock(&b->mu);
    out->images = s->images;
    out->labels = s->labels;
    out->count = s->count;
    out->waited = waited;
    return XPB_OK;
}

double xpb_batcher_waited(const xpb_batcher *b)
{
    return b->waited;
}

void xpb_batcher_free(xpb_batcher *b)
{
    if (!b)
        return;
    pthread_mutex_lock(&b->mu);
    b->stop = 1;
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
    pthread_join(b->thread, NULL);
    pthread_cond_destroy(&b->cv);
    pthread_mutex_destroy(&b->mu);
    for (int k = 0; k < 2; k++) {
        free(b->slots[k].images);
        free(b->slots[k].labels);
    }
    free(b->order);
    free(b);
}
