/* Threads. oneDNN (Debian's libdnnl) and the own kernels run on the OpenMP team of the calling
 * thread: the backend's default is the team size when it was opened (OMP_NUM_THREADS or all
 * CPUs), and an executable sets its own count (compile option `threads`) before compiling
 * (primitives choose their blocking for it) and before every run and transfer. */
#include <omp.h>

#include "odn.h"

uint32_t odn_default_threads(void)
{
    int n = omp_get_max_threads();
    return n > 0 ? (uint32_t)n : 1u;
}

void odn_set_threads(uint32_t threads)
{
    if (threads && (int)threads != omp_get_max_threads())
        omp_set_num_threads((int)threads);
}
