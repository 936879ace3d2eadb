/* A shared byte budget (see lb_budget.h). */
#include "service/lb_budget.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

struct lb_budget {
    pthread_mutex_t lock;
    pthread_cond_t given; /* signalled when something is given back */
    size_t capacity, used;
};

struct lb_budget *lb_budget_new(size_t capacity)
{
    struct lb_budget *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    pthread_mutex_init(&b->lock, NULL);
    pthread_cond_init(&b->given, NULL);
    b->capacity = capacity;
    return b;
}

void lb_budget_free(struct lb_budget *b)
{
    if (!b)
        return;
    pthread_cond_destroy(&b->given);
    pthread_mutex_destroy(&b->lock);
    free(b);
}

/* Reserves n when they are left (the lock held): 1 when granted. */
static int grant_locked(struct lb_budget *b, size_t n)
{
    int ok = n <= b->capacity - b->used;
    if (ok)
        b->used += n;
    return ok;
}

int lb_budget_take(struct lb_budget *b, size_t n)
{
    pthread_mutex_lock(&b->lock);
    int ok = grant_locked(b, n);
    pthread_mutex_unlock(&b->lock);
    return ok;
}

int lb_budget_wait(struct lb_budget *b, size_t n, double seconds)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    long long ns = until.tv_nsec + (long long)(seconds * 1e9);
    until.tv_sec += (time_t)(ns / 1000000000LL);
    until.tv_nsec = (long)(ns % 1000000000LL);
    pthread_mutex_lock(&b->lock);
    int rc = 0;
    while (n > b->capacity - b->used && rc == 0)
        rc = pthread_cond_timedwait(&b->given, &b->lock, &until);
    int ok = grant_locked(b, n);
    pthread_mutex_unlock(&b->lock);
    return ok;
}

void lb_budget_give(struct lb_budget *b, size_t n)
{
    pthread_mutex_lock(&b->lock);
    b->used = n <= b->used ? b->used - n : 0;
    pthread_cond_broadcast(&b->given);
    pthread_mutex_unlock(&b->lock);
}

size_t lb_budget_used(struct lb_budget *b)
{
    pthread_mutex_lock(&b->lock);
    size_t used = b->used;
    pthread_mutex_unlock(&b->lock);
    return used;
}
