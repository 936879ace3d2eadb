/* The service's subcommands, each with main()'s signature (argv[0] is the subcommand).
 * Exit codes: 0 success, 1 failure, 2 bad command line. */
#ifndef LB_CMD_H
#define LB_CMD_H

#include <stddef.h>

#include "base/errmsg.h"
#include "db/lb_db.h"

int lb_cmd_serve(int argc, char **argv);
int lb_cmd_token(int argc, char **argv);
int lb_cmd_migrate(int argc, char **argv);

/* The database a command works on, into out (cap bytes): `database` (a PostgreSQL URL) when
 * given, else the SQLite file in the folder `data` (created with mode 0700 when missing).
 * XPB_INVALID_ARGUMENT when both or neither are given, or `database` is not a PostgreSQL URL. */
xpb_status lb_cmd_target(char *out, size_t cap, const char *data, const char *database,
                         xpb_err *err);

/* The arguments of an administration command (`token`, `migrate`): --data DIR and --database
 * URL are taken out of argv[1..argc), the other arguments go to rest (at most max_rest, in
 * their order; *n_rest says how many). Returns 1 when exactly one of --data and --database is
 * there and the rest fits, 0 for a bad command line. */
int lb_cmd_store_args(const char **data, const char **database, const char **rest, int *n_rest,
                      int max_rest, int argc, char **argv);

/* Opens the database a command works on (lb_cmd_target) and brings its schema up to date
 * (lb_migrate). *db is owned by the caller: lb_db_close. The errors of lb_cmd_target, lb_db_open
 * and lb_migrate. */
xpb_status lb_cmd_open(struct lb_db **db, const char *data, const char *database, xpb_err *err);

#endif
