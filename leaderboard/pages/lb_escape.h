/* Escaping of every piece of untrusted text (submissions, query parameters) that goes into a
 * page. Pages put untrusted text only into element content and double-quoted attribute
 * values (lb_buf_html) and into query components of links (lb_buf_url, then lb_buf_html for
 * the attribute); they never put it into scripts, styles, tag or attribute names. */
#ifndef LB_ESCAPE_H
#define LB_ESCAPE_H

#include <stddef.h>

#include "text/lb_buf.h"

/* Appends s with & < > " ' as character references, C0 control characters other than tab and
 * newline dropped, and bytes that are not valid UTF-8 replaced by U+FFFD. Safe for element
 * content and for double- or single-quoted attribute values, in HTML and in SVG/XML. NULL
 * appends nothing. */
void lb_buf_html(struct lb_buf *b, const char *s);

/* lb_buf_html of at most the first `max` bytes of s (cut at a character boundary, then
 * "..." as U+2026): pages show long free texts from submissions shortened, so that a page's size
 * is bounded by the number of texts it shows, not by their length. */
void lb_buf_html_cut(struct lb_buf *b, const char *s, size_t max);

/* Appends s percent-encoded for a URL query component (everything but A-Z a-z 0-9 - . _ ~). */
void lb_buf_url(struct lb_buf *b, const char *s);

#endif
