/* "Did you mean ...?": the closest known word to a typo, and the message for an unknown run
 * key (a typo'd key is always an error, never silently ignored). Internal to core/scenario. */
#ifndef XPB_CORE_SCENARIO_SUGGEST_H
#define XPB_CORE_SCENARIO_SUGGEST_H

#include <stddef.h>

#include "base/errmsg.h"

/* The candidate closest to `word` (len bytes) by edit distance (insertions, deletions,
 * substitutions and swaps of neighbours) when that distance is at most 2, else NULL. Returns
 * one of the candidates (not a copy). */
const char *xpb_suggest(const char *word, size_t len, const char *const *candidates, size_t n);

/* Sets "<where>: expected a run key, found 'bach' (did you mean 'batch'?)" or, without a
 * close match, the list of the allowed keys, and returns `status`. `where` is already
 * formatted; `with_label`: `name` is allowed there (a run); `for_set`: a --set option, where
 * `params` is spelled params.<name>. */
xpb_status xpb_skey_unknown(xpb_err *err, xpb_status status, const char *where, const char *text,
                            size_t len, int with_label, int for_set);

#endif
