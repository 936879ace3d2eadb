/* xpubench: the command-line entry point. Dispatches to one subcommand per file (cli_*.c). */
#include <stdio.h>
#include <string.h>

#include <xpubench/xpubench.h>

#include "cli/cli.h"
#include "plugin/guard.h"
#include "plugin/log.h"
#include "program/plugin_calls.h"

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *summary;
} commands[] = {
    {"list", xpb_cli_list, "list the backend and model plugins that loaded"},
    {"info", xpb_cli_info, "show a model: parameters, FLOPs, layers with shapes"},
    {"validate", xpb_cli_validate, "check a scenario file without running it"},
    {"run", xpb_cli_run, "run a scenario and write a results file"},
    {"show", xpb_cli_show, "print the table of a results file"},
    {"report", xpb_cli_report, "turn results files into an HTML, Markdown or CSV report"},
    {"compare", xpb_cli_compare, "what got faster or slower between two results files"},
    {"conformance", xpb_cli_conformance, "check a backend against the reference backend"},
    {"upload", xpb_cli_upload, "publish a results file to the leaderboard"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: xpubench [-v|--verbose] COMMAND [ARGS...]\n\n"
               "Benchmarks deep-learning training and inference on any processor.\n\n"
               "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
    fprintf(f,
            "\n`xpubench COMMAND --help` tells more. Plugins are searched in <exe dir>/plugins,\n"
            "$XPB_PLUGIN_PATH (colon-separated) and the install folder.\n"
            "Exit codes: 0 ok, 1 a run or check failed, 2 usage, 3 bad input file,\n"
            "4 plugin missing or unusable, 5 a plugin crashed (stderr names it),\n"
            "130 interrupted (finished runs are kept).\n");
}

int main(int argc, char **argv)
{
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "-v") == 0 || strcmp(argv[i], "--verbose") == 0) {
            xpb_log_set_level(XPB_LOG_DEBUG);
        } else if (strcmp(argv[i], "--version") == 0) {
            printf("xpubench %s (plugin ABI %d.%d, op set %d)\n", XPB_VERSION, XPB_ABI_MAJOR,
                   XPB_ABI_MINOR, XPB_OPSET_VERSION);
            return XPB_EXIT_OK;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return XPB_EXIT_OK;
        } else {
            fprintf(stderr, "xpubench: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return XPB_EXIT_USAGE;
        }
    }
    if (i >= argc) {
        usage(stderr);
        return XPB_EXIT_USAGE;
    }
    /* A fatal signal inside a plugin's entry point is named and exits 5 (plugin/guard.h). */
    if (xpb_guard_install(XPB_EXIT_PLUGIN_CRASH) != 0)
        fprintf(stderr, "xpubench: warning: crashes of plugins will not be named (sigaction)\n");
    xpb_program_observe_calls(xpb_guard_call);
    for (size_t c = 0; c < sizeof commands / sizeof *commands; c++)
        if (strcmp(argv[i], commands[c].name) == 0)
            return commands[c].fn(argc - i, argv + i);
    fprintf(stderr, "xpubench: unknown command '%s'\n\n", argv[i]);
    usage(stderr);
    return XPB_EXIT_USAGE;
}
