/* The host's log service, remembered from the plugin's query (abi/plugin.c attaches it before
 * anything can log), for what has no status to return: a failed release in destroy or close,
 * what the fp16 loss scaler did. */
#include <stdarg.h>
#include <stdio.h>

#include "glue/log.h"

#define CUX_LOG_SIZE 1024

/* The host's services; valid until the plugin is unloaded (the host's promise). */
static const xpb_host_services *log_host;

void cux_log_attach(const xpb_host_services *host)
{
    log_host = host;
}

void cux_log(xpb_log_level level, const char *fmt, ...)
{
    const xpb_host_services *host = log_host;
    if (!host || !XPB_HAS_MEMBER(host, xpb_host_services, log) || !host->log)
        return;
    char msg[CUX_LOG_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    host->log(host->ctx, level, "cuda", msg);
}
