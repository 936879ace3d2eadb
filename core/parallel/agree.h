/* Agreement between the ranks of a run (docs/distributed.md, "Faults"): at the end of every
 * stage (model built, compiled, warmed up, timed) every rank says how it went, and either all
 * go on or all end the run with the message of the rank that failed. A rank that failed first
 * tells the others (the module's stop) so that none stays blocked in a collective; after a
 * failure every rank recovers (the module's fault messages are consumed) and the next run
 * starts clean. Each timed step ends with a smaller exchange: every rank's step time, loss and
 * status, and rank 0's decision whether another step follows. Every exchange has a deadline
 * (XPB_DP_TIMEOUT): a rank that stops answering ends the job on every rank, named with its
 * host, whatever the stage (mpi_module.h). */
#ifndef XPB_CORE_AGREE_H
#define XPB_CORE_AGREE_H

#include <stdint.h>

#include "base/errmsg.h"
#include "parallel/parallel.h"

/* Every rank's outcome of `stage` ("compile", ...). `mine` and `my_err` are this rank's.
 * XPB_OK when every rank succeeded. Otherwise every rank returns the status of the rank that
 * failed first on its own (not because another stopped), with err "rank R (host H): its
 * message" and how many other ranks failed. `patient`: wait for a rank that works alone
 * (rank 0 measuring its one-rank baseline) as long as it keeps saying it is alive
 * (xpb_parallel_beat), the timeout counting from its last word. */
xpb_status xpb_parallel_agree(xpb_parallel *p, xpb_status mine, const xpb_err *my_err,
                              const char *stage, int patient, xpb_err *err);

#define XPB_STEP_STOP 1u /* this rank was asked to stop (Ctrl-C) */
#define XPB_STEP_MORE 2u /* rank 0: another step follows in this repeat */

/* One rank's account of one step. */
typedef struct xpb_step_word {
    int32_t status; /* xpb_status of the step on this rank */
    uint32_t flags; /* XPB_STEP_* */
    double seconds; /* this rank's step: its run calls and the synchronize */
    double inside;  /* of which inside the backend */
    double loss;    /* the loss of this rank's shard; NaN when there is none */
} xpb_step_word;

/* Exchanges this rank's word with every other rank's: all[r] is rank r's (size entries). A
 * rank whose step failed tells the others first. XPB_OK when the exchange itself worked;
 * the words' statuses say whether the step did. */
xpb_status xpb_parallel_step(xpb_parallel *p, const xpb_step_word *mine, xpb_step_word *all,
                             xpb_err *err);

/* While this rank works alone and the others wait for it patiently (`first` when it begins,
 * then at every stage and step): tells them it is alive, and ends the job naming the rank and
 * its host when one of them has stopped answering for XPB_DP_TIMEOUT. `what` names the work. */
void xpb_parallel_beat(xpb_parallel *p, int first, const char *what);

/* Every rank's `bytes` bytes of `send` into `recv` (size x bytes, rank order), for `what`. */
xpb_status xpb_parallel_gather(xpb_parallel *p, const void *send, void *recv, size_t bytes,
                               const char *what, xpb_err *err);

#endif
