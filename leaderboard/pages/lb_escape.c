/* Escaping for HTML, SVG and URLs (see lb_escape.h). */
#include "pages/lb_escape.h"

#include <string.h>

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when it is not valid (overlong forms,
 * surrogates and code points above U+10FFFF are invalid). */
static size_t utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    size_t n;
    unsigned cp;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

void lb_buf_html(struct lb_buf *b, const char *s)
{
    if (!s)
        return;
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        /* copy the longest run that needs no escaping in one go */
        const unsigned char *run = p;
        while (*p && *p >= 0x20 && *p < 0x7F && *p != '&' && *p != '<' && *p != '>' && *p != '"' &&
               *p != '\'')
            p++;
        if (p > run)
            lb_buf_add(b, (const char *)run, (size_t)(p - run));
        if (!*p)
            break;
        switch (*p) {
        case '&':
            lb_buf_puts(b, "&amp;");
            p++;
            continue;
        case '<':
            lb_buf_puts(b, "&lt;");
            p++;
            continue;
        case '>':
            lb_buf_puts(b, "&gt;");
            p++;
            continue;
        case '"':
            lb_buf_puts(b, "&quot;");
            p++;
            continue;
        case '\'':
            lb_buf_puts(b, "&#39;");
            p++;
            continue;
        case '\t':
        case '\n':
            lb_buf_add(b, (const char *)p, 1);
            p++;
            continue;
        default:
            break;
        }
        if (*p < 0x20 || *p == 0x7F) {
            p++; /* control character: dropped */
            continue;
        }
        size_t n = utf8_len(p);
        if (n == 0) {
            lb_buf_puts(b, "\xEF\xBF\xBD");
            p++;
        } else {
            lb_buf_add(b, (const char *)p, n);
            p += n;
        }
    }
}

void lb_buf_html_cut(struct lb_buf *b, const char *s, size_t max)
{
    if (!s)
        return;
    size_t n = strlen(s);
    if (n <= max) {
        lb_buf_html(b, s);
        return;
    }
    while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
        max--; /* not inside a UTF-8 sequence */
    struct lb_buf cut = {0};
    lb_buf_add(&cut, s, max);
    lb_buf_html(b, cut.data);
    lb_buf_free(&cut);
    lb_buf_puts(b, "\xE2\x80\xA6");
}

void lb_buf_url(struct lb_buf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    if (!s)
        return;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned c = *p;
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '.' || c == '_' || c == '~') {
            char ch = (char)c;
            lb_buf_add(b, &ch, 1);
        } else {
            char enc[3] = {'%', hex[c >> 4], hex[c & 15]};
            lb_buf_add(b, enc, 3);
        }
    }
}
