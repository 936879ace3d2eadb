/* Shared CLI pieces (see cli_common.h). */
#include "cli/cli_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/guard.h"
#include "render/terminal.h"

xpb_registry *xpb_cli_registry(int quiet)
{
    char **dirs = NULL;
    xpb_registry *r = NULL;
    xpb_err err = {{0}};
    if (xpb_registry_default_dirs(&dirs) != XPB_OK) {
        fprintf(stderr, "xpubench: cannot work out the plugin search path (out of memory)\n");
        return NULL;
    }
    size_t n = 0;
    while (dirs[n])
        n++;
    xpb_guard_activity("while loading plugins");
    xpb_status st = xpb_registry_load(&r, (const char *const *)dirs, n, &err);
    xpb_guard_activity(NULL);
    if (st != XPB_OK) {
        xpb_term_line(stderr, "xpubench: loading plugins: %s", err.msg);
        xpb_strv_free(dirs);
        return NULL;
    }
    if (!quiet)
        for (size_t i = 0; i < xpb_registry_problem_count(r); i++)
            xpb_term_line(stderr, "xpubench: warning: %s", xpb_registry_problem(r, i));
    if (xpb_registry_count(r) == 0) {
        fprintf(stderr, "xpubench: no plugins found; searched:");
        for (size_t i = 0; i < n; i++)
            fprintf(stderr, " %s", dirs[i]);
        fprintf(stderr, "%s (set XPB_PLUGIN_PATH to a folder of plugins)\n", n ? "" : " nothing");
    }
    xpb_strv_free(dirs);
    return r;
}

int xpb_cli_sets_add(xpb_cli_sets *s, const char *cmd, const char *kv)
{
    if (!kv || !strchr(kv, '=') || kv[0] == '=') {
        fprintf(stderr, "xpubench %s: --set needs key=value, found '%s'\n", cmd, kv ? kv : "");
        return -1;
    }
    const char **grown = realloc(s->items, (s->n + 1) * sizeof *grown);
    if (!grown) {
        fprintf(stderr, "xpubench %s: out of memory\n", cmd);
        return -1;
    }
    s->items = grown;
    s->items[s->n++] = kv;
    return 0;
}

void xpb_cli_sets_free(xpb_cli_sets *s)
{
    free(s->items);
    s->items = NULL;
    s->n = 0;
}
