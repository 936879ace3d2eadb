/* `xpubench show FILE [--profile [--top N]]`: validates a results file and prints its table
 * again, and on request the per-op profiles of the runs that recorded one. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "render/terminal.h"
#include "results/results.h"

#define SHOW_USAGE "usage: xpubench show RESULTS.json [--profile [--top N]]\n"

int xpb_cli_show(int argc, char **argv)
{
    const char *path = NULL;
    int profile = 0;
    unsigned top = 10;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf(SHOW_USAGE "\nValidates a results file against the schema (docs/results.md) "
                              "and prints its table.\n\n"
                              "  --profile  also print where each profiled run's step goes (runs "
                              "made with\n             profile: true): time per op kind, the "
                              "slowest ops, fused ops\n"
                              "  --top N    how many of the slowest ops to list (default 10)\n");
            return XPB_EXIT_OK;
        } else if (strcmp(argv[i], "--profile") == 0) {
            profile = 1;
        } else if (strcmp(argv[i], "--top") == 0) {
            char *end = NULL;
            unsigned long v = i + 1 < argc ? strtoul(argv[i + 1], &end, 10) : 0;
            if (i + 1 >= argc || !end || *end || argv[i + 1][0] == '-' || v > 100000) {
                fprintf(stderr, "xpubench show: --top expects a count 0..100000\n" SHOW_USAGE);
                return XPB_EXIT_USAGE;
            }
            top = (unsigned)v;
            i++;
        } else if (argv[i][0] == '-' || path) {
            xpb_term_line(stderr, "xpubench show: unexpected argument '%s'", argv[i]);
            fputs(SHOW_USAGE, stderr);
            return XPB_EXIT_USAGE;
        } else {
            path = argv[i];
        }
    }
    if (!path) {
        fprintf(stderr, SHOW_USAGE);
        return XPB_EXIT_USAGE;
    }
    json_t *doc;
    xpb_err err = {{0}};
    if (xpb_results_load(&doc, path, &err) != XPB_OK) {
        xpb_term_line(stderr, "xpubench show: %s", err.msg);
        return XPB_EXIT_INPUT;
    }
    xpb_results_print_table(stdout, doc);
    if (profile) {
        unsigned printed = 0;
        xpb_results_print_profiles(stdout, doc, top, &printed);
        if (!printed) {
            putchar('\n');
            xpb_term_line(stdout,
                          "no run in %s has a profile (run with profile: true on a backend that "
                          "keeps one)",
                          path);
        }
    }
    json_decref(doc);
    return XPB_EXIT_OK;
}
