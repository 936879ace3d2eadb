/* `xpubench validate SCENARIO [--set k=v]...`: parses a scenario, expands its sweeps and
 * checks every run against the loaded plugins, without running anything. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "render/terminal.h"
#include "cli/cli_common.h"
#include "base/names.h"
#include "scenario/scenario.h"
#include "scenario/scenario_check.h"
#include "scenario/scenario_guard.h"

int xpb_cli_validate(int argc, char **argv)
{
    const char *path = NULL;
    xpb_cli_sets sets = {0};
    int rc = XPB_EXIT_OK;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: xpubench validate SCENARIO.yaml [--set KEY=VALUE]...\n\n"
                   "Checks a scenario (keys, types, ranges, sweeps; docs/scenarios.md) and each\n"
                   "run's model, backend and model parameters against the loaded plugins.\n"
                   "Prints how many runs it expands to (and whether `run` needs --yes for\n"
                   "them) and the runs. Exit 0 when valid, 3 when not.\n\n");
            xpb_scenario_print_keys(stdout);
            xpb_cli_sets_free(&sets);
            return XPB_EXIT_OK;
        } else if (strcmp(argv[i], "--set") == 0 && i + 1 < argc) {
            if (xpb_cli_sets_add(&sets, "validate", argv[++i])) {
                xpb_cli_sets_free(&sets);
                return XPB_EXIT_USAGE;
            }
        } else if (argv[i][0] == '-' || path) {
            fprintf(stderr, "xpubench validate: unexpected argument '%s' (see --help)\n", argv[i]);
            xpb_cli_sets_free(&sets);
            return XPB_EXIT_USAGE;
        } else {
            path = argv[i];
        }
    }
    if (!path) {
        fprintf(stderr, "usage: xpubench validate SCENARIO.yaml [--set KEY=VALUE]...\n");
        xpb_cli_sets_free(&sets);
        return XPB_EXIT_USAGE;
    }
    xpb_scenario *s = NULL;
    xpb_err err = {{0}};
    xpb_status st = xpb_scenario_load(&s, path, sets.items, sets.n, &err);
    xpb_cli_sets_free(&sets);
    if (st) {
        xpb_term_line(stderr, "xpubench validate: %s", err.msg);
        return st == XPB_INVALID_ARGUMENT ? XPB_EXIT_USAGE : XPB_EXIT_INPUT;
    }
    xpb_registry *r = xpb_cli_registry(0);
    if (!r) {
        xpb_scenario_free(s);
        return XPB_EXIT_PLUGIN;
    }
    if ((st = xpb_scenario_check_plugins(s, r, &err))) {
        xpb_term_line(stderr, "xpubench validate: %s", err.msg);
        rc = st == XPB_NOT_FOUND ? XPB_EXIT_PLUGIN : XPB_EXIT_INPUT;
    } else {
        xpb_scenario_warn_backends(s, r, stderr);
        char size[160];
        printf("%s: valid scenario '%s', %s (sha256 %.12s)\n", path, s->name,
               xpb_scenario_size_text(size, sizeof size, s), s->sha256);
        if (xpb_scenario_guard(s, 0, &err) != XPB_OK)
            printf("  more than %zu runs: `xpubench run` starts them only with --yes (or set "
                   "max_runs: %zu in the scenario)\n",
                   xpb_scenario_run_limit(s), s->n_runs);
        for (size_t i = 0; i < s->n_runs; i++) {
            const xpb_run_config *c = &s->runs[i];
            printf("  %-40s %s/%s %s batch %u %s on %s\n", c->id, c->model,
                   c->variant ? c->variant : "default", xpb_mode_name(c->mode), c->batch,
                   xpb_precision_name(c->precision), c->backend);
        }
    }
    xpb_registry_free(r);
    xpb_scenario_free(s);
    return rc;
}
