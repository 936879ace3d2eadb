/* Error message buffer helpers (see error.h). */
#include "base/errmsg.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

xpb_status xpb_err_set(xpb_err *err, xpb_status status, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return status;
}

void xpb_err_prefix(xpb_err *err, const char *fmt, ...)
{
    if (!err)
        return;
    char prefix[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    size_t plen = strlen(prefix), cap = sizeof err->msg;
    size_t keep = strnlen(err->msg, cap - 1);
    if (plen + 2 + keep >= cap)
        keep = cap - 1 - plen - 2; /* plen < 512 keeps this positive */
    memmove(err->msg + plen + 2, err->msg, keep);
    err->msg[plen + 2 + keep] = 0;
    memcpy(err->msg, prefix, plen);
    err->msg[plen] = ':';
    err->msg[plen + 1] = ' ';
}
