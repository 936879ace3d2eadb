/* Growable text buffer (see lb_buf.h). */
#include "text/lb_buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Makes room for `extra` more bytes plus the NUL; 0 when the buffer has failed. */
static int reserve(struct lb_buf *b, size_t extra)
{
    if (b->failed)
        return 0;
    if (b->limit && (extra > b->limit || b->len > b->limit - extra)) {
        b->failed = b->too_large = 1;
        return 0;
    }
    if (b->len + extra + 1 <= b->cap)
        return 1;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1) {
        if (cap > ((size_t)-1) / 2) {
            b->failed = 1;
            return 0;
        }
        cap *= 2;
    }
    char *grown = realloc(b->data, cap);
    if (!grown) {
        b->failed = 1;
        return 0;
    }
    b->data = grown;
    b->cap = cap;
    return 1;
}

void lb_buf_add(struct lb_buf *b, const char *s, size_t n)
{
    if (!reserve(b, n))
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void lb_buf_insert(struct lb_buf *b, size_t at, const char *s, size_t n)
{
    if (at > b->len || !reserve(b, n))
        return;
    memmove(b->data + at + n, b->data + at, b->len - at + 1); /* with the NUL */
    memcpy(b->data + at, s, n);
    b->len += n;
}

void lb_buf_puts(struct lb_buf *b, const char *s)
{
    if (s)
        lb_buf_add(b, s, strlen(s));
}

void lb_buf_printf(struct lb_buf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = 1;
        return;
    }
    if ((size_t)n < sizeof small) {
        lb_buf_add(b, small, (size_t)n);
        return;
    }
    if (!reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

char *lb_buf_take(struct lb_buf *b, size_t *len_out)
{
    char *out = NULL;
    if (!b->failed && !b->data)
        out = calloc(1, 1);
    else if (!b->failed)
        out = b->data;
    else
        free(b->data);
    if (len_out)
        *len_out = out ? b->len : 0;
    size_t limit = b->limit;
    memset(b, 0, sizeof *b);
    b->limit = limit;
    return out;
}

void lb_buf_free(struct lb_buf *b)
{
    free(b->data);
    size_t limit = b->limit;
    memset(b, 0, sizeof *b);
    b->limit = limit;
}
