/* Whether this process was started as one rank of several, read from the launcher's
 * environment without MPI: Open MPI's mpirun (OMPI_COMM_WORLD_SIZE/RANK), launchers that speak
 * PMI (PMI_SIZE/PMI_RANK: MPICH's hydra, Slurm's pmi2) or PMIx (PMIX_RANK, the size from the
 * others), Slurm's srun (SLURM_STEP_NUM_TASKS/SLURM_PROCID). The host decides from it whether
 * to load the MPI module at all; MPI itself then gives the authoritative rank and size. */
#ifndef XPB_CORE_LAUNCH_H
#define XPB_CORE_LAUNCH_H

#include <stdint.h>

typedef struct xpb_launch {
    uint32_t size;        /* ranks the launcher started; 0: started by one, size unknown */
    uint32_t rank;        /* this process among them */
    const char *launcher; /* "mpirun (Open MPI)", "PMI", "PMIx", "srun (Slurm)"; NULL: none */
} xpb_launch;

/* Reads the environment into *out: size 1, rank 0 and no launcher when none started us. */
void xpb_launch_detect(xpb_launch *out);

/* Whether *l says this process is one rank of several (or of an unknown number). */
int xpb_launch_is_parallel(const xpb_launch *l);

#endif
