/* The growable text buffer (see text.h). */
#include "render/text.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Makes room for `extra` more bytes plus the NUL; 0 when the buffer has failed. */
static int reserve(struct xpb_text *t, size_t extra)
{
    if (t->failed)
        return 0;
    if (t->limit && (extra > t->limit || t->len > t->limit - extra)) {
        t->failed = t->too_large = 1;
        return 0;
    }
    if (t->len + extra + 1 <= t->cap)
        return 1;
    size_t cap = t->cap ? t->cap : 256;
    while (cap < t->len + extra + 1) {
        if (cap > ((size_t)-1) / 2) {
            t->failed = 1;
            return 0;
        }
        cap *= 2;
    }
    char *grown = realloc(t->data, cap);
    if (!grown) {
        t->failed = 1;
        return 0;
    }
    t->data = grown;
    t->cap = cap;
    return 1;
}

void xpb_text_add(struct xpb_text *t, const char *s, size_t n)
{
    if (!reserve(t, n))
        return;
    memcpy(t->data + t->len, s, n);
    t->len += n;
    t->data[t->len] = '\0';
}

void xpb_text_insert(struct xpb_text *t, size_t at, const char *s, size_t n)
{
    if (at > t->len || !reserve(t, n))
        return;
    if (t->len == 0)
        t->data[0] = '\0'; /* a buffer allocated just now has no NUL yet */
    memmove(t->data + at + n, t->data + at, t->len - at + 1); /* with the NUL */
    memcpy(t->data + at, s, n);
    t->len += n;
}

void xpb_text_puts(struct xpb_text *t, const char *s)
{
    if (s)
        xpb_text_add(t, s, strlen(s));
}

void xpb_text_putc(struct xpb_text *t, char c)
{
    xpb_text_add(t, &c, 1);
}

void xpb_text_vprintf(struct xpb_text *t, const char *fmt, va_list ap)
{
    char small[256];
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n < 0) {
        t->failed = 1;
    } else if ((size_t)n < sizeof small) {
        xpb_text_add(t, small, (size_t)n);
    } else if (reserve(t, (size_t)n)) {
        vsnprintf(t->data + t->len, (size_t)n + 1, fmt, again);
        t->len += (size_t)n;
    }
    va_end(again);
}

void xpb_text_printf(struct xpb_text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    xpb_text_vprintf(t, fmt, ap);
    va_end(ap);
}

char *xpb_text_take(struct xpb_text *t, size_t *len_out)
{
    char *out = NULL;
    if (!t->failed && !t->data)
        out = calloc(1, 1);
    else if (!t->failed)
        out = t->data;
    else
        free(t->data);
    if (len_out)
        *len_out = out ? t->len : 0;
    size_t limit = t->limit;
    memset(t, 0, sizeof *t);
    t->limit = limit;
    return out;
}

void xpb_text_free(struct xpb_text *t)
{
    free(t->data);
    size_t limit = t->limit;
    memset(t, 0, sizeof *t);
    t->limit = limit;
}

xpb_status xpb_text_write(const struct xpb_text *t, FILE *f)
{
    if (t->failed)
        return XPB_OUT_OF_MEMORY;
    if (t->len && fwrite(t->data, 1, t->len, f) != t->len)
        return XPB_IO_ERROR;
    return ferror(f) ? XPB_IO_ERROR : XPB_OK;
}
