/* The host's log service (log.c). */
#ifndef XPB_CUX_LOG_H
#define XPB_CUX_LOG_H

#include <xpubench/plugin.h>

/* Remembers the host's services (from the plugin's query; NULL: none) for cux_log. */
void cux_log_attach(const xpb_host_services *host);

/* One line to the host's log (which puts "[cuda] " before it), when the host gave a log service;
 * for what has no status to return (a failed release in destroy or close). */
void cux_log(xpb_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
