/* The database a command works on: where it is, the options that say so, and opening it (see
 * lb_cmd.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd/lb_cmd.h"
#include "store/lb_migrate.h"

/* Creates the data folder (mode 0700) when missing and writes the database file's path. */
static xpb_status data_dir(char *db_path, size_t cap, const char *dir, xpb_err *err)
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        if (errno != ENOENT || mkdir(dir, 0700) != 0)
            return xpb_err_set(err, XPB_IO_ERROR, "cannot create data folder %s: %s", dir,
                               strerror(errno));
    } else if (!S_ISDIR(st.st_mode)) {
        return xpb_err_set(err, XPB_IO_ERROR, "%s is not a folder", dir);
    }
    int n = snprintf(db_path, cap, "%s/%s", dir, LB_DB_FILE);
    if (n < 0 || (size_t)n >= cap)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "data folder path too long");
    return XPB_OK;
}

xpb_status lb_cmd_target(char *out, size_t cap, const char *data, const char *database,
                         xpb_err *err)
{
    if (!data == !database)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT,
                           "give either --data DIR (SQLite) or --database URL (PostgreSQL)");
    if (!database)
        return data_dir(out, cap, data, err);
    if (!lb_db_is_url(database))
        return xpb_err_set(err, XPB_INVALID_ARGUMENT,
                           "--database expects a postgresql:// URL (for SQLite, use --data DIR)");
    int n = snprintf(out, cap, "%s", database);
    if (n < 0 || (size_t)n >= cap)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "--database URL too long");
    return XPB_OK;
}

int lb_cmd_store_args(const char **data, const char **database, const char **rest, int *n_rest,
                      int max_rest, int argc, char **argv)
{
    *data = *database = NULL;
    *n_rest = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--data") && i + 1 < argc)
            *data = argv[++i];
        else if (!strcmp(argv[i], "--database") && i + 1 < argc)
            *database = argv[++i];
        else if (*n_rest < max_rest)
            rest[(*n_rest)++] = argv[i];
        else
            return 0;
    }
    return !*data != !*database;
}

xpb_status lb_cmd_open(struct lb_db **db, const char *data, const char *database, xpb_err *err)
{
    *db = NULL;
    char target[4096];
    xpb_status st = lb_cmd_target(target, sizeof target, data, database, err);
    if (st == XPB_OK)
        st = lb_db_open(db, target, err);
    if (st != XPB_OK)
        return st;
    st = lb_migrate(*db, err);
    if (st != XPB_OK) {
        lb_db_close(*db);
        *db = NULL;
    }
    return st;
}
