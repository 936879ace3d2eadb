/* The planner's messages: a failed pass's sentence in the plan (without the plugin's name, which
 * the host puts before every message of a plugin), and the label that names an op and its layer in
 * every message. */
#include <stdarg.h>
#include <stdio.h>

#include "plan/plan_error.h"

xpb_status cux_fail(cux_plan *plan, xpb_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(plan->err, CUX_ERR_SIZE, fmt, ap);
    va_end(ap);
    return st;
}

void cux_op_label(const xpb_program *prog, uint32_t op, char *buf, size_t size)
{
    if (op >= prog->n_ops) {
        snprintf(buf, size, "(no op)");
        return;
    }
    const xpb_op *o = xpb_program_op(prog, op);
    snprintf(buf, size, "op %u %s (layer %s)", op, xpb_op_kind_name(prog, o),
             o->layer && o->layer[0] ? o->layer : "(none)");
}
