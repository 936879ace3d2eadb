/* How the report writes numbers: one formatting rule for every number of every format (HTML,
 * Markdown, CSV), so that a number reads the same everywhere and can be checked against the
 * JSON it came from: four significant digits, no exponent for the usual range, integers in
 * full. A value keeps the JSON's unit (seconds, bytes, fractions); its display unit scales it. */
#ifndef XPB_CORE_REPORT_FORMAT_H
#define XPB_CORE_REPORT_FORMAT_H

#include <stddef.h>

typedef enum xpb_unit {
    XPB_UNIT_NONE,      /* shown as is (a loss, R²) */
    XPB_UNIT_COUNT,     /* an integer shown in full (batch, threads, cores, steps) */
    XPB_UNIT_RATE,      /* samples/s */
    XPB_UNIT_SPEEDUP,   /* a ratio of speeds, shown with "×" by the writers */
    XPB_UNIT_MS,        /* seconds shown in milliseconds */
    XPB_UNIT_MIB,       /* bytes shown in MiB (2^20 bytes) */
    XPB_UNIT_GIB,       /* bytes shown in GiB (2^30 bytes) */
    XPB_UNIT_PERCENT,   /* a fraction shown in percent */
    XPB_UNIT_WATTS,     /* W */
    XPB_UNIT_JOULES,    /* J */
    XPB_UNIT_PER_JOULE, /* samples/J, the same number as samples/s/W */
    XPB_UNIT_GFLOPS,    /* FLOP/s shown in GFLOP/s */
    XPB_UNIT_COUNT_OF
} xpb_unit;

/* The factor from the JSON's unit to the display unit (1e3 for XPB_UNIT_MS ...). */
double xpb_unit_scale(xpb_unit u);

/* The display unit's name for column headers ("samples/s", "ms", "MiB", "%"); "" for
 * XPB_UNIT_NONE and XPB_UNIT_COUNT, "×" for XPB_UNIT_SPEEDUP. Static storage. */
const char *xpb_unit_name(xpb_unit u);

/* `v` with four significant digits: 0 -> "0"; 1234.5 -> "1235", 123.45 -> "123.5",
 * 1.2345 -> "1.234" (or "1.235", as the binary value rounds), 0.012345 -> "0.01235"; values of
 * 1000 and more without a fraction; below 0.001 or from 1e15 on, with an exponent
 * ("1.234e-04"); "nan" and "inf" for non-finite values. Always NUL-terminated. */
void xpb_report_format_number(char *buf, size_t size, double v);

/* `v` (in the JSON's unit) scaled to `u`'s display unit and formatted: integers in full for
 * XPB_UNIT_COUNT (rounded to the nearest), xpb_report_format_number otherwise. No unit text. */
void xpb_report_format_value(char *buf, size_t size, double v, xpb_unit u);

#endif
