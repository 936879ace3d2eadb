/* The host boundary (transfer.c). */
#ifndef XPB_CUX_TRANSFER_H
#define XPB_CUX_TRANSFER_H

#include <stddef.h>
#include <stdint.h>

#include "glue/exe.h"

xpb_status cux_write(xpb_executable *exe, uint32_t tensor, const void *data, size_t bytes);
xpb_status cux_read(xpb_executable *exe, uint32_t tensor, void *data, size_t bytes);
xpb_status cux_write_async(xpb_executable *exe, uint32_t tensor, const void *data, size_t bytes);
/* The staging buffers of streamed inputs (compile). */
xpb_status cux_prepare_streaming(xpb_executable *exe);
void cux_free_streaming(xpb_executable *exe);

#endif
