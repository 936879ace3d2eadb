/* xpubench public SDK: status codes.
 *
 * One enum with fixed numbers, shared by the host and every plugin. Numbers never change and
 * are never reused; new codes are appended. The human-readable detail of a failure comes from
 * the `last_error` function of the handle that failed, not from the code. */
#ifndef XPUBENCH_STATUS_H
#define XPUBENCH_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

/* X(name, number, message) */
#define XPB_STATUS_MAP(X)                                                                          \
    X(OK, 0, "success")                                                                            \
    X(INVALID_ARGUMENT, 1, "invalid argument")                                                     \
    X(OUT_OF_MEMORY, 2, "out of memory")                                                           \
    X(UNSUPPORTED, 3, "operation, attribute or option not supported")                              \
    X(INCOMPATIBLE, 4, "incompatible plugin ABI version")                                          \
    X(NO_DEVICE, 5, "no device available")                                                         \
    X(DEVICE_ERROR, 6, "device or driver error")                                                   \
    X(IO_ERROR, 7, "input/output error")                                                           \
    X(PARSE_ERROR, 8, "parse error")                                                               \
    X(NOT_FOUND, 9, "not found")                                                                   \
    X(INTERNAL, 10, "internal error")                                                              \
    X(INTERRUPTED, 11, "interrupted")                                                              \
    X(NUMERIC, 12, "numerical check failed")                                                       \
    X(NETWORK, 13, "network error")                                                                \
    X(REJECTED, 14, "rejected by the server")

typedef enum xpb_status {
#define XPB_STATUS_ENUM_(name, num, msg) XPB_##name = num,
    XPB_STATUS_MAP(XPB_STATUS_ENUM_)
#undef XPB_STATUS_ENUM_
} xpb_status;

/* A static English description of `status`; never NULL. Unknown numbers (a newer plugin's
 * codes) give "unknown status". The string is static: the caller never frees it. */
static inline const char *xpb_strerror(xpb_status status)
{
    switch (status) {
#define XPB_STATUS_STR_(name, num, msg)                                                            \
    case XPB_##name:                                                                               \
        return msg;
        XPB_STATUS_MAP(XPB_STATUS_STR_)
#undef XPB_STATUS_STR_
    }
    return "unknown status";
}

/* The symbolic name ("OK", "UNSUPPORTED", ...) of `status`; static, never NULL. */
static inline const char *xpb_status_name(xpb_status status)
{
    switch (status) {
#define XPB_STATUS_NAME_(name, num, msg)                                                           \
    case XPB_##name:                                                                               \
        return #name;
        XPB_STATUS_MAP(XPB_STATUS_NAME_)
#undef XPB_STATUS_NAME_
    }
    return "UNKNOWN";
}

#ifdef __cplusplus
}
#endif
#endif
