/* Device addresses of the plan's buffers in an executable's arena (arena.c). */
#ifndef XPB_CUX_ARENA_H
#define XPB_CUX_ARENA_H

#include <stdint.h>

#include "glue/exe.h"

/* Device address of plan buffer `buf` (NULL for CUX_NONE): inside the arena, owned by the
 * executable, valid until destroy. */
void *cux_ptr(const xpb_executable *exe, uint32_t buf);
/* The kernel view of plan view `v` (p NULL for an absent operand). */
cux_tview cux_tview_of(const xpb_executable *exe, const cux_view *v);

#endif
