/* The service's memory given back to the system. glibc's malloc keeps what is freed for later:
 * after a crowd of large answers or uploads a service once stayed at 320-470 MiB with nothing
 * to do. Two remedies:
 *   - lb_memory_tune: blocks of 256 KiB and more are mapped on their own (the threshold fixed,
 *     where glibc would raise it up to 32 MiB after such a block is freed), so that freeing an
 *     answer or a document unmaps it at once;
 *   - a trimmer thread that, about once a second after something large was freed
 *     (lb_trimmer_note), hands back the free pages of every malloc arena (malloc_trim), such
 *     as what a parsed document's many small values left behind. */
#ifndef LB_MEMORY_H
#define LB_MEMORY_H

#include <stddef.h>

#include "base/errmsg.h"

/* Blocks of at least this many bytes are mapped on their own by lb_memory_tune. */
#define LB_MMAP_THRESHOLD (256u << 10)

/* Sets malloc's mapping threshold (LB_MMAP_THRESHOLD); for the whole process, before its
 * threads start (the `serve` command calls it). */
void lb_memory_tune(void);

struct lb_trimmer;

/* Starts the trimmer thread, which looks every `period_s` seconds. *out is owned by the
 * caller: lb_trimmer_stop. */
xpb_status lb_trimmer_start(struct lb_trimmer **out, double period_s, xpb_err *err);

/* `bytes` were just freed: when they are LB_MMAP_THRESHOLD or more, the next look trims. NULL
 * is a no-op. Thread-safe, never waits. */
void lb_trimmer_note(struct lb_trimmer *t, size_t bytes);

/* Stops the thread and frees the trimmer. NULL is a no-op. */
void lb_trimmer_stop(struct lb_trimmer *t);

/* Times the trimmer trimmed since its start. */
unsigned long lb_trimmer_trims(struct lb_trimmer *t);

#endif
