/* Number formatting for the pages: thousands separators, milliseconds, SI prefixes, bytes.
 * A NAN value prints as an em dash. Output is plain ASCII/UTF-8 that needs no escaping. */
#ifndef LB_FORMAT_H
#define LB_FORMAT_H

#include "text/lb_buf.h"

/* 1234567.891 with 1 decimal -> "1,234,567.9"; from 1e15 on in scientific notation
 * ("1.00e+63"). */
void lb_fmt_num(struct lb_buf *b, double v, int decimals);
/* Seconds as milliseconds with 3 significant digits: 0.01234 -> "12.3 ms". */
void lb_fmt_ms(struct lb_buf *b, double seconds);
/* 3 significant digits with an SI prefix: 1.5e12, "FLOP/s" -> "1.50 TFLOP/s". */
void lb_fmt_si(struct lb_buf *b, double v, const char *unit);
/* Bytes in binary units: "1.50 GiB". */
void lb_fmt_bytes(struct lb_buf *b, double bytes);
/* A ratio with its sign "x" (U+00D7) and three significant digits at most: "246x", "2.50x",
 * "0.0012x" (a small ratio never rounds to 0.00). */
void lb_fmt_ratio(struct lb_buf *b, double v);
/* A plain number for a data-v attribute (sort key): "%.9g", "" for NAN. */
void lb_fmt_key(struct lb_buf *b, double v);

#endif
