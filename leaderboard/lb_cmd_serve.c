/* `serve`: runs the service until SIGINT or SIGTERM (lb_cmd.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lb_app.h"
#include "lb_cmd.h"
#include "lb_db.h"
#include "lb_migrate.h"
#include "lb_ratelimit.h"
#include "lb_server.h"

#define PEM_MAX (1 << 20)

struct serve_opts {
    const char *data, *cert, *key, *public_url;
    struct lb_server_opts server;
    size_t max_body;
    double rate_per_minute, rate_burst;
};

static void usage(FILE *f)
{
    fprintf(f, "usage: xpubench-leaderboard serve --data DIR [options]\n"
               "\n"
               "  --data DIR             folder of the database (created if missing)\n"
               "  --bind ADDR            address to listen on (default 127.0.0.1)\n"
               "  --port N               port (default 8443; 0 picks a free one)\n"
               "  --tls-cert FILE        PEM certificate chain: serve HTTPS\n"
               "  --tls-key FILE         PEM private key of the certificate\n"
               "                         (without both, plain HTTP on a loopback address only,\n"
               "                         for a TLS-terminating proxy in front)\n"
               "  --public-url URL       base URL for links in API answers (default: from Host)\n"
               "  --threads N            worker threads (default 4)\n"
               "  --max-connections N    open connections in total (default 256)\n"
               "  --max-per-ip N         open connections per client address (default 64)\n"
               "  --timeout SEC          idle connection timeout (default 30)\n"
               "  --max-body BYTES       largest upload accepted (default 4194304)\n"
               "  --rate-limit N         uploads per minute per token (default 120; 0 = off)\n"
               "  --rate-burst N         uploads a token may send at once (default 60)\n"
               "  --quiet                no access log on stderr\n");
}

static int parse_num(double *out, const char *opt, const char *s, double lo, double hi)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo && v <= hi)) {
        fprintf(stderr,
                "xpubench-leaderboard serve: %s expects a number from %g to %g, got "
                "'%s'\n",
                opt, lo, hi, s);
        return 0;
    }
    *out = v;
    return 1;
}

/* Returns 0 to go on, or an exit code. */
static int parse_args(struct serve_opts *o, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    o->server.bind = "127.0.0.1";
    o->server.port = 8443;
    o->server.threads = 4;
    o->server.max_connections = 256;
    o->server.max_per_ip = 64;
    o->server.timeout_s = 30;
    o->max_body = 4u << 20;
    o->rate_per_minute = 120;
    o->rate_burst = 60;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        double x;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return -1;
        }
        if (!strcmp(a, "--quiet")) {
            o->server.quiet = 1;
            continue;
        }
        if (!v || strncmp(a, "--", 2) != 0) {
            fprintf(stderr, "xpubench-leaderboard serve: %s '%s'\n",
                    strncmp(a, "--", 2) ? "unexpected argument" : "missing value for", a);
            return 2;
        }
        i++;
        if (!strcmp(a, "--data"))
            o->data = v;
        else if (!strcmp(a, "--bind"))
            o->server.bind = v;
        else if (!strcmp(a, "--tls-cert"))
            o->cert = v;
        else if (!strcmp(a, "--tls-key"))
            o->key = v;
        else if (!strcmp(a, "--public-url"))
            o->public_url = v;
        else if (!strcmp(a, "--port") && parse_num(&x, a, v, 0, 65535))
            o->server.port = (unsigned)x;
        else if (!strcmp(a, "--threads") && parse_num(&x, a, v, 1, 256))
            o->server.threads = (unsigned)x;
        else if (!strcmp(a, "--max-connections") && parse_num(&x, a, v, 1, 100000))
            o->server.max_connections = (unsigned)x;
        else if (!strcmp(a, "--max-per-ip") && parse_num(&x, a, v, 0, 100000))
            o->server.max_per_ip = (unsigned)x;
        else if (!strcmp(a, "--timeout") && parse_num(&x, a, v, 1, 3600))
            o->server.timeout_s = (unsigned)x;
        else if (!strcmp(a, "--max-body") && parse_num(&x, a, v, 1024, 256.0 * 1024 * 1024))
            o->max_body = (size_t)x;
        else if (!strcmp(a, "--rate-limit") && parse_num(&x, a, v, 0, 1e9))
            o->rate_per_minute = x;
        else if (!strcmp(a, "--rate-burst") && parse_num(&x, a, v, 1, 1e9))
            o->rate_burst = x;
        else {
            if (strcmp(a, "--port") && strcmp(a, "--threads") && strcmp(a, "--max-connections") &&
                strcmp(a, "--max-per-ip") && strcmp(a, "--timeout") && strcmp(a, "--max-body") &&
                strcmp(a, "--rate-limit") && strcmp(a, "--rate-burst"))
                fprintf(stderr, "xpubench-leaderboard serve: unknown option '%s'\n", a);
            return 2;
        }
    }
    if (!o->data) {
        fprintf(stderr, "xpubench-leaderboard serve: --data DIR is required\n");
        return 2;
    }
    if (!o->cert != !o->key) {
        fprintf(stderr, "xpubench-leaderboard serve: --tls-cert and --tls-key go together\n");
        return 2;
    }
    return 0;
}

