/* The strict decimal spellings of scenario numbers (docs/scenarios.md, "Values"): what a run
 * key's value (scenario_convert.c) and the ends and factor of a range (scenario_range.c) may
 * be. Internal to core/scenario. */
#ifndef XPB_CORE_SCENARIO_SCALAR_H
#define XPB_CORE_SCENARIO_SCALAR_H

#include <stdint.h>

/* Strict decimal integer: [+-]?[0-9]+ . *out receives its magnitude; *negative is set for a
 * '-' sign with a non-zero value, *overflow when the magnitude does not fit in 64 bits.
 * Returns 0 when the syntax is wrong. */
int xpb_scalar_integer(const char *s, uint64_t *out, int *negative, int *overflow);

/* Strict decimal number: [+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?, read by
 * strtod (so it may be infinite: the caller checks). Returns 0 when the syntax is wrong. */
int xpb_scalar_number(const char *s, double *out);

#endif
