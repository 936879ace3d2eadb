/* `token create|list|revoke` and `migrate`: administration of a store (lb_cmd.h). */
#include <stdio.h>
#include <string.h>

#include "api/lb_auth.h"
#include "cmd/lb_cmd.h"
#include "db/lb_db.h"
#include "store/lb_migrate.h"

/* Finds --data DIR and --database URL among argv and collects the other arguments into rest.
 * Returns 0 when neither or both are there. */
static int take_store(const char **data, const char **database, int argc, char **argv,
                      const char **rest, int *n_rest)
{
    *data = *database = NULL;
    *n_rest = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--data") && i + 1 < argc)
            *data = argv[++i];
        else if (!strcmp(argv[i], "--database") && i + 1 < argc)
            *database = argv[++i];
        else
            rest[(*n_rest)++] = argv[i];
    }
    return !*data != !*database;
}

/* Opens the store and brings its schema up to date. */
static int open_db(struct lb_db **db, const char *data, const char *database)
{
    char target[4096];
    xpb_err err;
    if (lb_cmd_target(target, sizeof target, data, database, &err) != XPB_OK ||
        lb_db_open(db, target, &err) != XPB_OK) {
        fprintf(stderr, "xpubench-leaderboard: %s\n", err.msg);
        return 0;
    }
    if (lb_migrate(*db, &err) != XPB_OK) {
        fprintf(stderr, "xpubench-leaderboard: %s\n", err.msg);
        lb_db_close(*db);
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
    const char *data, *database;
    int ok_args = take_store(&data, &database, argc, argv, rest, &n) && n >= 1 &&
                  ((!strcmp(rest[0], "list") && n == 1) ||
                   ((!strcmp(rest[0], "create") || !strcmp(rest[0], "revoke")) && n == 2));
    if (!ok_args) {
        fprintf(stderr,
                "usage: xpubench-leaderboard token create NAME (--data DIR | --database URL)\n"
                "       xpubench-leaderboard token list (--data DIR | --database URL)\n"
                "       xpubench-leaderboard token revoke NAME (--data DIR | --database "
                "URL)\n");
        return 2;
    }
    struct lb_db *db;
    if (!open_db(&db, data, database))
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
    const char *data, *database;
    if (argc > 16 || !take_store(&data, &database, argc, argv, rest, &n) || n != 0) {
        fprintf(stderr, "usage: xpubench-leaderboard migrate (--data DIR | --database URL)\n");
        return 2;
    }
    struct lb_db *db;
    if (!open_db(&db, data, database))
        return 1;
    printf("database schema at version %d\n", lb_migrate_version(db));
    lb_db_close(db);
    return 0;
}
