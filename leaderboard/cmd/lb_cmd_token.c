/* `token create|list|revoke`: the upload tokens of a store (lb_cmd.h, docs/leaderboard.md,
 * "Tokens"). */
#include <stdio.h>
#include <string.h>

#include "api/lb_auth.h"
#include "cmd/lb_cmd.h"

int lb_cmd_token(int argc, char **argv)
{
    const char *rest[16];
    int n = 0;
    if (argc > 16) {
        fprintf(stderr, "xpubench-leaderboard token: too many arguments\n");
        return 2;
    }
    const char *data, *database;
    int ok_args = lb_cmd_store_args(&data, &database, rest, &n, 16, argc, argv) && n >= 1 &&
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
    xpb_err err;
    xpb_status st = lb_cmd_open(&db, data, database, &err);
    if (st != XPB_OK) {
        fprintf(stderr, "xpubench-leaderboard: %s\n", err.msg);
        return 1;
    }
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
