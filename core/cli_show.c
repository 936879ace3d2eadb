/* `xpubench show FILE`: validates a results file and prints its table again. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "results.h"

int xpb_cli_show(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: xpubench show RESULTS.json\n\nValidates a results file against the "
               "schema (docs/results.md) and prints its table.\n");
        return XPB_EXIT_OK;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: xpubench show RESULTS.json\n");
        return XPB_EXIT_USAGE;
    }
    json_t *doc;
    xpb_err err = {{0}};
    if (xpb_results_load(&doc, argv[1], &err) != XPB_OK) {
        fprintf(stderr, "xpubench show: %s\n", err.msg);
        return XPB_EXIT_INPUT;
    }
    xpb_results_print_table(stdout, doc);
    json_decref(doc);
    return XPB_EXIT_OK;
}
