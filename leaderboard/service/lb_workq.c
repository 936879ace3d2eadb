/* Work off the connection threads (see lb_workq.h). */
#include "service/lb_workq.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/clock.h"

struct job {
    void (*fn)(void *arg, int cancelled);
    void *arg;
    double queued; /* xpb_now() when queued */
};

struct lb_workq {
    pthread_mutex_t lock;
    pthread_cond_t queued; /* a job was queued, or the queue stops */
    struct job *ring;      /* `waiting` slots */
    unsigned cap, head, count;
    int stopping;
    int nice;
    double max_wait_s; /* 0: none */
    unsigned n_threads;
    pthread_t *threads;
    unsigned long long refused;
};

/* Takes the next job (the lock held): 0 when the queue stops. */
static int next_job(struct lb_workq *q, struct job *out)
{
    while (q->count == 0 && !q->stopping)
        pthread_cond_wait(&q->queued, &q->lock);
    if (q->count == 0)
        return 0;
    *out = q->ring[q->head];
    q->head = (q->head + 1) % q->cap;
    q->count--;
    return 1;
}

static void *worker_main(void *arg)
{
    struct lb_workq *q = arg;
    if (q->nice > 0) /* this thread only (Linux threads have their own nice value) */
        setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), q->nice);
    pthread_mutex_lock(&q->lock);
    struct job job;
    while (next_job(q, &job)) {
        int late = q->max_wait_s > 0 && xpb_now() - job.queued > q->max_wait_s;
        q->refused += late;
        pthread_mutex_unlock(&q->lock);
        job.fn(job.arg, late);
        pthread_mutex_lock(&q->lock);
    }
    pthread_mutex_unlock(&q->lock);
    return NULL;
}

xpb_status lb_workq_start(struct lb_workq **out, unsigned workers, unsigned waiting, int nice,
                          double max_wait_s, xpb_err *err)
{
    *out = NULL;
    struct lb_workq *q = calloc(1, sizeof *q);
    if (!q)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    unsigned want = workers ? workers : 1;
    q->cap = waiting ? waiting : 1;
    q->nice = nice;
    q->max_wait_s = max_wait_s;
    q->ring = calloc(q->cap, sizeof *q->ring);
    q->threads = calloc(want, sizeof *q->threads);
    if (!q->ring || !q->threads)
        goto fail_alloc;
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->queued, NULL);
    for (q->n_threads = 0; q->n_threads < want; q->n_threads++)
        if (pthread_create(&q->threads[q->n_threads], NULL, worker_main, q) != 0)
            goto fail_threads;
    *out = q;
    return XPB_OK;

fail_threads:
    lb_workq_stop(q); /* joins those started */
    lb_workq_free(q);
    return xpb_err_set(err, XPB_IO_ERROR, "cannot start the render threads");
fail_alloc:
    free(q->threads);
    free(q->ring);
    free(q);
    return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
}

int lb_workq_submit(struct lb_workq *q, void (*fn)(void *arg, int cancelled), void *arg)
{
    pthread_mutex_lock(&q->lock);
    int ok = !q->stopping && q->count < q->cap;
    if (ok) {
        q->ring[(q->head + q->count) % q->cap] = (struct job){fn, arg, xpb_now()};
        q->count++;
        pthread_cond_signal(&q->queued);
    } else {
        q->refused++;
    }
    pthread_mutex_unlock(&q->lock);
    return ok;
}

void lb_workq_stop(struct lb_workq *q)
{
    pthread_mutex_lock(&q->lock);
    q->stopping = 1;
    struct job job;
    while (q->count > 0) { /* the waiting jobs are called off, outside the lock */
        job = q->ring[q->head];
        q->head = (q->head + 1) % q->cap;
        q->count--;
        pthread_mutex_unlock(&q->lock);
        job.fn(job.arg, 1);
        pthread_mutex_lock(&q->lock);
    }
    pthread_cond_broadcast(&q->queued);
    pthread_mutex_unlock(&q->lock);
    for (unsigned i = 0; i < q->n_threads; i++)
        pthread_join(q->threads[i], NULL);
    q->n_threads = 0;
}

void lb_workq_free(struct lb_workq *q)
{
    if (!q)
        return;
    pthread_cond_destroy(&q->queued);
    pthread_mutex_destroy(&q->lock);
    free(q->threads);
    free(q->ring);
    free(q);
}

unsigned long long lb_workq_refused(struct lb_workq *q)
{
    pthread_mutex_lock(&q->lock);
    unsigned long long n = q->refused;
    pthread_mutex_unlock(&q->lock);
    return n;
}
