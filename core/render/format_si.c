/* Numbers for web pages (see format_si.h). */
#include "render/format_si.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define DASH "\xE2\x80\x94"

/* From this magnitude on, numbers print in scientific notation ("1.23e+63"): grouped digits
 * would be a wall, and would not fit the buffer. */
#define SCIENTIFIC_FROM 1e15

void xpb_format_grouped(struct xpb_text *t, double v, int decimals)
{
    if (isnan(v) || isinf(v)) {
        xpb_text_puts(t, DASH);
        return;
    }
    if (fabs(v) >= SCIENTIFIC_FROM) {
        xpb_text_printf(t, "%.2e", v);
        return;
    }
    decimals = decimals < 0 ? 0 : decimals > 9 ? 9 : decimals;
    char digits[64];
    snprintf(digits, sizeof digits, "%.*f", decimals, fabs(v));
    char *dot = strchr(digits, '.');
    size_t int_len = dot ? (size_t)(dot - digits) : strlen(digits);
    if (v < 0 && strspn(digits, "0.") != strlen(digits))
        xpb_text_putc(t, '-');
    for (size_t i = 0; i < int_len; i++) {
        if (i > 0 && (int_len - i) % 3 == 0)
            xpb_text_putc(t, ',');
        xpb_text_putc(t, digits[i]);
    }
    if (dot)
        xpb_text_puts(t, dot);
}

/* Decimals that give 3 significant digits for |v| >= 1 (and 2 below 1). */
static int decimals_for(double v)
{
    double a = fabs(v);
    return a >= 100 ? 0 : a >= 10 ? 1 : 2;
}

void xpb_format_ms(struct xpb_text *t, double seconds)
{
    if (isnan(seconds)) {
        xpb_text_puts(t, DASH);
        return;
    }
    double ms = seconds * 1e3;
    if (ms != 0 && fabs(ms) < 0.01) {
        xpb_text_printf(t, "%.2g ms", ms);
        return;
    }
    xpb_format_grouped(t, ms, decimals_for(ms));
    xpb_text_puts(t, " ms");
}

void xpb_format_si(struct xpb_text *t, double v, const char *unit)
{
    static const char *const prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
    if (isnan(v)) {
        xpb_text_puts(t, DASH);
        return;
    }
    int p = 0;
    while (fabs(v) >= 1000 && p < 6) {
        v /= 1000;
        p++;
    }
    xpb_text_printf(t, "%.*f %s%s", decimals_for(v), v, prefixes[p], unit);
}

void xpb_format_bytes(struct xpb_text *t, double bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    if (isnan(bytes)) {
        xpb_text_puts(t, DASH);
        return;
    }
    int u = 0;
    while (bytes >= 1024 && u < 5) {
        bytes /= 1024;
        u++;
    }
    if (u == 0)
        xpb_text_printf(t, "%.0f B", bytes);
    else
        xpb_text_printf(t, "%.*f %s", decimals_for(bytes), bytes, units[u]);
}

void xpb_format_ratio(struct xpb_text *t, double v)
{
    if (isnan(v) || isinf(v) || v < 0) {
        xpb_text_puts(t, DASH);
        return;
    }
    if (v >= 100 || v == 0)
        xpb_format_grouped(t, v, 0);
    else if (v >= 0.01)
        xpb_format_grouped(t, v, v >= 10 ? 1 : 2);
    else
        xpb_text_printf(t, "%.2g", v); /* 0.0012, never a ratio rounded to 0.00 */
    xpb_text_puts(t, "\xC3\x97");
}

void xpb_format_key(struct xpb_text *t, double v)
{
    if (!isnan(v) && !isinf(v))
        xpb_text_printf(t, "%.9g", v);
}
