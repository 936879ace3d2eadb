/* Memory for structures that are built piece by piece and released at once: a report (every
 * table, cell, chart and string of it) or the typed view of a results document (its arrays).
 * Building code never frees piece by piece, and a failed build leaves nothing behind.
 * Allocation failure is sticky: after the first NULL the arena says so (xpb_arena_failed), and
 * the builder turns it into XPB_OUT_OF_MEMORY. */
#ifndef XPB_CORE_ARENA_H
#define XPB_CORE_ARENA_H

#include <stddef.h>

typedef struct xpb_arena_block xpb_arena_block;

typedef struct xpb_arena {
    xpb_arena_block *head; /* newest block first */
    int failed;            /* 1 after an allocation failed */
} xpb_arena;

/* Zeroed memory for `size` bytes, aligned for any type; owned by the arena (valid until
 * xpb_arena_free). NULL (and the arena marked failed) when out of memory. */
void *xpb_arena_alloc(xpb_arena *a, size_t size);

/* An arena copy of `s` (NULL gives NULL without failing); owned by the arena. */
char *xpb_arena_strdup(xpb_arena *a, const char *s);

/* An arena string formatted like printf; owned by the arena. NULL when out of memory. */
char *xpb_arena_printf(xpb_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Makes room for one more element in an arena array (*items, *n used, *cap allocated, elements
 * of elem_size bytes), doubling it by copying when full. Returns the new zeroed element
 * (owned by the arena) and increments *n; NULL when out of memory (then *n is unchanged). */
void *xpb_arena_push(xpb_arena *a, void **items, size_t *n, size_t *cap, size_t elem_size);

int xpb_arena_failed(const xpb_arena *a);

/* Releases every allocation of the arena; it can be used again afterwards. */
void xpb_arena_free(xpb_arena *a);

#endif
