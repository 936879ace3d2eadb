/* Answers on their way out: an lb_response handed to libmicrohttpd with the headers every
 * answer carries (security headers, caching, Retry-After, ...), and a bound on the memory the
 * answers being sent hold together.
 *
 * An answer's body stays in memory until its client has taken it, and a client can take its
 * time (an answer must be taken within the request deadline, 60 s by default): 256 readers that
 * never read, each asking for a stored 4 MiB document, once held a gigabyte. So every answer
 * reserves its size in a budget of answers in flight when it is queued, and gives it back when
 * libmicrohttpd lets go of it (sent, or its connection closed). An answer larger than `small`
 * must leave `reserve` of the budget free, so that the pages and the small answers everyone
 * asks for go out whatever large ones are stuck; an answer that does not fit is replaced by a
 * short 503 with Retry-After (not counted: its size is bounded by the connections). One
 * connection holds at most one answer: libmicrohttpd reads a pipelined request only once the
 * previous answer is sent. Thread-safe. */
#ifndef LB_ANSWER_H
#define LB_ANSWER_H

#include <stddef.h>

#include <microhttpd.h>

#include "base/errmsg.h"
#include "server/lb_memory.h"
#include "service/lb_http.h"

struct lb_answers_opts {
    size_t memory;  /* bytes all answers being sent may hold together; 0: no bound */
    size_t reserve; /* what answers over `small` bytes must leave of it */
    size_t small;
    int https; /* the answers carry Strict-Transport-Security */
};

struct lb_answers;

/* A new set of answers; `trimmer` (may be NULL) hears of large answers freed. *out is owned by
 * the caller: lb_answers_free, once libmicrohttpd has let go of every answer. */
xpb_status lb_answers_new(struct lb_answers **out, const struct lb_answers_opts *opts,
                          struct lb_trimmer *trimmer, xpb_err *err);
void lb_answers_free(struct lb_answers *a);

/* Queues res on conn (from the connection's access handler), taking its body. A body that
 * failed (over the answer limit, out of memory) becomes a 500; one that does not fit in the
 * budget a 503 with Retry-After (JSON for paths under /api/, else a page). res->status is left
 * at the status sent, for the log. */
enum MHD_Result lb_answer_queue(struct lb_answers *a, struct MHD_Connection *conn, const char *path,
                                struct lb_response *res);

/* The room left now for an answer larger than `small` (0 when there is none); *bounded is 0
 * when nothing is bounded (no budget). */
size_t lb_answers_large_room(struct lb_answers *a, int *bounded);

/* Bytes the answers being sent hold now, and answers refused for want of room so far. */
size_t lb_answers_held(struct lb_answers *a);
unsigned long long lb_answers_refused(struct lb_answers *a);

#endif
