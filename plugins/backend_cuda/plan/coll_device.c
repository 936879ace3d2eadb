/* Which device a rank of a data-parallel run uses (coll.h). The host opens a backend on the
 * scenario's device plus the rank's local rank when the backend lists several devices
 * (core/run/rank_config.c), and on the scenario's device when it lists one (each rank sees its
 * own GPU as device 0 when the launcher sets CUDA_VISIBLE_DEVICES per rank). Programs that open
 * device 0 on every rank (tests/dp_check) would put every local rank on one GPU, which NCCL does
 * not support ("may lead to hangs"): the default index 0 therefore means "one GPU per local
 * rank", local_rank % device_count, and any other index stands. The two rules agree wherever
 * both apply: the host's rank 0 of a host opens 0 = 0 % count, its other local ranks open
 * their own index. */
#include "plan/coll.h"

int cux_rank_device(int opened, uint32_t local_rank, uint32_t local_size, int device_count)
{
    if (opened != 0 || local_size <= 1 || device_count <= 1)
        return opened;
    if (local_size > (uint32_t)device_count)
        return -1; /* two local ranks would share a GPU */
    return (int)(local_rank % (uint32_t)device_count);
}
