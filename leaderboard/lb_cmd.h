/* The service's subcommands, each with main()'s signature (argv[0] is the subcommand).
 * Exit codes: 0 success, 1 failure, 2 bad command line. */
#ifndef LB_CMD_H
#define LB_CMD_H

#include <stddef.h>

#include "error.h"

int lb_cmd_serve(int argc, char **argv);
int lb_cmd_token(int argc, char **argv);
int lb_cmd_migrate(int argc, char **argv);

/* Creates the data folder (mode 0700) when missing and writes the database path into
 * db_path (cap bytes). */
xpb_status lb_data_dir(char *db_path, size_t cap, const char *dir, xpb_err *err);

#endif
