/* Escaping for HTML, SVG and URLs (see escape.h). */
#include "render/escape.h"

#include <string.h>

size_t xpb_utf8_decode(unsigned *cp_out, const char *text, size_t n_left)
{
    const unsigned char *s = (const unsigned char *)text;
    unsigned c = s[0];
    if (c < 0x80) {
        *cp_out = c;
        return 1;
    }
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
    if (n > n_left)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    *cp_out = cp;
    return n;
}

/* The character reference of a byte that needs one, or NULL. */
static const char *reference(unsigned char c)
{
    switch (c) {
    case '&':
        return "&amp;";
    case '<':
        return "&lt;";
    case '>':
        return "&gt;";
    case '"':
        return "&quot;";
    case '\'':
        return "&#39;";
    default:
        return NULL;
    }
}

void xpb_html_n(struct xpb_text *t, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    while (p < end) {
        /* copy the longest run that needs no escaping in one go */
        const unsigned char *run = p;
        while (p < end && *p >= 0x20 && *p < 0x7F && !reference(*p))
            p++;
        if (p > run)
            xpb_text_add(t, (const char *)run, (size_t)(p - run));
        if (p == end)
            break;
        if (reference(*p)) {
            xpb_text_puts(t, reference(*p++));
        } else if (*p == '\t' || *p == '\n') {
            xpb_text_add(t, (const char *)p++, 1);
        } else if (*p < 0x20 || *p == 0x7F) {
            p++; /* control character: dropped */
        } else {
            unsigned cp;
            size_t len = xpb_utf8_decode(&cp, (const char *)p, (size_t)(end - p));
            if (len == 0) {
                xpb_text_puts(t, "\xEF\xBF\xBD");
                p++;
            } else {
                xpb_text_add(t, (const char *)p, len);
                p += len;
            }
        }
    }
}

void xpb_html(struct xpb_text *t, const char *s)
{
    if (s)
        xpb_html_n(t, s, strlen(s));
}

size_t xpb_utf8_cut(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n <= max)
        return n;
    while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
        max--; /* not inside a UTF-8 sequence */
    return max;
}

size_t xpb_utf8_chars(const char *s, size_t max_chars)
{
    size_t n = strlen(s), chars = 0, cut = 0;
    while (cut < n && chars < max_chars) {
        cut++;
        while (cut < n && ((unsigned char)s[cut] & 0xC0) == 0x80)
            cut++;
        chars++;
    }
    return cut;
}

void xpb_html_cut(struct xpb_text *t, const char *s, size_t max)
{
    if (!s)
        return;
    size_t cut = xpb_utf8_cut(s, max);
    xpb_html_n(t, s, cut);
    if (cut < strlen(s))
        xpb_text_puts(t, "\xE2\x80\xA6");
}

void xpb_url(struct xpb_text *t, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
        unsigned c = *p;
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '.' || c == '_' || c == '~') {
            xpb_text_putc(t, (char)c);
        } else {
            char enc[3] = {'%', hex[c >> 4], hex[c & 15]};
            xpb_text_add(t, enc, 3);
        }
    }
}
