/* xpubench-leaderboard: the community leaderboard service (docs/leaderboard.md).
 *   serve   run the HTTPS service on a data folder
 *   token   create, list or revoke upload tokens
 *   migrate create or update the database and exit */
#include <stdio.h>
#include <string.h>

#include "cmd/lb_cmd.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: xpubench-leaderboard serve --data DIR [--port N] [--bind ADDR]\n"
               "                                  [--tls-cert FILE --tls-key FILE] [options]\n"
               "       xpubench-leaderboard token create NAME --data DIR\n"
               "       xpubench-leaderboard token list --data DIR\n"
               "       xpubench-leaderboard token revoke NAME --data DIR\n"
               "       xpubench-leaderboard migrate --data DIR\n"
               "\n"
               "`xpubench-leaderboard serve --help` lists the service's options.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "serve"))
        return lb_cmd_serve(argc - 1, argv + 1);
    if (!strcmp(cmd, "token"))
        return lb_cmd_token(argc - 1, argv + 1);
    if (!strcmp(cmd, "migrate"))
        return lb_cmd_migrate(argc - 1, argv + 1);
    if (!strcmp(cmd, "--version")) {
        printf("xpubench-leaderboard %s\n", XPB_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "xpubench-leaderboard: unknown command '%s'\n", cmd);
    usage(stderr);
    return 2;
}
