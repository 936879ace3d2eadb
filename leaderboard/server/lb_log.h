/* Text from a request (its method and path) or from the HTTP library, made safe for the
 * service's log on stderr (one line per request, see lb_server.c). */
#ifndef LB_LOG_H
#define LB_LOG_H

#include <stddef.h>

/* Writes s into out (cap bytes, always NUL-terminated, cut when it does not fit) for a log
 * line: bytes outside printable ASCII, '\\' and '"' as \xHH, so that a request can neither
 * start a line of its own (CR, LF) nor send terminal escapes (ESC) to whoever reads the log. */
void lb_log_text(char *out, size_t cap, const char *s);

#endif
