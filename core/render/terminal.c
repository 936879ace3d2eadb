/* Escaping text for a terminal (see terminal.h). */
#include "render/terminal.h"

#include <stdarg.h>
#include <string.h>

#include "render/escape.h"

/* Whether code point cp is shown as an escape although it is valid UTF-8: C1 controls,
 * bidirectional formatting characters and the Unicode line and paragraph separators. */
static int hidden_code_point(unsigned cp)
{
    return (cp >= 0x80 && cp <= 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F ||
           (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 ||
           cp == 0x2029;
}

/* The escape of control byte c: \n \r \t by name, the others in hex. */
static void escape_byte(struct xpb_text *out, unsigned char c)
{
    if (c == '\n')
        xpb_text_puts(out, "\\n");
    else if (c == '\r')
        xpb_text_puts(out, "\\r");
    else if (c == '\t')
        xpb_text_puts(out, "\\t");
    else
        xpb_text_printf(out, "\\x%02x", (unsigned)c);
}

/* Whether control byte p[0] (of the n_left bytes left) is part of the layout `flags` keeps. */
static int layout_byte(const unsigned char *p, size_t n_left, unsigned flags)
{
    if (!(flags & XPB_TERM_LAYOUT))
        return 0;
    return p[0] == '\n' || p[0] == '\t' || (p[0] == '\r' && n_left > 1 && p[1] == '\n');
}

void xpb_term_escape(struct xpb_text *out, const char *s, size_t n, unsigned flags)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + (s ? n : 0);
    while (p < end) {
        /* copy the longest run of printable ASCII in one go */
        const unsigned char *run = p;
        while (p < end && *p >= 0x20 && *p < 0x7F)
            p++;
        if (p > run)
            xpb_text_add(out, (const char *)run, (size_t)(p - run));
        if (p == end)
            break;
        if (*p < 0x20 || *p == 0x7F) {
            if (layout_byte(p, (size_t)(end - p), flags))
                xpb_text_add(out, (const char *)p, 1);
            else
                escape_byte(out, *p);
            p++;
            continue;
        }
        unsigned cp;
        size_t len = xpb_utf8_decode(&cp, (const char *)p, (size_t)(end - p));
        if (len == 0) {
            xpb_text_printf(out, "\\x%02x", (unsigned)*p++);
        } else if (hidden_code_point(cp)) {
            xpb_text_printf(out, "\\u%04x", cp);
            p += len;
        } else {
            xpb_text_add(out, (const char *)p, len);
            p += len;
        }
    }
}

const char *xpb_term_field(char *buf, size_t size, const char *s)
{
    if (size == 0)
        return buf;
    struct xpb_text t = {0};
    xpb_term_escape(&t, s, s ? strlen(s) : 0, 0);
    const char *text = t.failed ? "?" : t.data ? t.data : "";
    size_t cut = xpb_utf8_cut(text, size - 1);
    memcpy(buf, text, cut);
    buf[cut] = '\0';
    xpb_text_free(&t);
    return buf;
}

xpb_status xpb_term_write(FILE *f, const char *s, size_t n, unsigned flags)
{
    struct xpb_text t = {0};
    xpb_term_escape(&t, s, n, flags);
    xpb_status st = xpb_text_write(&t, f);
    xpb_text_free(&t);
    return st;
}

void xpb_term_line(FILE *f, const char *fmt, ...)
{
    struct xpb_text msg = {0};
    va_list ap;
    va_start(ap, fmt);
    xpb_text_vprintf(&msg, fmt, ap);
    va_end(ap);
    if (msg.failed) {
        fputs("(out of memory while writing a message)\n", f);
    } else {
        xpb_term_write(f, msg.data ? msg.data : "", msg.len, 0);
        fputc('\n', f);
    }
    xpb_text_free(&msg);
}
