/* Whether the other ranks are alive (see mpi_ctx.h). A rank that hangs (a driver that never
 * returns, a process stopped with SIGSTOP, a machine that froze) sends nothing, so the others
 * can only notice that it does not answer: every wait of the module answers PINGs with PONGs,
 * a wait that reaches its deadline PINGs every rank and names those that stay silent, and a
 * rank that works alone while the others wait for it (rank 0's one-rank baseline) PINGs them
 * as it goes, which both keeps their patient waits alive and tells it when one of them went
 * silent. The job then ends with MPI_Abort (mpirun ends every rank, the silent one too). The
 * few blocking calls that have no deadline of their own (MPI_Init, MPI_Finalize) run under a
 * watchdog alarm that ends the process, which mpirun takes as the end of the job. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "parallel/mpi/mpi_ctx.h"

/* What PINGs and PONGs carry: nothing that matters; static, as MPI reads it until the send
 * completes (the requests are freed at once). */
static const int32_t liveness_payload = 0;

double xpbm_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void send_liveness(xpbm_ctx *c, int dest, int tag)
{
    MPI_Request req;
    if (MPI_Isend(&liveness_payload, 1, MPI_INT32_T, dest, tag, c->ctrl, &req) == MPI_SUCCESS)
        MPI_Request_free(&req);
}

static void ping_all(xpbm_ctx *c)
{
    for (int r = 0; r < c->size; r++)
        if (r != c->rank)
            send_liveness(c, r, XPBM_TAG_PING);
}

int xpbm_liveness(xpbm_ctx *c)
{
    for (int tag = XPBM_TAG_PING; tag <= XPBM_TAG_PONG; tag++)
        for (;;) {
            int flag = 0, rc;
            MPI_Status status;
            if ((rc = MPI_Iprobe(MPI_ANY_SOURCE, tag, c->ctrl, &flag, &status)) || !flag)
                break;
            int32_t ignored;
            int src = status.MPI_SOURCE;
            if ((rc = MPI_Recv(&ignored, 1, MPI_INT32_T, src, tag, c->ctrl, MPI_STATUS_IGNORE)))
                return rc;
            double t = xpbm_now();
            c->last_heard[src] = t; /* a PING is a sign of life too */
            if (tag == XPBM_TAG_PING) {
                c->last_ping = t;
                send_liveness(c, src, XPBM_TAG_PONG);
            }
        }
    return MPI_SUCCESS;
}

/* "rank 1 (host a)" or "ranks 1 (host a), 3 (host b)" of the ranks not heard since `since`,
 * into buf; their number. */
static int silent_ranks(char *buf, size_t size, const xpbm_ctx *c, double since)
{
    int n = 0;
    size_t len = 0;
    buf[0] = '\0';
    for (int r = 0; r < c->size; r++) {
        if (r == c->rank || c->last_heard[r] >= since)
            continue;
        if (len < size)
            len += (size_t)snprintf(buf + len, size - len, "%s%d (host %.63s)", n ? ", " : "", r,
                                    c->hosts[r]);
        n++;
    }
    return n;
}

void xpbm_end_silent(xpbm_ctx *c, const char *what, double waited)
{
    double asked = xpbm_now();
    ping_all(c);
    /* a moment to answer: the others are in a wait of their own, which answers at once */
    double window = c->timeout_s > 0 && c->timeout_s < 4 ? c->timeout_s / 4 : 1.0;
    char names[1024];
    int silent = 0;
    do {
        struct timespec pause = {0, 10000000L};
        nanosleep(&pause, NULL);
        xpbm_liveness(c);
        silent = silent_ranks(names, sizeof names, c, asked);
    } while (silent && xpbm_now() - asked < window);
    if (silent)
        fprintf(stderr,
                "xpubench: rank %d (host %.63s): no answer for %.0f s during '%s' from rank%s %s, "
                "which %s not answer; ending the job\n",
                c->rank, c->hosts[c->rank], waited, what, silent == 1 ? "" : "s", names,
                silent == 1 ? "does" : "do");
    else
        fprintf(stderr,
                "xpubench: rank %d (host %.63s): '%s' did not complete within %.0f s although "
                "every rank answers; ending the job\n",
                c->rank, c->hosts[c->rank], what, waited);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    _exit(1);
}

void xpbm_beat(void *ctx, int first, const char *what)
{
    xpbm_ctx *c = ctx;
    double t = xpbm_now();
    if (first) { /* the others are waiting from now on: they have until the timeout */
        for (int r = 0; r < c->size; r++)
            c->last_heard[r] = t;
        c->last_beat = 0;
    }
    xpbm_liveness(c);
    if (t - c->last_beat >= 1.0) {
        ping_all(c);
        c->last_beat = t;
    }
    if (c->timeout_s <= 0)
        return;
    double oldest = t;
    for (int r = 0; r < c->size; r++)
        if (r != c->rank && c->last_heard[r] < oldest)
            oldest = c->last_heard[r];
    if (t - oldest > c->timeout_s)
        xpbm_end_silent(c, what, t - oldest);
}

int xpbm_share_hosts(xpbm_ctx *c)
{
    char mine[XPBM_HOST_MAX] = "";
    if (gethostname(mine, sizeof mine - 1) != 0 || !mine[0])
        snprintf(mine, sizeof mine, "unknown");
    mine[sizeof mine - 1] = '\0';
    c->hosts = calloc((size_t)c->size, sizeof *c->hosts);
    c->last_heard = calloc((size_t)c->size, sizeof *c->last_heard);
    if (!c->hosts || !c->last_heard)
        return MPI_ERR_NO_MEM;
    return MPI_Allgather(mine, XPBM_HOST_MAX, MPI_CHAR, c->hosts, XPBM_HOST_MAX, MPI_CHAR, c->ctrl);
}

/* What the watchdog writes before it ends the process. */
static char watchdog_text[640];
static size_t watchdog_len;

static void on_watchdog(int sig)
{
    (void)sig;
    ssize_t written = write(2, watchdog_text, watchdog_len); /* async-signal-safe */
    (void)written;
    _exit(1);
}

void xpbm_watchdog(double seconds, const char *what)
{
    if (seconds <= 0 || !what) {
        alarm(0);
        return;
    }
    int n = snprintf(watchdog_text, sizeof watchdog_text,
                     "xpubench: %s did not finish within %.0f s (a rank did not start or stopped "
                     "answering); ending the job\n",
                     what, seconds);
    watchdog_len = n < 0 ? 0 : (size_t)n < sizeof watchdog_text ? (size_t)n : sizeof watchdog_text;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_watchdog;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    alarm((unsigned)(seconds + 0.999));
}
