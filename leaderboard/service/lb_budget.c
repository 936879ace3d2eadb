/* A shared byte budget (see lb_budget.h). */
#include "service/lb_budget.h"

#include <pthread.h>
#include <stdlib.h>

struct lb_budget {
    pthread_mutex_t lock;
    size_t capacity, used;
};

struct lb_budget *lb_budget_new(size_t capacity)
{
    struct lb_budget *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    pthread_mutex_init(&b->lock, NULL);
    b->capacity = capacity;
    return b;
}

void lb_budget_free(struct lb_budget *b)
{
    if (!b)
        return;
    pthread_mutex_destroy(&b->lock);
    free(b);
}

/* Reserves n when n + keep are left: 1 when granted. */
int lb_budget_take_leaving(struct lb_budget *b, size_t n, size_t keep)
{
    pthread_mutex_lock(&b->lock);
    size_t left = b->capacity - b->used;
    int ok = n <= left && keep <= left - n;
    if (ok)
        b->used += n;
    pthread_mutex_unlock(&b->lock);
    return ok;
}

int lb_budget_take(struct lb_budget *b, size_t n)
{
    return lb_budget_take_leaving(b, n, 0);
}

void lb_budget_give(struct lb_budget *b, size_t n)
{
    pthread_mutex_lock(&b->lock);
    b->used = n <= b->used ? b->used - n : 0;
    pthread_mutex_unlock(&b->lock);
}

size_t lb_budget_used(struct lb_budget *b)
{
    pthread_mutex_lock(&b->lock);
    size_t used = b->used;
    pthread_mutex_unlock(&b->lock);
    return used;
}
