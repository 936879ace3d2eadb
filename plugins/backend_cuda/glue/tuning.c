/* The timing of engine candidates at compile (glue/conv.c, glue/matmul.c): whether it is on
 * (XPB_CUDA_NO_TUNE=1 takes the heuristics' first choice) and the scratch workspace the
 * candidates run with, grown to the largest one asks for. */
#include <stdlib.h>
#include <string.h>

#include "glue/status.h"
#include "glue/tuning.h"

int cux_tuning_on(void)
{
    const char *v = getenv("XPB_CUDA_NO_TUNE");
    return !(v && v[0] && strcmp(v, "0") != 0);
}

xpb_status cux_tune_scratch(xpb_executable *exe, void **ws, size_t *have, size_t bytes)
{
    if (bytes <= *have)
        return XPB_OK;
    if (*ws)
        cux_released(cudaFree(*ws), "compile: cudaFree (tuning workspace)");
    *ws = NULL;
    *have = 0;
    CUX_CUDA(exe, CUX_NONE, cudaMalloc(ws, bytes), "compile: tuning workspace");
    *have = bytes;
    return XPB_OK;
}
