/* Configurations of runs compared key by key (docs/results.md, "config"): which runs a
 * comparison pairs, which runs `xpubench compare` matches across two files, which runs the
 * report groups into a sweep. Keys are the schema's names ("batch", "backend", "optimizer",
 * "params", ...); "extra" is free-form and never compared. */
#ifndef XPB_CORE_RESULTS_VIEW_CONFIG_H
#define XPB_CORE_RESULTS_VIEW_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "results/view.h"

/* A version-1 document says nothing of the keys version 2 added to config; with this flag an
 * absent one equals its meaning (allow_emulated false, parallel "none", world_size 1), so that a
 * version-1 run matches the same run measured since. Without it an absent key equals only an
 * absent key. */
#define XPB_CONFIG_V1_DEFAULTS 1u

/* The i-th key of the schema's config in the order of docs/results.md (static), NULL past the
 * last: for listing the keys in which two configurations differ. */
const char *xpb_results_config_key(size_t i);

/* Whether `key` is a key of the schema's config (not "extra"). */
int xpb_results_config_known(const char *key);

/* Whether config c has `key` (a known key present in the document, or "extra"). */
int xpb_results_config_has(const struct xpb_results_config *c, const char *key);

/* Whether a and b agree on `key` (both absent agree); 0 for an unknown key. Numbers are equal
 * when their values are; maps (params) when they hold the same keys with the same values, in
 * any order; the optimizer when every member is. */
int xpb_results_config_same_key(const struct xpb_results_config *a,
                                const struct xpb_results_config *b, const char *key,
                                unsigned flags);

/* Whether a and b agree on every key but keys[0..n_keys). */
int xpb_results_config_same_except(const struct xpb_results_config *a,
                                   const struct xpb_results_config *b, const char *const *keys,
                                   size_t n_keys, unsigned flags);

/* The value of integer key `key` (batch, threads, device, ...); XPB_RESULTS_NO_INT when it is
 * absent or not an integer key. */
int64_t xpb_results_config_int(const struct xpb_results_config *c, const char *key);

#endif
