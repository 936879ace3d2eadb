/* Whether a process was started as one rank of several, from the launcher's environment
 * (core/parallel/launch.c): Open MPI's mpirun, PMI, PMIx with srun's size, srun alone; a
 * process of one rank, a batch script's environment and malformed values are not ranks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "parallel/launch.h"

static const char *const vars[] = {
    "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "PMI_SIZE",    "PMI_RANK", "PMIX_RANK",
    "SLURM_STEP_NUM_TASKS", "SLURM_PROCID",         "SLURM_NTASKS"};

static void clear(void)
{
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
}

static void expect(uint32_t size, uint32_t rank, const char *launcher, int parallel)
{
    xpb_launch l;
    xpb_launch_detect(&l);
    assert_int_equal(l.size, size);
    assert_int_equal(l.rank, rank);
    if (launcher)
        assert_string_equal(l.launcher, launcher);
    else
        assert_null(l.launcher);
    assert_int_equal(xpb_launch_is_parallel(&l), parallel);
}

static void test_launchers(void **state)
{
    (void)state;
    clear();
    expect(1, 0, NULL, 0);
    setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
    setenv("OMPI_COMM_WORLD_RANK", "3", 1);
    expect(4, 3, "mpirun (Open MPI)", 1);
    setenv("OMPI_COMM_WORLD_SIZE", "1", 1); /* mpirun -np 1: one rank */
    setenv("OMPI_COMM_WORLD_RANK", "0", 1);
    expect(1, 0, "mpirun (Open MPI)", 0);
    clear();
    setenv("PMI_SIZE", "8", 1);
    setenv("PMI_RANK", "5", 1);
    expect(8, 5, "PMI", 1);
    clear();
    setenv("PMIX_RANK", "2", 1);
    expect(0, 2, "PMIx", 1); /* a size nobody says: MPI will tell */
    setenv("SLURM_STEP_NUM_TASKS", "16", 1);
    expect(16, 2, "PMIx", 1);
    clear();
    setenv("SLURM_STEP_NUM_TASKS", "2", 1);
    setenv("SLURM_PROCID", "1", 1);
    expect(2, 1, "srun (Slurm)", 1);
    clear();
    setenv("SLURM_NTASKS", "64", 1); /* a batch script's allocation, not a step of srun */
    setenv("SLURM_PROCID", "0", 1);
    expect(1, 0, NULL, 0);
    clear();
    setenv("OMPI_COMM_WORLD_SIZE", "two", 1); /* not a number: not a launch */
    setenv("OMPI_COMM_WORLD_RANK", "0", 1);
    expect(1, 0, NULL, 0);
    setenv("OMPI_COMM_WORLD_SIZE", "2x", 1);
    expect(1, 0, NULL, 0);
    setenv("OMPI_COMM_WORLD_SIZE", "-2", 1);
    expect(1, 0, NULL, 0);
    clear();
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_launchers)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
