/* xpubench public SDK: the plugin ABI (version 1.3).
 *
 * Every plugin is a shared object that exports exactly one symbol, `xpb_plugin_query`
 * (declare it with XPB_PLUGIN_QUERY, or define the whole block with XPB_DEFINE_PLUGIN; build
 * with -fvisibility=hidden so nothing else leaks). The host calls it once, right after dlopen,
 * and the plugin answers with a `static const` descriptor whose function table is a backend
 * (backend.h) or a model (model.h).
 *
 * Versioning (docs/plugin-abi.md has one section per version; "ABI 1.x" marks what that minor
 * version appended):
 * - ABI major: the host refuses a plugin built for another major.
 * - ABI minor: only appends. How each struct that crosses the boundary grows is fixed by the
 *   table below, and nothing grows any other way:
 *
 *   struct                  writer -> reader   grows by
 *   xpb_plugin_descriptor   plugin -> host     struct_size (XPB_HAS_MEMBER)
 *   xpb_backend_api         plugin -> host     struct_size; a NULL or uncovered member is
 *                                              "not supported"
 *   xpb_model_api           plugin -> host     struct_size
 *   xpb_host_services       host -> plugin     struct_size
 *   xpb_builder_api         host -> plugin     struct_size: a model checks XPB_HAS_MEMBER
 *                                              before calling a function added after 1.0
 *   xpb_compile_options     host -> plugin     struct_size
 *   xpb_communicator        host -> plugin     struct_size
 *   xpb_program             host -> plugin     struct_size
 *   xpb_tensor_desc         host -> plugin     element stride (tensor_stride)
 *   xpb_op                  host -> plugin     element stride (op_stride, XPB_OP_HAS); new
 *                                              attributes are appended to xpb_op with an
 *                                              XPB_OP_ATTR_MAP bit
 *   xpb_phase               host -> plugin     element stride (phase_stride)
 *   xpb_device_info         plugin -> host's   struct_size (set by the host)
 *   xpb_memory_stats        plugin -> host's   struct_size (set by the host)
 *   xpb_op_attrs            frozen at 1.0 (inside xpb_op): never grows; see xpb_op
 *   xpb_op_profile, xpb_init, xpb_input_desc, xpb_param_desc, xpb_optimizer_desc,
 *   xpb_model_param         frozen at 1.0 (no size, no stride): a successor is a new struct
 *                           passed through a new entry point of a sized table
 *
 *   Arrays inside structs are frozen at their 1.0 length, each with its successor:
 *   xpb_tensor_desc.dims[XPB_MAX_DIMS]    4 dims; a backend refuses ndim > XPB_MAX_DIMS
 *   xpb_op.inputs[6], outputs[4]          the first operands; ABI 1.3 appends inputs_all and
 *                                         outputs_all (every operand; xpb_op_input())
 *   xpb_device_info.peak_flops[5]         the four policies of 1.0 (XPB_PEAK_SLOTS); a
 *                                         policy added later gets an appended member
 *   Enum values (ops, attributes, dtypes, roles, precisions, statuses, capability bits,
 *   device kinds) are only appended; every op carries the op set that introduced it
 *   (XPB_OP_MAP's column, xpb_op_opset).
 * - Memory: whatever a plugin allocates it frees; strings it returns are static or owned by
 *   the handle they came from.
 * - Names: the host prefixes every message of a plugin with the plugin's name ("[cpu_ref] ..."
 *   in logs, "backend 'cpu_ref': compile: ..." for last_error), so a plugin never writes its
 *   own name at the start of a log message or an error message. */
#ifndef XPUBENCH_PLUGIN_H
#define XPUBENCH_PLUGIN_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define XPB_ABI_MAJOR 1
#define XPB_ABI_MINOR 3

/* The one export macro. Everything else in a plugin (and in the host library) is hidden. */
#if defined(_WIN32)
#define XPB_EXPORT __declspec(dllexport)
#else
#define XPB_EXPORT __attribute__((visibility("default")))
#endif

/* True when the struct at `ptr` (whose first member is size_t struct_size) is large enough to
 * contain `member` of `type`. Use it before reading any member added after ABI 1.0. */
