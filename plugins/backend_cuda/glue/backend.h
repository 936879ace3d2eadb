/* The streams and handles of an opened device (backend.c). */
#ifndef XPB_CUX_BACKEND_H
#define XPB_CUX_BACKEND_H

#include "glue/exe.h"

/* Makes device be->device current and creates its streams, its cuDNN handle (on the compute
 * stream), its cuBLASLt handle and NVML's (when present), reading its properties first; refuses
 * a GPU older than the oldest this build runs on (XPB_NO_DEVICE). Message in err (CUX_ERR_SIZE
 * bytes). On failure what was made stays in `be` for cux_backend_release. */
xpb_status cux_backend_acquire(xpb_backend *be, char *err);

/* Releases the streams, handles and NVML of the backend (not the backend itself); a failed
 * release is logged. */
void cux_backend_release(xpb_backend *be);

/* Moves the backend to `device` (a data-parallel rank's, coll.h): its streams and handles are
 * made again there. XPB_INVALID_ARGUMENT while executables compiled on the old device exist;
 * a failure leaves the backend without streams (its next calls fail). Message in be->err. */
xpb_status cux_backend_move(xpb_backend *be, int device);

#endif
