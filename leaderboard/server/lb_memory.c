/* Memory given back to the system (see lb_memory.h). */
#include "server/lb_memory.h"

#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

void lb_memory_tune(void)
{
    /* setting the threshold also stops glibc from raising it by itself */
    mallopt(M_MMAP_THRESHOLD, (int)LB_MMAP_THRESHOLD);
}

struct lb_trimmer {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake; /* signalled to stop */
    int stopping;
    double period_s;
    atomic_int wanted; /* something large was freed since the last trim */
    atomic_ulong trims;
};

static void *trimmer_main(void *arg)
{
    struct lb_trimmer *t = arg;
    pthread_mutex_lock(&t->lock);
    while (!t->stopping) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        long long ns = until.tv_nsec + (long long)(t->period_s * 1e9);
        until.tv_sec += (time_t)(ns / 1000000000LL);
        until.tv_nsec = (long)(ns % 1000000000LL);
        pthread_cond_timedwait(&t->wake, &t->lock, &until);
        if (t->stopping || !atomic_exchange(&t->wanted, 0))
            continue;
        pthread_mutex_unlock(&t->lock);
        malloc_trim(0);
        atomic_fetch_add(&t->trims, 1);
        pthread_mutex_lock(&t->lock);
    }
    pthread_mutex_unlock(&t->lock);
    return NULL;
}

xpb_status lb_trimmer_start(struct lb_trimmer **out, double period_s, xpb_err *err)
{
    *out = NULL;
    struct lb_trimmer *t = calloc(1, sizeof *t);
    if (!t)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    t->period_s = period_s > 0 ? period_s : 1;
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->wake, NULL);
    if (pthread_create(&t->thread, NULL, trimmer_main, t) != 0) {
        pthread_cond_destroy(&t->wake);
        pthread_mutex_destroy(&t->lock);
        free(t);
        return xpb_err_set(err, XPB_IO_ERROR, "cannot start the memory trimmer");
    }
    *out = t;
    return XPB_OK;
}

void lb_trimmer_note(struct lb_trimmer *t, size_t bytes)
{
    if (t && bytes >= LB_MMAP_THRESHOLD)
        atomic_store(&t->wanted, 1);
}

void lb_trimmer_stop(struct lb_trimmer *t)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->lock);
    t->stopping = 1;
    pthread_cond_signal(&t->wake);
    pthread_mutex_unlock(&t->lock);
    pthread_join(t->thread, NULL);
    pthread_cond_destroy(&t->wake);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

unsigned long lb_trimmer_trims(struct lb_trimmer *t)
{
    return atomic_load(&t->trims);
}
