/* Escaping of text that goes into HTML, SVG (XML) and URLs, and cutting text at a UTF-8
 * character boundary. Every text of a page that is not markup goes through xpb_html: text from
 * results files, file names, titles, and on the leaderboard what submitters and query strings
 * send. */
#ifndef XPB_CORE_RENDER_ESCAPE_H
#define XPB_CORE_RENDER_ESCAPE_H

#include <stddef.h>

#include "render/text.h"

/* Appends s with & < > " ' as character references, C0 control characters other than tab and
 * newline (and DEL) dropped, and bytes that are not valid UTF-8 replaced by U+FFFD. Safe for
 * element content and for double- or single-quoted attribute values, in HTML and in SVG/XML.
 * NULL appends nothing. */
void xpb_html(struct xpb_text *t, const char *s);

/* xpb_html of the first n bytes of s (s need not be NUL-terminated there). */
void xpb_html_n(struct xpb_text *t, const char *s, size_t n);

/* xpb_html of at most the first `max` bytes of s, cut at a character boundary and then "..."
 * as U+2026 when it was longer: long free texts shown shortened, so that a page's size is
 * bounded by the number of texts it shows, not by their length. */
void xpb_html_cut(struct xpb_text *t, const char *s, size_t max);

/* Appends s percent-encoded for a URL query component (everything but A-Z a-z 0-9 - . _ ~). */
void xpb_url(struct xpb_text *t, const char *s);

/* The length (1..4) of the valid UTF-8 sequence at the start of s, of which n_left bytes may be
 * read (n_left >= 1), with its code point in *cp; 0 when it is not valid (a stray continuation
 * byte, a truncated sequence, an overlong form, a surrogate, above U+10FFFF). */
size_t xpb_utf8_decode(unsigned *cp, const char *s, size_t n_left);

/* The largest length <= max that does not end inside a UTF-8 sequence of s (strlen(s) when
 * that is smaller). */
size_t xpb_utf8_cut(const char *s, size_t max);

/* The bytes of the first max_chars characters of s (UTF-8; strlen(s) when it has fewer). */
size_t xpb_utf8_chars(const char *s, size_t max_chars);

#endif