/* Reads a PEM file into a malloc'ed NUL-terminated string (caller frees). */
static char *read_pem(const char *path, int warn_mode)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "xpubench-leaderboard: cannot open %s: %s\n", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (warn_mode && fstat(fileno(f), &st) == 0 && (st.st_mode & 077))
        fprintf(stderr,
                "xpubench-leaderboard: warning: private key %s is readable by others "
                "(chmod 600 it)\n",
                path);
    char *text = malloc(PEM_MAX + 1);
    size_t n = text ? fread(text, 1, PEM_MAX + 1, f) : 0;
    int bad = !text || ferror(f) || n > PEM_MAX || n == 0;
    fclose(f);
    if (bad) {
        fprintf(stderr,
                "xpubench-leaderboard: cannot read %s (empty, unreadable or over 1 "
                "MiB)\n",
                path);
        free(text);
        return NULL;
    }
    text[n] = '\0';
    return text;
}

int lb_cmd_serve(int argc, char **argv)
{
    struct serve_opts o;
    int rc = parse_args(&o, argc, argv);
    if (rc != 0)
        return rc < 0 ? 0 : rc;

    /* The signals that stop the service are waited for by this thread only: block them
     * before any other thread exists, so the server's threads inherit the mask. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);

    xpb_err err;
    char db_path[4096];
    char *cert = NULL, *key = NULL;
    struct lb_app app;
    memset(&app, 0, sizeof app);
    struct lb_server *server = NULL;
    rc = 1;
    if (lb_data_dir(db_path, sizeof db_path, o.data, &err) != XPB_OK) {
        fprintf(stderr, "xpubench-leaderboard: %s\n", err.msg);
        return 1;
    }
    if (o.cert && (!(cert = read_pem(o.cert, 0)) || !(key = read_pem(o.key, 1))))
        goto done_pem;
    if (lb_pool_open(&app.pool, db_path, (int)o.server.threads, &err) != XPB_OK) {
        fprintf(stderr, "xpubench-leaderboard: %s\n", err.msg);
        goto done_pem;
    }
    app.limiter = lb_ratelimit_new(o.rate_per_minute, o.rate_burst);
    app.public_url = o.public_url;
    app.max_body = o.max_body;
    if (!app.limiter) {
        fprintf(stderr, "xpubench-leaderboard: out of memory\n");
        goto done_app;
    }
    o.server.cert_pem = cert;
    o.server.key_pem = key;
    if (lb_server_start(&server, &app, &o.server, &err) != XPB_OK) {
        fprintf(stderr, "xpubench-leaderboard: %s\n", err.msg);
        goto done_app;
    }
    int v6 = strchr(o.server.bind, ':') != NULL;
    printf("xpubench-leaderboard: serving %s://%s%s%s:%u/ (data %s, schema version %d)\n",
           cert ? "https" : "http", v6 ? "[" : "", o.server.bind, v6 ? "]" : "",
           lb_server_port(server), o.data, lb_migrate_latest());
    fflush(stdout);

    int sig = 0;
    while (sigwait(&stop, &sig) != 0)
        ;
    fprintf(stderr, "xpubench-leaderboard: signal %d: stopping\n", sig);
    lb_server_stop(server);
    rc = 0;
done_app:
    lb_ratelimit_free(app.limiter);
    lb_pool_close(app.pool);
done_pem:
    if (key)
        explicit_bzero(key, strlen(key));
    free(cert);
    free(key);
    return rc;
}
