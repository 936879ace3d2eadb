/* `token create|list|revoke` and `migrate`: administration on the data folder (lb_cmd.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "lb_auth.h"
#include "lb_cmd.h"
#include "lb_db.h"
#include "lb_migrate.h"

xpb_status lb_data_dir(char *db_path, size_t cap, const char *dir, xpb_err *err)
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

/* Finds --data DIR among argv and collects the other arguments into rest. */
static const char *take_data(int argc, char **argv, const char **rest, int *n_rest)
{
    const char *data = NULL;
    *n_rest = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--data") && i + 1 < argc)
            data = argv[++i];
        else
            rest[(*n_rest)++] = argv[i];
    }
    return data;
}

static int open_db(struct lb_db **db, const char *data)
{
    char path[4096];
    xpb_err err;
    if (lb_data_dir(path, sizeof path, data, &err) != XPB_OK ||
        lb_db_open(db, path, &err) != XPB_OK) {
        fprintf(stderr, "xpubench-leaderboard: %s\n", err.msg);
        return 0;
    }
    return 1;
}

int lb_cmd_token(int argc, char **argv)
{
    const char *rest[16];
    int n = 0;
    if (argc > 16) {
        fprintf(stderr, "xpubench-leaderboard token: too many arguments\n");
        return 2;
    }
    const char *data = take_data(argc, argv, rest, &n);
    int ok_args = data && n >= 1 &&
                  ((!strcmp(rest[0], "list") && n == 1) ||
                   ((!strcmp(rest[0], "create") || !strcmp(rest[0], "revoke")) && n == 2));
    if (!ok_args) {
        fprintf(stderr, "usage: xpubench-leaderboard token create NAME --data DIR\n"
                        "       xpubench-leaderboard token list --data DIR\n"
                        "       xpubench-leaderboard token revoke NAME --data DIR\n");
        return 2;
    }
    struct lb_db *db;
    if (!open_db(&db, data))
        return 1;
    xpb_err err;
    xpb_status st;
    if (!strcmp(rest[0], "create")) {
        char token[LB_TOKEN_LEN + 1];
        st = lb_auth_create(token, db, rest[1], &err);
        if (st == XPB_OK) {
            /* the only time the token is shown: stdout, so it can be piped to a secret store */
            printf("%s\n", token);
            fflush(stdout);
            fprintf(stderr,
                    "xpubench-leaderboard: created token '%s'. It is shown once and stored only "
                    "hashed: give it to the submitter, who sets XPB_UPLOAD_TOKEN to it.\n",
                    rest[1]);
            explicit_bzero(token, sizeof token);
        }
    } else if (!strcmp(rest[0], "revoke")) {
        st = lb_auth_revoke(db, rest[1], &err);
        if (st == XPB_OK)
            fprintf(stderr, "xpubench-leaderboard: revoked token '%s'\n", rest[1]);
    } else {
        st = lb_auth_list(stdout, db, &err);
    }
    lb_db_close(db);
    if (st != XPB_OK) {
        fprintf(stderr, "xpubench-leaderboard: %s\n", err.msg);
        return 1;
    }
    return 0;
}

int lb_cmd_migrate(int argc, char **argv)
{
    const char *rest[16];
    int n = 0;
    const char *data = argc <= 16 ? take_data(argc, argv, rest, &n) : NULL;
    if (!data || n != 0) {
        fprintf(stderr, "usage: xpubench-leaderboard migrate --data DIR\n");
        return 2;
    }
    struct lb_db *db;
    if (!open_db(&db, data))
        return 1;
    printf("database schema at version %d\n", lb_migrate_version(lb_db_handle(db)));
    lb_db_close(db);
    return 0;
}
