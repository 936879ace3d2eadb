/* The host's clock: monotonic seconds. */
#ifndef XPB_CORE_CLOCK_H
#define XPB_CORE_CLOCK_H

#include <time.h>

static inline double xpb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
