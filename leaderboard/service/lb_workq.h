/* Work run off the server's connection threads: a fixed set of threads and a bounded queue.
 * A connection thread of the HTTP library serves every connection it holds, so a request that
 * takes long there (a rankings page filtered by backend reads runs) stalls them all; the server
 * hands such work to this queue instead and answers the client when it is done. At most
 * `workers` jobs run at once and at most `waiting` more wait: beyond that a job is refused at
 * once, and the caller answers "busy" (nothing ever waits for room on a connection thread); a
 * job that waited longer than `max_wait_s` is called off rather than run late.
 * The workers run at a lower priority (nice), so that the connection threads come first when
 * the processors are busy. Thread-safe. */
#ifndef LB_WORKQ_H
#define LB_WORKQ_H

#include "base/errmsg.h"

struct lb_workq;

/* Starts `workers` threads (at least 1) with room for `waiting` queued jobs, each thread
 * niced by `nice` (0: as the caller; a failure to lower the priority is ignored); a job that
 * waited more than max_wait_s seconds for a thread is called off (fn(arg, 1)) when its turn
 * comes (0: none is). *out is owned by the caller: lb_workq_stop, then lb_workq_free. */
xpb_status lb_workq_start(struct lb_workq **out, unsigned workers, unsigned waiting, int nice,
                          double max_wait_s, xpb_err *err);

/* Queues fn(arg, 0) to run on a worker (fn(arg, 1) when it waited too long): 1 when queued, 0
 * when the queue is full or stopped (nothing queued; fn is not called). Never waits. */
int lb_workq_submit(struct lb_workq *q, void (*fn)(void *arg, int cancelled), void *arg);

/* Refuses new jobs, calls fn(arg, 1) for every job still waiting (it must finish its work
 * quickly: the service is stopping), waits for the running ones and joins the threads. May be
 * called once; lb_workq_submit stays safe to call (and refuses) until lb_workq_free. */
void lb_workq_stop(struct lb_workq *q);

/* Frees a stopped queue. NULL is a no-op. */
void lb_workq_free(struct lb_workq *q);

/* Jobs refused since the start because the queue was full, or called off for waiting too
 * long. */
unsigned long long lb_workq_refused(struct lb_workq *q);

#endif
