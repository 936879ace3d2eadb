/* compile() and destroy() (compile.c). */
#ifndef XPB_CUX_COMPILE_H
#define XPB_CUX_COMPILE_H

#include "glue/exe.h"

/* Compiles `prog` (borrowed until destroy) on `be` with `opts`: *out owned by the caller
 * (cux_destroy). On failure *out is untouched, the message in be->err. */
xpb_status cux_compile(xpb_executable **out, xpb_backend *be, const xpb_program *prog,
                       const xpb_compile_options *opts);
/* Frees everything the executable holds (waits for its work first); NULL is ignored. */
void cux_destroy(xpb_executable *exe);

#endif