#define XPB_HAS_MEMBER(ptr, type, member)                                                          \
    ((ptr) != NULL && (ptr)->struct_size >= offsetof(type, member) + sizeof(((type *)0)->member))

/* The member's value when present, otherwise `fallback`. */
#define XPB_MEMBER_OR(ptr, type, member, fallback)                                                 \
    (XPB_HAS_MEMBER(ptr, type, member) ? (ptr)->member : (fallback))

typedef enum xpb_plugin_kind {
    XPB_PLUGIN_BACKEND = 1,
    XPB_PLUGIN_MODEL = 2,
} xpb_plugin_kind;

/* Capability bits of a plugin descriptor. Bits are never reused; a host ignores bits it does
 * not know. What an optional entry point can do is said by the entry point itself (non-NULL
 * and inside the table's struct_size), never by a bit: the bits below are for behaviour that
 * has no entry point of its own. */
#define XPB_CAP_FUSION (1ull << 3)  /* backend: the compile option `fusion` changes what runs */
#define XPB_CAP_THREADS (1ull << 4) /* backend: honours the compile option `threads` */
/* Deprecated in ABI 1.1, ignored by hosts, kept so that their numbers are never reused:
 * profiling, memory statistics and energy are said by profile_read, memory_stats and
 * energy_read being present; every backend's run() may return before its work is done (the
 * host always calls synchronize). */
#define XPB_CAP_PROFILING (1ull << 0)
#define XPB_CAP_MEMORY_STATS (1ull << 1)
#define XPB_CAP_ENERGY (1ull << 2)
#define XPB_CAP_ASYNC (1ull << 5)

typedef enum xpb_log_level {
    XPB_LOG_ERROR = 0,
    XPB_LOG_WARN = 1,
    XPB_LOG_INFO = 2,
    XPB_LOG_DEBUG = 3,
} xpb_log_level;

/* Services the host offers to every plugin. Valid from xpb_plugin_query until the plugin is
 * unloaded; the plugin may keep the pointer. */
typedef struct xpb_host_services {
    size_t struct_size;
    uint32_t abi_major; /* the host's ABI version */
    uint32_t abi_minor;
    void *ctx; /* pass back as the first argument of every service */
    /* Log one line. `plugin` and `message` are copied; neither may be NULL. */
    void (*log)(void *ctx, xpb_log_level level, const char *plugin, const char *message);
} xpb_host_services;

/* What a plugin answers. Must be static storage: the host keeps the pointer until dlclose. */
typedef struct xpb_plugin_descriptor {
    size_t struct_size;      /* sizeof(xpb_plugin_descriptor) as the plugin compiled it */
    uint32_t abi_major;      /* XPB_ABI_MAJOR the plugin was built against */
    uint32_t abi_minor;      /* XPB_ABI_MINOR the plugin was built against */
    uint32_t kind;           /* xpb_plugin_kind */
    const char *name;        /* unique, [a-z0-9_]+, e.g. "cpu_ref" or "conv6" */
    const char *version;     /* the plugin's own version, e.g. "1.0.0" */
    const char *description; /* one line for `xpubench list` */
    uint64_t caps;           /* XPB_CAP_* */
    /* const xpb_backend_api * when kind is XPB_PLUGIN_BACKEND,
     * const xpb_model_api * when kind is XPB_PLUGIN_MODEL. */
    const void *api;

    /* ---- ABI 1.1 ---- */
    /* The highest op-set version (XPB_OPSET_VERSION of the headers it was built with) whose ops
     * the plugin knows; 0 = not said (an ABI 1.0 plugin: op set 1). The host refuses, naming
     * the op, a program that needs a later op set than a backend knows, before compile. */
    uint32_t opset;
} xpb_plugin_descriptor;

/* The single entry point. The host passes its ABI version and services; the plugin stores
 * its descriptor in *out and returns XPB_OK, or returns XPB_INCOMPATIBLE when it cannot work
 * with that host (it may still set *out so that the host can name it), or another status
 * when its own initialisation failed (then the host logs it and skips the plugin). */
typedef xpb_status (*xpb_plugin_query_fn)(const xpb_plugin_descriptor **out, uint32_t host_major,
                                          uint32_t host_minor, const xpb_host_services *host);

