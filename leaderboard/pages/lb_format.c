/* Number formatting for the pages (see lb_format.h). */
#include "pages/lb_format.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define DASH "\xE2\x80\x94"

/* From this magnitude on, numbers print in scientific notation ("1.23e+63"): grouped digits
 * would be a wall, and would not fit the buffer. */
#define SCIENTIFIC_FROM 1e15

void lb_fmt_num(struct lb_buf *b, double v, int decimals)
{
    if (isnan(v) || isinf(v)) {
        lb_buf_puts(b, DASH);
        return;
    }
    if (fabs(v) >= SCIENTIFIC_FROM) {
        lb_buf_printf(b, "%.2e", v);
        return;
    }
    if (decimals < 0)
        decimals = 0;
    if (decimals > 9)
        decimals = 9;
    char digits[64];
    snprintf(digits, sizeof digits, "%.*f", decimals, fabs(v));
    char *dot = strchr(digits, '.');
    size_t int_len = dot ? (size_t)(dot - digits) : strlen(digits);
    if (v < 0 && strspn(digits, "0.") != strlen(digits))
        lb_buf_puts(b, "-");
    for (size_t i = 0; i < int_len; i++) {
        if (i > 0 && (int_len - i) % 3 == 0)
            lb_buf_puts(b, ",");
        lb_buf_add(b, &digits[i], 1);
    }
    if (dot)
        lb_buf_puts(b, dot);
}

/* Decimals that give 3 significant digits for |v| >= 1 (and 2 below 1). */
static int decimals_for(double v)
{
    double a = fabs(v);
    return a >= 100 ? 0 : a >= 10 ? 1 : 2;
}

void lb_fmt_ms(struct lb_buf *b, double seconds)
{
    if (isnan(seconds)) {
        lb_buf_puts(b, DASH);
        return;
    }
    double ms = seconds * 1e3;
    if (ms != 0 && fabs(ms) < 0.01)
        lb_buf_printf(b, "%.2g ms", ms);
    else {
        lb_fmt_num(b, ms, decimals_for(ms));
        lb_buf_puts(b, " ms");
    }
}

void lb_fmt_si(struct lb_buf *b, double v, const char *unit)
{
    if (isnan(v)) {
        lb_buf_puts(b, DASH);
        return;
    }
    static const char *const prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
    int p = 0;
    double a = fabs(v);
    while (a >= 1000 && p < 6) {
        a /= 1000;
        v /= 1000;
        p++;
    }
    lb_buf_printf(b, "%.*f %s%s", decimals_for(v), v, prefixes[p], unit);
}

void lb_fmt_bytes(struct lb_buf *b, double bytes)
{
    if (isnan(bytes)) {
        lb_buf_puts(b, DASH);
        return;
    }
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (bytes >= 1024 && u < 5) {
        bytes /= 1024;
        u++;
    }
    if (u == 0)
        lb_buf_printf(b, "%.0f B", bytes);
    else
        lb_buf_printf(b, "%.*f %s", decimals_for(bytes), bytes, units[u]);
}

void lb_fmt_ratio(struct lb_buf *b, double v)
{
    if (isnan(v) || isinf(v) || v < 0) {
        lb_buf_puts(b, DASH);
        return;
    }
    if (v >= 100 || v == 0)
        lb_fmt_num(b, v, 0);
    else if (v >= 0.01)
        lb_fmt_num(b, v, v >= 10 ? 1 : 2);
    else
        lb_buf_printf(b, "%.2g", v); /* 0.0012, never a ratio rounded to 0.00 */
    lb_buf_puts(b, "\xC3\x97");
}

void lb_fmt_key(struct lb_buf *b, double v)
{
    if (!isnan(v) && !isinf(v))
        lb_buf_printf(b, "%.9g", v);
}
