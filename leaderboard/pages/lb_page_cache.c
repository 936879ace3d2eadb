/* The rankings page cache (see lb_page_cache.h). */
#include "pages/lb_page_cache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 64

struct entry {
    char *key;
    char *body;
    size_t len;
    int status;
    const char *content_type; /* static */
    unsigned long generation;
    double stored;
};

struct lb_page_cache {
    pthread_mutex_t lock;
    size_t max_bytes, bytes;
    double ttl;
    struct entry slots[SLOTS];
};

struct lb_page_cache *lb_page_cache_new(size_t max_bytes, double ttl)
{
    struct lb_page_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    pthread_mutex_init(&c->lock, NULL);
    c->max_bytes = max_bytes;
    c->ttl = ttl;
    return c;
}

static void drop(struct lb_page_cache *c, struct entry *e)
{
    c->bytes -= e->len;
    free(e->key);
    free(e->body);
    memset(e, 0, sizeof *e);
}

void lb_page_cache_free(struct lb_page_cache *c)
{
    if (!c)
        return;
    for (int i = 0; i < SLOTS; i++)
        if (c->slots[i].key)
            drop(c, &c->slots[i]);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

int lb_page_cache_get(struct lb_page_cache *c, const char *key, unsigned long generation,
                      double now, struct lb_response *res)
{
    if (!c)
        return 0;
    int hit = 0;
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < SLOTS && !hit; i++) {
        struct entry *e = &c->slots[i];
        if (!e->key || strcmp(e->key, key) != 0)
            continue;
        if (e->generation != generation || now - e->stored > c->ttl) {
            drop(c, e);
            break;
        }
        xpb_text_add(&res->body, e->body, e->len);
        res->status = e->status;
        res->content_type = e->content_type;
        hit = !res->body.failed;
    }
    pthread_mutex_unlock(&c->lock);
    return hit;
}

/* A slot for a new entry of `len` bytes: a free one, else the oldest, dropping the oldest
 * entries until the bytes fit. */
static struct entry *make_room(struct lb_page_cache *c, size_t len)
{
    struct entry *free_slot = NULL;
    for (;;) {
        struct entry *oldest = NULL;
        for (int i = 0; i < SLOTS; i++) {
            struct entry *e = &c->slots[i];
            if (!e->key)
                free_slot = free_slot ? free_slot : e;
            else if (!oldest || e->stored < oldest->stored)
                oldest = e;
        }
        if (free_slot && c->bytes + len <= c->max_bytes)
            return free_slot;
        if (!oldest)
            return NULL;
        drop(c, oldest);
        free_slot = NULL;
    }
}

void lb_page_cache_put(struct lb_page_cache *c, const char *key, unsigned long generation,
                       double now, const struct lb_response *res)
{
    if (!c || res->body.failed || !res->body.data || res->body.len > c->max_bytes / 8)
        return;
    char *k = strdup(key), *body = malloc(res->body.len);
    if (!k || !body) {
        free(k);
        free(body);
        return;
    }
    memcpy(body, res->body.data, res->body.len);
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < SLOTS; i++) /* a newer render of the same page replaces the old */
        if (c->slots[i].key && !strcmp(c->slots[i].key, key))
            drop(c, &c->slots[i]);
    struct entry *e = make_room(c, res->body.len);
    if (e) {
        *e =
            (struct entry){k, body, res->body.len, res->status, res->content_type, generation, now};
        c->bytes += res->body.len;
        k = body = NULL;
    }
    pthread_mutex_unlock(&c->lock);
    free(k);
    free(body);
}
