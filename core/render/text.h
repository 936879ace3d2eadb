/* A growable text buffer, the sink every renderer of render/ writes into: the report's writers
 * (which then write it to their FILE) and the leaderboard's pages (which give it a byte cap
 * and send it as an HTTP body). Appending never fails loudly: an allocation failure, or growing
 * past `limit`, sets `failed` (and `too_large` for the limit), later appends do nothing, and
 * the owner checks `failed` once at the end. A zeroed struct is an empty buffer without a
 * limit. */
#ifndef XPB_CORE_RENDER_TEXT_H
#define XPB_CORE_RENDER_TEXT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <xpubench/status.h>

struct xpb_text {
    char *data; /* NUL-terminated when not NULL; owned by the buffer */
    size_t len, cap;
    size_t limit;  /* most bytes the content may hold; 0: no limit */
    int failed;    /* an allocation failed or the limit was reached: the content is incomplete */
    int too_large; /* it was the limit */
};

/* Appends n bytes of s. */
void xpb_text_add(struct xpb_text *t, const char *s, size_t n);

/* Appends the NUL-terminated string s (NULL appends nothing). */
void xpb_text_puts(struct xpb_text *t, const char *s);

/* Appends one byte. */
void xpb_text_putc(struct xpb_text *t, char c);

/* Inserts n bytes of s at offset `at` (at most len; a larger one inserts nothing), moving what
 * follows: an answer is assembled around a large text in place, without a copy of it. */
void xpb_text_insert(struct xpb_text *t, size_t at, const char *s, size_t n);

/* Appends printf-style text. Never pass untrusted text through the format: escape it with
 * escape.h instead. */
void xpb_text_printf(struct xpb_text *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* xpb_text_printf with the arguments as a va_list (ap is consumed). */
void xpb_text_vprintf(struct xpb_text *t, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

/* Hands the content to the caller (malloc'ed, NUL-terminated, the caller frees it; an empty
 * buffer gives an empty string; NULL when the buffer failed) and empties the buffer (its limit
 * stays). *len_out (may be NULL) receives the length. */
char *xpb_text_take(struct xpb_text *t, size_t *len_out);

/* Releases the content (the limit stays). */
void xpb_text_free(struct xpb_text *t);

/* Writes the content to f. XPB_OUT_OF_MEMORY when the buffer failed (its content is
 * incomplete, nothing is written), XPB_IO_ERROR when writing fails, else XPB_OK. */
xpb_status xpb_text_write(const struct xpb_text *t, FILE *f);

#endif
