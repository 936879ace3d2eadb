/* Error messages inside the host: a fixed buffer a failing function fills and returns a
 * status with. Callers print `err.msg` as is; it names the file, line, key or layer. */
#ifndef XPB_CORE_ERROR_H
#define XPB_CORE_ERROR_H

#include <xpubench/status.h>

typedef struct xpb_err {
    char msg[1024];
} xpb_err;

/* Formats into err->msg (when err is not NULL) and returns `status`, so that a failing path
 * reads `return xpb_err_set(err, XPB_PARSE_ERROR, "%s:%d: ...", ...);`. */
xpb_status xpb_err_set(xpb_err *err, xpb_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefixes err->msg with "<prefix>: " (keeps the original message). */
void xpb_err_prefix(xpb_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
