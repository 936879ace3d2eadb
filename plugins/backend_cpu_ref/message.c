/* Failure messages of the kernels: every one names the op and its layer first, as compile's
 * messages do, so that a run-time refusal (an index outside its table, a label outside its
 * classes) reads "EMBEDDING (layer 'emb'): position 3 has index 12, ...". */
#include <stdarg.h>
#include <stdio.h>

#include "ref.h"

xpb_status ref_fail(const ref_op_args *a, xpb_status st, const char *fmt, ...)
{
    if (!a->err || a->err_size == 0)
        return st;
    int n = snprintf(a->err, a->err_size, "%s (layer '%s'): ", xpb_op_name(a->op->kind),
                     a->op->layer ? a->op->layer : "?");
    if (n >= 0 && (size_t)n < a->err_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(a->err + n, a->err_size - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return st;
}
