/* The CLI: one file per subcommand (cli_<name>.c), each an entry point with main()'s
 * signature (argv[0] is the subcommand name). Exit codes are the same everywhere: */
#ifndef XPB_CORE_CLI_H
#define XPB_CORE_CLI_H

enum {
    XPB_EXIT_OK = 0,            /* success */
    XPB_EXIT_FAILURE = 1,       /* the command ran and found a failure (run failed, check failed) */
    XPB_EXIT_USAGE = 2,         /* bad command line */
    XPB_EXIT_INPUT = 3,         /* bad input file (scenario, results) */
    XPB_EXIT_PLUGIN = 4,        /* a named plugin is missing or unusable */
    XPB_EXIT_UNSUPPORTED = 6,   /* run: a run was unsupported (backend absent or refused, no
                                   device) and its scenario did not say allow_unsupported */
    XPB_EXIT_PLUGIN_CRASH = 5,  /* a plugin crashed (fatal signal in one of its entry points);
                                   stderr names it, finished rows and runs were kept */
    XPB_EXIT_NO_MATCH = 7,      /* compare: no run of NEW has the configuration of a run of
                                   OLD, so nothing was compared */
    XPB_EXIT_INTERRUPTED = 130, /* stopped by Ctrl-C; finished runs were written */
};

int xpb_cli_list(int argc, char **argv);
int xpb_cli_info(int argc, char **argv);
int xpb_cli_validate(int argc, char **argv);
int xpb_cli_run(int argc, char **argv);
int xpb_cli_show(int argc, char **argv);
int xpb_cli_upload(int argc, char **argv);
int xpb_cli_conformance(int argc, char **argv);
int xpb_cli_report(int argc, char **argv);  /* exit 0 written, 1 not written, 2, 3 */
int xpb_cli_compare(int argc, char **argv); /* exit 0 no regression, 1 a regression, 2, 3 */

#endif
