/* Text for a terminal from sources that are not trusted: strings of results files (ids,
 * errors, names, paths), what a server answers, messages that quote either. A terminal obeys
 * control characters and escape sequences in what it prints (clear the screen, set the window
 * title, write the clipboard with OSC 52, overwrite a line with a carriage return) and shows
 * bidirectional overrides reordered (U+202E makes "gnp.exe" read "exe.png"), so every such
 * string goes through xpb_term_escape before it reaches a terminal, as visible escapes:
 *
 *   C0 controls and DEL       \n \r \t, else \xHH        ("\x1b]0;title\x07" shows as such)
 *   C1 controls (U+0080-9F)   \u0080 ... \u009f          (as UTF-8: C2 80 ... C2 9F)
 *   bidirectional controls    \u202e ...                 (U+061C, U+200E-200F, U+202A-202E,
 *                                                         U+2066-2069)
 *   line and paragraph seps   \u2028 \u2029
 *   invalid UTF-8             \xHH per byte               (stray, truncated, overlong, surrogate)
 *
 * Everything else (printable ASCII, valid UTF-8 text) is copied. A backslash is not escaped,
 * so escaping is idempotent: text escaped once (by the upload client, say) and again when
 * printed is unchanged the second time; the price is that a literal "\x1b" in a file looks
 * like an escaped ESC, which is harmless. */
#ifndef XPB_CORE_RENDER_TERMINAL_H
#define XPB_CORE_RENDER_TERMINAL_H

#include <stddef.h>
#include <stdio.h>

#include <xpubench/status.h>

#include "render/text.h"

/* Keep the layout of a block of text: newlines, tabs and the CR of a CR LF pair pass
 * unescaped. Without it every control character is escaped (one field, one line). */
#define XPB_TERM_LAYOUT 1u

/* Appends the first n bytes of s (need not be NUL-terminated there) to out, escaped as above.
 * The one escaping function: every other function of this file calls it. */
void xpb_term_escape(struct xpb_text *out, const char *s, size_t n, unsigned flags);

/* One field escaped (no layout kept) into buf (size bytes, NUL-terminated, cut at a character
 * boundary when it does not fit; "" for NULL s). Returns buf, for printf arguments. */
const char *xpb_term_field(char *buf, size_t size, const char *s);

/* Writes n bytes of s to f escaped with `flags`. XPB_OUT_OF_MEMORY (nothing written),
 * XPB_IO_ERROR, or XPB_OK. */
xpb_status xpb_term_write(FILE *f, const char *s, size_t n, unsigned flags);

/* Formats a message and writes it to f as one line: every control character of the result
 * escaped (a quoted string cannot break or rewrite the line), then a newline. For error
 * messages that quote file names, file contents or what a server said. */
void xpb_term_line(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
