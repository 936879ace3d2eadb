/* Host logging: one verbosity level for the whole process, one output stream, and the
 * host-services table every plugin receives from the loader (its `log` member prints
 * "[plugin] message"). */
#ifndef XPB_CORE_LOG_H
#define XPB_CORE_LOG_H

#include <stdio.h>

#include <xpubench/plugin.h>

/* Lines with a level above `level` (an xpb_log_level) are dropped; -1 drops everything.
 * Values outside -1..XPB_LOG_DEBUG are clamped. The default is XPB_LOG_WARN. */
void xpb_log_set_level(int level);
int xpb_log_get_level(void);

/* Where log lines go; NULL restores stderr. The stream is not owned: the caller keeps it open
 * until it sets another one. */
void xpb_log_set_stream(FILE *stream);

/* Prints "[who] message" (printf-style) as one line when `level` passes the verbosity. */
void xpb_log(xpb_log_level level, const char *who, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The table handed to every plugin's xpb_plugin_query. Static storage: valid for the whole
 * life of the process, so a plugin may keep the pointer. */
const xpb_host_services *xpb_log_host_services(void);

#endif
