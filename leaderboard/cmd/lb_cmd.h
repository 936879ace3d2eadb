/* The service's subcommands, each with main()'s signature (argv[0] is the subcommand).
 * Exit codes: 0 success, 1 failure, 2 bad command line. */
#ifndef LB_CMD_H
#define LB_CMD_H

#include <stddef.h>

#include "base/errmsg.h"

int lb_cmd_serve(int argc, char **argv);
int lb_cmd_token(int argc, char **argv);
int lb_cmd_migrate(int argc, char **argv);

/* The database a command works on, into out (cap bytes): `database` (a PostgreSQL URL) when
 * given, else the SQLite file in the folder `data` (created with mode 0700 when missing).
 * XPB_INVALID_ARGUMENT when both or neither are given, or `database` is not a PostgreSQL URL. */
xpb_status lb_cmd_target(char *out, size_t cap, const char *data, const char *database,
                         xpb_err *err);

#endif
