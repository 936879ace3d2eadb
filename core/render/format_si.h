/* Numbers for web pages, written into a text buffer: thousands separators, milliseconds, SI
 * prefixes, binary units and ratios (the leaderboard's tables and charts). A NaN prints as an
 * em dash. The output is plain ASCII/UTF-8 that needs no escaping. The report writes its
 * numbers by the four-digit rule of format.h instead, which keeps them checkable against the
 * file. */
#ifndef XPB_CORE_RENDER_FORMAT_SI_H
#define XPB_CORE_RENDER_FORMAT_SI_H

#include "render/text.h"

/* 1234567.891 with 1 decimal -> "1,234,567.9" (decimals clamped to 0..9); from 1e15 on in
 * scientific notation ("1.00e+63"). */
void xpb_format_grouped(struct xpb_text *t, double v, int decimals);

/* Seconds as milliseconds with 3 significant digits: 0.01234 -> "12.3 ms". */
void xpb_format_ms(struct xpb_text *t, double seconds);

/* 3 significant digits with an SI prefix: 1.5e12, "FLOP/s" -> "1.50 TFLOP/s". */
void xpb_format_si(struct xpb_text *t, double v, const char *unit);

/* Bytes in binary units: "1.50 GiB", "512 B". */
void xpb_format_bytes(struct xpb_text *t, double bytes);

/* A ratio with its sign U+00D7 and three significant digits at most: "246×", "2.50×",
 * "0.0012×" (a small ratio never rounds to 0.00); an em dash for a negative one. */
void xpb_format_ratio(struct xpb_text *t, double v);

/* A plain number for a sort key (an HTML data attribute): "%.9g", nothing for NaN or
 * infinity. */
void xpb_format_key(struct xpb_text *t, double v);

#endif