#define XPB_PLUGIN_QUERY_SYMBOL "xpb_plugin_query"

/* Use as: XPB_PLUGIN_QUERY { *out = &my_descriptor; return XPB_OK; } */
#define XPB_PLUGIN_QUERY                                                                           \
    XPB_EXPORT xpb_status xpb_plugin_query(const xpb_plugin_descriptor **out, uint32_t host_major, \
                                           uint32_t host_minor, const xpb_host_services *host)

/* Visibility of symbols a plugin shares between its own files but never exports. */
#if defined(_WIN32)
#define XPB_HIDDEN
#else
#define XPB_HIDDEN __attribute__((visibility("hidden")))
#endif

/* The host's services and the plugin's name, as XPB_DEFINE_PLUGIN stores them when the host
 * queries the plugin (ABI 1.3): usable from any file of the plugin, before or after the
 * XPB_DEFINE_PLUGIN line. NULL before the query (or in a plugin that writes its own query). */
extern XPB_HIDDEN const xpb_host_services *xpb_plugin_host_services_;
extern XPB_HIDDEN const char *const xpb_plugin_name_;

/* The host's services, or NULL before the query; valid until the plugin is unloaded. */
static inline const xpb_host_services *xpb_plugin_host(void)
{
    return xpb_plugin_host_services_;
}

/* Logs one line through the host (which prefixes the plugin's name: do not repeat it). A no-op
 * before the query. Formats into a bounded buffer; a longer message is cut. */
static inline void xpb_plugin_log(xpb_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static inline void xpb_plugin_log(xpb_log_level level, const char *fmt, ...)
{
    const xpb_host_services *h = xpb_plugin_host_services_;
    if (!h || !h->log)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    h->log(h->ctx, level, xpb_plugin_name_, msg);
}

/* The whole descriptor-and-query block of a plugin in one line (ABI 1.1):
 *
 *   XPB_DEFINE_PLUGIN(XPB_PLUGIN_BACKEND, "my_npu", "1.0.0", "My NPU (vendor SDK 3.2)",
 *                     XPB_CAP_FUSION | XPB_CAP_THREADS, &my_backend_api)
 *
 * defines the static descriptor (this header's ABI and op-set versions) and xpb_plugin_query,
 * which answers XPB_INCOMPATIBLE to a host of another major and stores the host's services
 * for xpb_plugin_host() and xpb_plugin_log() (usable in every file of the plugin). `api` is a
 * pointer to the plugin's static function table. Use it once per plugin. Needs program.h for
 * the op-set version (xpubench.h includes everything). */
#define XPB_DEFINE_PLUGIN(kind_, name_, version_, description_, caps_, api_)                       \
    XPB_HIDDEN const xpb_host_services *xpb_plugin_host_services_;                                 \
    XPB_HIDDEN const char *const xpb_plugin_name_ = (name_);                                       \
    static const xpb_plugin_descriptor xpb_plugin_descriptor_ = {                                  \
        sizeof(xpb_plugin_descriptor),                                                             \
        XPB_ABI_MAJOR,                                                                             \
        XPB_ABI_MINOR,                                                                             \
        (kind_),                                                                                   \
        (name_),                                                                                   \
        (version_),                                                                                \
        (description_),                                                                            \
        (caps_),                                                                                   \
        (api_),                                                                                    \
        XPB_OPSET_VERSION,                                                                         \
    };                                                                                             \
    XPB_PLUGIN_QUERY                                                                               \
    {                                                                                              \
        (void)host_minor;                                                                          \
        *out = &xpb_plugin_descriptor_;                                                            \
        if (host_major != XPB_ABI_MAJOR)                                                           \
            return XPB_INCOMPATIBLE;                                                               \
        xpb_plugin_host_services_ = host;                                                          \
        return XPB_OK;                                                                             \
    }

/* Evaluates a status expression and returns it from the enclosing function unless it is
 * XPB_OK: the "try" of builder calls and other status-returning code. */
#define XPB_TRY(expr)                                                                              \
    do {                                                                                           \
        xpb_status xpb_try_status_ = (expr);                                                       \
        if (xpb_try_status_ != XPB_OK)                                                             \
            return xpb_try_status_;                                                                \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif
