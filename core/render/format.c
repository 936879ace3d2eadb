/* Number formatting of the report (see report_format.h). */
#include "render/format.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const struct {
    double scale;
    const char *name;
} units[XPB_UNIT_COUNT_OF] = {
    [XPB_UNIT_NONE] = {1, ""},
    [XPB_UNIT_COUNT] = {1, ""},
    [XPB_UNIT_RATE] = {1, "samples/s"},
    [XPB_UNIT_SPEEDUP] = {1, "\xc3\x97"},
    [XPB_UNIT_MS] = {1e3, "ms"},
    [XPB_UNIT_MIB] = {1.0 / 1048576.0, "MiB"},
    [XPB_UNIT_GIB] = {1.0 / 1073741824.0, "GiB"},
    [XPB_UNIT_PERCENT] = {100, "%"},
    [XPB_UNIT_WATTS] = {1, "W"},
    [XPB_UNIT_JOULES] = {1, "J"},
    [XPB_UNIT_PER_JOULE] = {1, "samples/J"},
    [XPB_UNIT_GFLOPS] = {1e-9, "GFLOP/s"},
};

double xpb_unit_scale(xpb_unit u)
{
    return (unsigned)u < XPB_UNIT_COUNT_OF ? units[u].scale : 1;
}

const char *xpb_unit_name(xpb_unit u)
{
    return (unsigned)u < XPB_UNIT_COUNT_OF ? units[u].name : "";
}

void xpb_report_format_number(char *buf, size_t size, double v)
{
    double a = fabs(v);
    if (!isfinite(v)) {
        snprintf(buf, size, "%s", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
        return;
    }
    if (a == 0) {
        snprintf(buf, size, "0");
        return;
    }
    if (a < 1e-3 || a >= 1e15) {
        snprintf(buf, size, "%.3e", v);
        return;
    }
    if (a >= 1000) {
        snprintf(buf, size, "%.0f", v);
        return;
    }
    int decimals = 3 - (int)floor(log10(a));
    snprintf(buf, size, "%.*f", decimals, v);
    /* 9.9996 rounds to "10.000": one decade up, so one decimal fewer keeps four digits */
    if (decimals > 0 && fabs(strtod(buf, NULL)) >= pow(10, 4 - decimals))
        snprintf(buf, size, "%.*f", decimals - 1, v);
}

void xpb_report_format_value(char *buf, size_t size, double v, xpb_unit u)
{
    if (u == XPB_UNIT_COUNT && isfinite(v) && fabs(v) < 1e15) {
        snprintf(buf, size, "%.0f", v);
        return;
    }
    xpb_report_format_number(buf, size, v * xpb_unit_scale(u));
}
