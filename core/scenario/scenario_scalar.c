/* Strict decimal numbers of scenarios (scenario_scalar.h). */
#include "scenario/scenario_scalar.h"

#include <errno.h>
#include <stdlib.h>

int xpb_scalar_integer(const char *s, uint64_t *out, int *negative, int *overflow)
{
    int neg = 0;
    uint64_t v = 0;
    *overflow = 0;
    if (*s == '+' || *s == '-')
        neg = *s++ == '-';
    if (*s == '\0')
        return 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return 0;
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            *overflow = 1;
        else
            v = v * 10 + d;
    }
    *negative = neg && v != 0;
    *out = v;
    return 1;
}

int xpb_scalar_number(const char *s, double *out)
{
    const char *p = s;
    int digits = 0;
    if (*p == '+' || *p == '-')
        p++;
    while (*p >= '0' && *p <= '9')
        p++, digits++;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9')
            p++, digits++;
    }
    if (!digits)
        return 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            return 0;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p)
        return 0;
    errno = 0;
    *out = strtod(s, NULL);
    return 1;
}
