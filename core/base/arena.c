/* An arena (see arena.h): a chain of blocks, each at least 64 KiB, bumped. */
#include "base/arena.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK_MIN (64u * 1024u)
#define ALIGN 16u

struct xpb_arena_block {
    xpb_arena_block *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

void *xpb_arena_alloc(xpb_arena *a, size_t size)
{
    size = (size + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    if (size == 0)
        size = ALIGN;
    xpb_arena_block *b = a->head;
    if (!b || b->cap - b->used < size) {
        size_t cap = size > BLOCK_MIN ? size : BLOCK_MIN;
        if (cap > SIZE_MAX - sizeof *b || !(b = malloc(sizeof *b + cap))) {
            a->failed = 1;
            return NULL;
        }
        b->used = 0;
        b->cap = cap;
        b->next = a->head;
        a->head = b;
    }
    void *p = b->data + b->used;
    b->used += size;
    memset(p, 0, size);
    return p;
}

char *xpb_arena_strdup(xpb_arena *a, const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *c = xpb_arena_alloc(a, n);
    if (c)
        memcpy(c, s, n);
    return c;
}

char *xpb_arena_printf(xpb_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        a->failed = 1;
        return NULL;
    }
    char *s = xpb_arena_alloc(a, (size_t)n + 1);
    if (!s)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

void *xpb_arena_push(xpb_arena *a, void **items, size_t *n, size_t *cap, size_t elem_size)
{
    if (*n == *cap) {
        size_t grown = *cap ? *cap * 2 : 8;
        if (grown > SIZE_MAX / elem_size) {
            a->failed = 1;
            return NULL;
        }
        void *bigger = xpb_arena_alloc(a, grown * elem_size);
        if (!bigger)
            return NULL;
        if (*n)
            memcpy(bigger, *items, *n * elem_size);
        *items = bigger;
        *cap = grown;
    }
    unsigned char *e = (unsigned char *)*items + *n * elem_size;
    memset(e, 0, elem_size);
    (*n)++;
    return e;
}

int xpb_arena_failed(const xpb_arena *a)
{
    return a->failed;
}

void xpb_arena_free(xpb_arena *a)
{
    while (a->head) {
        xpb_arena_block *next = a->head->next;
        free(a->head);
        a->head = next;
    }
    a->failed = 0;
}
