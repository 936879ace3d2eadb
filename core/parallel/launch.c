/* The launcher's environment (see launch.h). */
#include "parallel/launch.h"

#include <errno.h>
#include <stdlib.h>

/* The decimal value of environment variable `name`; 0 when it is unset or not a number. */
static int env_u32(const char *name, uint32_t *out)
{
    const char *text = getenv(name);
    if (!text || *text < '0' || *text > '9')
        return 0;
    char *end;
    errno = 0;
    unsigned long v = strtoul(text, &end, 10);
    if (errno || *end || v > UINT32_MAX)
        return 0;
    *out = (uint32_t)v;
    return 1;
}

void xpb_launch_detect(xpb_launch *out)
{
    uint32_t size = 0, rank = 0;
    *out = (xpb_launch){.size = 1, .rank = 0, .launcher = NULL};
    if (env_u32("OMPI_COMM_WORLD_SIZE", &size) && env_u32("OMPI_COMM_WORLD_RANK", &rank)) {
        *out = (xpb_launch){size, rank, "mpirun (Open MPI)"};
    } else if (env_u32("PMI_SIZE", &size) && env_u32("PMI_RANK", &rank)) {
        *out = (xpb_launch){size, rank, "PMI"};
    } else if (env_u32("PMIX_RANK", &rank)) {
        /* PMIx gives no size in the environment; srun's does */
        if (!env_u32("SLURM_STEP_NUM_TASKS", &size))
            size = 0;
        *out = (xpb_launch){size, rank, "PMIx"};
    } else if (env_u32("SLURM_STEP_NUM_TASKS", &size) && env_u32("SLURM_PROCID", &rank)) {
        *out = (xpb_launch){size, rank, "srun (Slurm)"};
    }
}

int xpb_launch_is_parallel(const xpb_launch *l)
{
    return l->launcher && l->size != 1;
}
