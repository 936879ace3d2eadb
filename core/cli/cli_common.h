/* Pieces every CLI subcommand shares. */
#ifndef XPB_CORE_CLI_COMMON_H
#define XPB_CORE_CLI_COMMON_H

#include <stddef.h>

#include "plugin/loader.h"

/* Loads the plugins of the default search path (loader.h). Load problems (a skipped plugin)
 * are printed to stderr as warnings unless `quiet`. Returns NULL (after printing why) only
 * when nothing could be loaded at all. Owned by the caller (xpb_registry_free). */
xpb_registry *xpb_cli_registry(int quiet);

/* Growable list of "--set key=value" strings pointing into argv. */
typedef struct xpb_cli_sets {
    const char **items;
    size_t n;
} xpb_cli_sets;

/* Appends `kv` (checked to contain '='); returns 0, or -1 after printing a usage error. */
int xpb_cli_sets_add(xpb_cli_sets *s, const char *cmd, const char *kv);
void xpb_cli_sets_free(xpb_cli_sets *s);

#endif
