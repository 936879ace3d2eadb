/* The memory bandwidth of the host, measured as STREAM measures it (McCalpin's copy and triad
 * kernels over arrays far larger than the caches), on the threads the backend runs with: the
 * ceiling of a memory-bound op in a roofline (docs/report.md). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "odn.h"

/* 64 MiB per array: three of them exceed the last-level cache of any CPU this runs on. */
#define BW_ELEMS (16u * 1024u * 1024u)
#define BW_RUNS 5

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double odn_measure_bandwidth(char *source, size_t size, int threads)
{
    float *a = malloc(BW_ELEMS * sizeof *a), *b = malloc(BW_ELEMS * sizeof *b),
          *c = malloc(BW_ELEMS * sizeof *c);
    double copy = 0, triad = 0;
    const int64_t n = BW_ELEMS;
    if (!a || !b || !c)
        goto free_arrays;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t i = 0; i < n; i++) { /* first touch by the threads that use the pages */
        a[i] = 1.0f;
        b[i] = 2.0f;
        c[i] = 0.5f;
    }
    for (int r = 0; r <= BW_RUNS; r++) { /* run 0 warms up; the best of the rest counts */
        double t0 = seconds();
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int64_t i = 0; i < n; i++)
            c[i] = a[i];
        double t1 = seconds();
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int64_t i = 0; i < n; i++)
            a[i] = b[i] + 3.0f * c[i];
        double t2 = seconds();
        double rc = 2.0 * (double)n * sizeof *a / (t1 - t0); /* one read, one write */
        double rt = 3.0 * (double)n * sizeof *a / (t2 - t1); /* two reads, one write */
        if (r > 0 && rc > copy)
            copy = rc;
        if (r > 0 && rt > triad)
            triad = rt;
    }
free_arrays:
    free(a);
    free(b);
    free(c);
    if (source && size)
        snprintf(source, size, "measured: STREAM triad, 3 x 64 MiB, %d thread%s (copy %.1f GB/s)",
                 threads, threads == 1 ? "" : "s", copy / 1e9);
    return triad;
}
