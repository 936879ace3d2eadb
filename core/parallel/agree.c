/* Agreements between ranks (see agree.h), on the module's control collective. */
#include "parallel/agree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What one rank says at the end of a stage: fixed size, so one gather carries every rank's. */
typedef struct rank_word {
    int32_t status;
    uint32_t peer; /* 1: it failed only because another rank stopped */
    char host[64];
    char msg[440];
} rank_word;

xpb_status xpb_parallel_gather(xpb_parallel *p, const void *send, void *recv, size_t bytes,
                               const char *what, xpb_err *err)
{
    xpb_status st = p->mod->allgather(p->comm.ctx, send, recv, bytes, p->timeout_s, what, 0);
    if (st != XPB_OK)
        return xpb_err_set(err, st, "rank %u: %s", p->comm.rank, p->comm.last_error(p->comm.ctx));
    return XPB_OK;
}

/* The message of an agreed failure: the first rank that failed on its own (else the first). */
static xpb_status verdict(const xpb_parallel *p, const rank_word *all, xpb_err *err)
{
    uint32_t first = UINT32_MAX, failed = 0;
    for (uint32_t r = 0; r < p->comm.size; r++) {
        if (all[r].status == XPB_OK)
            continue;
        failed++;
        if (first == UINT32_MAX || (all[first].peer && !all[r].peer))
            first = r;
    }
    const rank_word *w = &all[first];
    xpb_err_set(err, (xpb_status)w->status, "rank %u (host %.64s): %.440s", first, w->host, w->msg);
    if (failed > 1) {
        char more[96];
        snprintf(more, sizeof more, " [%u of %u ranks failed]", failed, p->comm.size);
        size_t len = strlen(err->msg);
        snprintf(err->msg + len, sizeof err->msg - len, "%s", more);
    }
    return (xpb_status)w->status;
}

xpb_status xpb_parallel_agree(xpb_parallel *p, xpb_status mine, const xpb_err *my_err,
                              const char *stage, int patient, xpb_err *err)
{
    rank_word me = {.status = mine}, *all = calloc(p->comm.size, sizeof *all);
    if (!all)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    if (mine != XPB_OK) {
        me.peer = (uint32_t)p->mod->peer_stopped(p->comm.ctx, NULL);
        if (my_err && my_err->msg[0])
            snprintf(me.msg, sizeof me.msg, "%.439s", my_err->msg);
        else
            snprintf(me.msg, sizeof me.msg, "%.200s: %.200s", stage, xpb_strerror(mine));
        p->mod->stop(p->comm.ctx); /* so that no rank stays blocked in a collective */
    }
    snprintf(me.host, sizeof me.host, "%.63s", p->host);
    xpb_status st =
        p->mod->allgather(p->comm.ctx, &me, all, sizeof me, p->timeout_s, stage, patient);
    if (st != XPB_OK)
        xpb_err_set(err, st, "rank %u: %s", p->comm.rank, p->comm.last_error(p->comm.ctx));
    if (st == XPB_OK) {
        uint8_t *stopped = calloc(p->comm.size, 1);
        int any = 0;
        for (uint32_t r = 0; stopped && r < p->comm.size; r++)
            any |= stopped[r] = all[r].status != XPB_OK;
        if (!stopped)
            st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
        else if (any && (st = p->mod->recover(p->comm.ctx, stopped)) != XPB_OK)
            xpb_err_set(err, st, "%s", p->comm.last_error(p->comm.ctx));
        else if (any)
            st = verdict(p, all, err);
        free(stopped);
    }
    free(all);
    return st;
}

void xpb_parallel_beat(xpb_parallel *p, int first, const char *what)
{
    p->mod->beat(p->comm.ctx, first, what);
}

xpb_status xpb_parallel_step(xpb_parallel *p, const xpb_step_word *mine, xpb_step_word *all,
                             xpb_err *err)
{
    if (mine->status != XPB_OK)
        p->mod->stop(p->comm.ctx);
    return xpb_parallel_gather(p, mine, all, sizeof *mine, "the end of a step", err);
}
