/* The connection pool (see lb_pool.h). */
#include "service/lb_pool.h"

#include <pthread.h>
#include <stdlib.h>

#include "store/lb_migrate.h"

struct lb_pool {
    pthread_mutex_t lock;
    pthread_cond_t freed;
    struct lb_db **all;
    int *busy;
    int size;
};

xpb_status lb_pool_open(struct lb_pool **out, const char *target, int size, xpb_err *err)
{
    *out = NULL;
    if (size < 1)
        size = 1;
    struct lb_pool *pool = calloc(1, sizeof *pool);
    if (!pool)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    pool->all = calloc((size_t)size, sizeof *pool->all);
    pool->busy = calloc((size_t)size, sizeof *pool->busy);
    if (!pool->all || !pool->busy) {
        free(pool->all);
        free(pool->busy);
        free(pool);
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    }
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->freed, NULL);
    pool->size = size;
    for (int i = 0; i < size; i++) {
        xpb_status st = lb_db_open(&pool->all[i], target, err);
        if (st == XPB_OK && i == 0)
            st = lb_migrate(pool->all[0], err);
        if (st != XPB_OK) {
            lb_pool_close(pool);
            return st;
        }
    }
    *out = pool;
    return XPB_OK;
}

struct lb_db *lb_pool_get(struct lb_pool *pool)
{
    pthread_mutex_lock(&pool->lock);
    for (;;) {
        for (int i = 0; i < pool->size; i++) {
            if (!pool->busy[i]) {
                pool->busy[i] = 1;
                pthread_mutex_unlock(&pool->lock);
                return pool->all[i];
            }
        }
        pthread_cond_wait(&pool->freed, &pool->lock);
    }
}

void lb_pool_put(struct lb_pool *pool, struct lb_db *db)
{
    pthread_mutex_lock(&pool->lock);
    for (int i = 0; i < pool->size; i++)
        if (pool->all[i] == db)
            pool->busy[i] = 0;
    pthread_cond_signal(&pool->freed);
    pthread_mutex_unlock(&pool->lock);
}

void lb_pool_close(struct lb_pool *pool)
{
    if (!pool)
        return;
    for (int i = 0; i < pool->size; i++)
        lb_db_close(pool->all[i]);
    pthread_mutex_destroy(&pool->lock);
    pthread_cond_destroy(&pool->freed);
    free(pool->all);
    free(pool->busy);
    free(pool);
}
