/* The process-wide tuning cache (tune_cache.h): a list guarded by a mutex. Entries live until
 * the process ends (the plugin is never unmapped: -z nodelete), which is what "once per shape
 * per process" means; they are a few hundred bytes each. */
#include "plan/tune_cache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
    struct entry *next;
    int kind, device;
    size_t key_size, value_size;
    unsigned char *key, *value; /* point into the same allocation, after the entry */
} entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry *head;
static size_t count;

static entry *lookup(int kind, int device, const void *key, size_t key_size)
{
    for (entry *e = head; e; e = e->next)
        if (e->kind == kind && e->device == device && e->key_size == key_size &&
            memcmp(e->key, key, key_size) == 0)
            return e;
    return NULL;
}

int cux_tune_find(int kind, int device, const void *key, size_t key_size, void *value,
                  size_t value_size)
{
    int found = 0;
    pthread_mutex_lock(&lock);
    entry *e = lookup(kind, device, key, key_size);
    if (e && e->value_size == value_size) {
        memcpy(value, e->value, value_size);
        found = 1;
    }
    pthread_mutex_unlock(&lock);
    return found;
}

int cux_tune_add(int kind, int device, const void *key, size_t key_size, const void *value,
                 size_t value_size)
{
    entry *e = malloc(sizeof *e + key_size + value_size);
    if (!e)
        return -1;
    e->kind = kind;
    e->device = device;
    e->key_size = key_size;
    e->value_size = value_size;
    e->key = (unsigned char *)(e + 1);
    e->value = e->key + key_size;
    memcpy(e->key, key, key_size);
    memcpy(e->value, value, value_size);
    pthread_mutex_lock(&lock);
    entry *old = lookup(kind, device, key, key_size);
    if (old && old->value_size == value_size) {
        memcpy(old->value, value, value_size);
        pthread_mutex_unlock(&lock);
        free(e);
        return 0;
    }
    e->next = head;
    head = e;
    count++;
    pthread_mutex_unlock(&lock);
    return 0;
}

size_t cux_tune_count(void)
{
    pthread_mutex_lock(&lock);
    size_t n = count;
    pthread_mutex_unlock(&lock);
    return n;
}
