/* `migrate`: brings a store's schema up to the version this build expects and exits (lb_cmd.h,
 * docs/leaderboard.md, "Storage"). `serve` migrates too when it starts; this command lets a
 * deployment migrate once, before it starts several service processes. */
#include <stdio.h>

#include "cmd/lb_cmd.h"
#include "store/lb_migrate.h"

int lb_cmd_migrate(int argc, char **argv)
{
    int n = 0;
    const char *data, *database;
    if (argc > 16 || !lb_cmd_store_args(&data, &database, NULL, &n, 0, argc, argv)) {
        fprintf(stderr, "usage: xpubench-leaderboard migrate (--data DIR | --database URL)\n");
        return 2;
    }
    struct lb_db *db;
    xpb_err err;
    if (lb_cmd_open(&db, data, database, &err) != XPB_OK) {
        fprintf(stderr, "xpubench-leaderboard: %s\n", err.msg);
        return 1;
    }
    printf("database schema at version %d\n", lb_migrate_version(db));
    lb_db_close(db);
    return 0;
}
