/* Host logging and the host-services table given to plugins (see log.h). */
#include "plugin/log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>

/* Plugins may log from their own threads, so the settings are atomics. */
static atomic_int log_level = XPB_LOG_WARN;
static _Atomic(FILE *) log_stream = NULL;

void xpb_log_set_level(int level)
{
    if (level < -1)
        level = -1;
    if (level > XPB_LOG_DEBUG)
        level = XPB_LOG_DEBUG;
    atomic_store(&log_level, level);
}

int xpb_log_get_level(void)
{
    return atomic_load(&log_level);
}

void xpb_log_set_stream(FILE *stream)
{
    atomic_store(&log_stream, stream);
}

/* Writes "[who] message\n" with one stdio call, so that lines of concurrent writers do not
 * interleave. A trailing newline in `message` is not doubled. */
static void log_line(const char *who, const char *message)
{
    FILE *out = atomic_load(&log_stream);
    size_t len = strlen(message);
    if (len > 0 && message[len - 1] == '\n')
        len--;
    fprintf(out ? out : stderr, "[%s] %.*s\n", who, (int)len, message);
}

void xpb_log(xpb_log_level level, const char *who, const char *fmt, ...)
{
    if ((int)level > atomic_load(&log_level))
        return;
    char message[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    log_line(who ? who : "xpubench", message);
}

/* The `log` host service. The ABI says neither string may be NULL; a plugin that breaks that
 * still gets its line printed rather than a crash. */
static void host_log(void *ctx, xpb_log_level level, const char *plugin, const char *message)
{
    (void)ctx;
    if ((int)level > atomic_load(&log_level))
        return;
    log_line(plugin ? plugin : "?", message ? message : "(null)");
}

static const xpb_host_services host_services = {
    .struct_size = sizeof(xpb_host_services),
    .abi_major = XPB_ABI_MAJOR,
    .abi_minor = XPB_ABI_MINOR,
    .ctx = NULL,
    .log = host_log,
};

const xpb_host_services *xpb_log_host_services(void)
{
    return &host_services;
}
