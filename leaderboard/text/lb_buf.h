/* A growable text buffer for building HTTP bodies (HTML, SVG, JSON). Appending never fails
 * loudly: an allocation failure, or growing past `limit`, sets `failed` (and `too_large` for
 * the limit), later appends do nothing, and the caller checks `failed` once at the end (the
 * server then answers 500). The server gives every answer a limit, so no request can make
 * the service build an answer larger than that, whatever it asks for. */
#ifndef LB_BUF_H
#define LB_BUF_H

#include <stddef.h>

struct lb_buf {
    char *data; /* NUL-terminated when not NULL; owned by the buffer */
    size_t len, cap;
    size_t limit;  /* most bytes the content may hold; 0: no limit */
    int failed;    /* an allocation failed or the limit was reached: the content is incomplete */
    int too_large; /* it was the limit */
};

/* Appends n bytes of s. */
void lb_buf_add(struct lb_buf *b, const char *s, size_t n);
/* Appends the NUL-terminated string s (NULL appends nothing). */
void lb_buf_puts(struct lb_buf *b, const char *s);
/* Inserts n bytes of s at offset `at` (at most len), moving what follows; no copy of the
 * content is made beyond the move (an answer is assembled around a large text in place). */
void lb_buf_insert(struct lb_buf *b, size_t at, const char *s, size_t n);
/* Appends printf-style text. Never pass text from a request or a submission through the
 * format: use lb_buf_html / lb_buf_url (lb_escape.h) for those. */
void lb_buf_printf(struct lb_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Hands the content to the caller (malloc'ed, NUL-terminated, caller frees; an empty buffer
 * gives an empty string; NULL when the buffer failed) and empties the buffer (its limit
 * stays). */
char *lb_buf_take(struct lb_buf *b, size_t *len_out);
/* Releases the content (the limit stays). */
void lb_buf_free(struct lb_buf *b);

#endif
