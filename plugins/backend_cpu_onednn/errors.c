/* Error messages. Every failure leaves "<what>" in the message buffer of the handle
 * that failed (an executable's, a backend's, or the static one that last_error(NULL) returns),
 * and a failure that concerns an op names it: its index, its kind as the host names it
 * (xpb_op_kind_name, so that an op newer than these headers still has a name) and its layer.
 * Everything else in the backend reports through here; this file depends on nothing of it. */
#include <stdarg.h>
#include <stdio.h>

#include "odn.h"

static xpb_status vset_error(char *buf, xpb_status st, const char *fmt, va_list ap)
{
    /* no "cpu_onednn: " in front: the host names the plugin (docs/plugin-abi.md, "Names and
     * logs") */
    vsnprintf(buf, ODN_ERR_SIZE, fmt, ap);
    return st;
}

xpb_status odn_set_error(char *buf, xpb_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vset_error(buf, st, fmt, ap);
    va_end(ap);
    return st;
}

xpb_status odn_fail(xpb_executable *exe, xpb_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vset_error(exe->err, st, fmt, ap);
    va_end(ap);
    return st;
}

void odn_op_label(const xpb_executable *exe, uint32_t op, char *buf, size_t size)
{
    if (op >= exe->prog->n_ops) {
        snprintf(buf, size, "(no op)");
        return;
    }
    const xpb_op *o = xpb_program_op(exe->prog, op);
    snprintf(buf, size, "op %u %s (layer '%s')", op, xpb_op_kind_name(exe->prog, o),
             o->layer ? o->layer : "");
}

xpb_status odn_dnnl_fail(xpb_executable *exe, dnnl_status_t s, const char *what)
{
    char label[256];
    odn_op_label(exe, exe->cur_op, label, sizeof label);
    xpb_status st = s == dnnl_unimplemented       ? XPB_UNSUPPORTED
                    : s == dnnl_out_of_memory     ? XPB_OUT_OF_MEMORY
                    : s == dnnl_invalid_arguments ? XPB_INVALID_ARGUMENT
                                                  : XPB_DEVICE_ERROR;
    return odn_fail(exe, st, "%s: oneDNN %s: %s%s", label, what, dnnl_status2str(s),
                    s == dnnl_unimplemented ? " (no implementation for these shapes/types)" : "");
}
