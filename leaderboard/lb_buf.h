/* A growable text buffer for building HTTP bodies (HTML, SVG, JSON). Appending never fails
 * loudly: an allocation failure sets `failed`, later appends do nothing, and the caller checks
 * `failed` once at the end (the server then answers 500). */
#ifndef LB_BUF_H
#define LB_BUF_H

#include <stddef.h>

struct lb_buf {
    char *data; /* NUL-terminated when not NULL; owned by the buffer */
    size_t len, cap;
    int failed; /* an allocation failed: the content is incomplete */
};

/* Appends n bytes of s. */
void lb_buf_add(struct lb_buf *b, const char *s, size_t n);
/* Appends the NUL-terminated string s (NULL appends nothing). */
void lb_buf_puts(struct lb_buf *b, const char *s);
/* Appends printf-style text. Never pass text from a request or a submission through the
 * format: use lb_buf_html / lb_buf_url (lb_escape.h) for those. */
void lb_buf_printf(struct lb_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Hands the content to the caller (malloc'ed, NUL-terminated, caller frees; an empty buffer
 * gives an empty string; NULL when an allocation failed) and empties the buffer. */
char *lb_buf_take(struct lb_buf *b, size_t *len_out);
/* Releases the content. */
void lb_buf_free(struct lb_buf *b);

#endif
