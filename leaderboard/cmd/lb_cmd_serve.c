/* `serve`: runs the service until SIGINT or SIGTERM (lb_cmd.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd/lb_cmd.h"
#include "pages/lb_page_cache.h"
#include "server/lb_memory.h"
#include "server/lb_server.h"
#include "service/lb_app.h"
#include "store/lb_migrate.h"

#define PEM_MAX (1 << 20)

struct serve_opts {
    const char *data, *database, *cert, *key, *public_url;
    struct lb_server_opts server;
    double max_body, upload_memory, answer_memory, max_runs, per_day, page_cache;
    double rate_per_minute, rate_burst;
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: xpubench-leaderboard serve (--data DIR | --database URL) [options]\n"
            "\n"
            "  --data DIR             folder of the SQLite database (created if missing)\n"
            "  --database URL         a PostgreSQL database instead (postgresql://...; keep\n"
            "                         passwords out of it: peer authentication or ~/.pgpass)\n"
            "  --bind ADDR            address to listen on (default 127.0.0.1)\n"
            "  --port N               port (default 8443; 0 picks a free one)\n"
            "  --tls-cert FILE        PEM certificate chain: serve HTTPS\n"
            "  --tls-key FILE         PEM private key of the certificate\n"
            "                         (without both, plain HTTP on a loopback address only,\n"
            "                         for a TLS-terminating proxy in front)\n"
            "  --public-url URL       base URL for links in API answers (default: from Host)\n"
            "  --threads N            worker threads (default 4)\n"
            "  --max-connections N    connections kept at once; the oldest idle ones make\n"
            "                         room for new clients (default 256)\n"
            "  --max-per-ip N         open connections per client address (default 64)\n"
            "  --timeout SEC          idle connection timeout (default 30)\n"
            "  --head-timeout SEC     a request's head must arrive within (default 10)\n"
            "  --request-timeout SEC  its head and body, and its answer, within (default 60)\n"
            "  --max-body BYTES       largest upload accepted (default 4194304)\n"
            "  --upload-memory BYTES  upload bodies held at once (default 67108864)\n"
            "  --answer-memory BYTES  answers being sent, held at once (default 67108864)\n"
            "  --max-runs N           runs per submission (default 256)\n"
            "  --max-per-day N        new submissions per token per 24 h (default 100; 0 = off)\n"
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

/* The numeric options: name, where the value goes, and its range. */
struct num_option {
    const char *name;
    double *slot;
    double lo, hi;
};

/* The text options: name and where the value goes. */
struct text_option {
    const char *name;
    const char **slot;
};

static void defaults(struct serve_opts *o, double *n)
{
    memset(o, 0, sizeof *o);
    o->server.bind = "127.0.0.1";
    o->max_body = LB_DEFAULT_MAX_BODY;
    o->upload_memory = LB_DEFAULT_UPLOAD_MEMORY;
    o->answer_memory = LB_DEFAULT_ANSWER_MEMORY;
    o->max_runs = LB_DEFAULT_MAX_RUNS;
    o->per_day = LB_DEFAULT_PER_DAY;
    o->rate_per_minute = 120;
    o->rate_burst = 60;
    o->page_cache = 2;
    o->server.head_timeout = 10;
    o->server.request_timeout = 60;
    o->server.renders = LB_RENDERS;
    o->server.render_queue = LB_RENDER_QUEUE;
    o->server.render_nice = LB_RENDER_NICE;
    o->server.render_wait = LB_RENDER_WAIT;
    n[0] = 8443; /* port */
    n[1] = 4;    /* threads */
    n[2] = 256;  /* connections */
    n[3] = 64;   /* per address */
    n[4] = 30;   /* idle timeout */
}

/* One option and its value; returns 0 to go on, or an exit code. */
static int one_option(struct serve_opts *o, double *n, const char *a, const char *v)
{
    const struct text_option texts[] = {
        {"--data", &o->data},     {"--database", &o->database}, {"--bind", &o->server.bind},
        {"--tls-cert", &o->cert}, {"--tls-key", &o->key},       {"--public-url", &o->public_url},
    };
    const struct num_option nums[] = {
        {"--port", &n[0], 0, 65535},
        {"--threads", &n[1], 1, 256},
        {"--max-connections", &n[2], 1, 100000},
        {"--max-per-ip", &n[3], 0, 100000},
        {"--timeout", &n[4], 1, 3600},
        {"--head-timeout", &o->server.head_timeout, 0.5, 3600},
        {"--request-timeout", &o->server.request_timeout, 1, 3600},
        {"--max-body", &o->max_body, 1024, 256.0 * 1024 * 1024},
        {"--upload-memory", &o->upload_memory, 1024, 64.0 * 1024 * 1024 * 1024},
        {"--answer-memory", &o->answer_memory, 1024, 64.0 * 1024 * 1024 * 1024},
        {"--max-runs", &o->max_runs, 1, 100000},
        {"--max-per-day", &o->per_day, 0, 1e9},
        {"--rate-limit", &o->rate_per_minute, 0, 1e9},
        {"--rate-burst", &o->rate_burst, 1, 1e9},
        {"--page-cache", &o->page_cache, 0, 3600},
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        if (!strcmp(a, texts[i].name)) {
            *texts[i].slot = v;
            return 0;
        }
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
        if (!strcmp(a, nums[i].name))
            return parse_num(nums[i].slot, a, v, nums[i].lo, nums[i].hi) ? 0 : 2;
    fprintf(stderr, "xpubench-leaderboard serve: unknown option '%s'\n", a);
    return 2;
}

/* Returns 0 to go on, -1 after --help, or an exit code. */
static int parse_args(struct serve_opts *o, int argc, char **argv)
{
    double n[5];
    defaults(o, n);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
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
        int rc = one_option(o, n, a, v);
        if (rc)
            return rc;
    }
    o->server.port = (unsigned)n[0];
    o->server.threads = (unsigned)n[1];
    o->server.max_connections = (unsigned)n[2];
    o->server.max_per_ip = (unsigned)n[3];
    o->server.timeout_s = (unsigned)n[4];
    o->server.answer_memory = (size_t)o->answer_memory;
    if (!o->data == !o->database) {
        fprintf(stderr, "xpubench-leaderboard serve: give --data DIR (SQLite) or --database URL "
                        "(PostgreSQL)\n");
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

/* The application context from the options: database pool, limiters, bounds. 0 on failure
 * (said on stderr); close_app undoes what was done either way. */
static int open_app(struct lb_app *app, const struct serve_opts *o)
{
    char target[4096];
    xpb_err err;
    memset(app, 0, sizeof *app);
    if (lb_cmd_target(target, sizeof target, o->data, o->database, &err) != XPB_OK ||
        lb_pool_open(&app->pool, target, (int)(o->server.threads + o->server.renders), &err) !=
            XPB_OK) {
        fprintf(stderr, "xpubench-leaderboard: %s\n", err.msg);
        return 0;
    }
    app->limiter = lb_ratelimit_new(o->rate_per_minute, o->rate_burst);
    app->uploads = lb_budget_new((size_t)o->upload_memory);
    if (o->page_cache > 0)
        app->pages = lb_page_cache_new(LB_PAGE_CACHE_BYTES, o->page_cache);
    if (!app->limiter || !app->uploads || (o->page_cache > 0 && !app->pages)) {
        fprintf(stderr, "xpubench-leaderboard: out of memory\n");
        return 0;
    }
    app->public_url = o->public_url;
    app->max_body = (size_t)o->max_body;
    app->submit.max_runs = (size_t)o->max_runs;
    app->submit.max_per_day = (long long)o->per_day;
    app->bounds = (struct lb_shown_bounds){o->server.max_connections, o->server.max_per_ip,
                                           o->server.head_timeout,    o->server.request_timeout,
                                           (size_t)o->upload_memory,  (size_t)o->answer_memory,
                                           o->rate_per_minute,        o->rate_burst};
    /* a large answer must leave a quarter of the budget: the largest one must fit in the rest */
    if (o->answer_memory / 4 * 3 < (double)lb_answer_limit(app)) {
        fprintf(stderr,
                "xpubench-leaderboard serve: --answer-memory must be at least %.0f bytes (4/3 "
                "of the largest answer, %zu bytes with this --max-body)\n",
                (double)lb_answer_limit(app) / 3 * 4 + 4, lb_answer_limit(app));
        return 0;
    }
    return 1;
}

static void close_app(struct lb_app *app)
{
    lb_page_cache_free(app->pages);
    lb_budget_free(app->uploads);
    lb_ratelimit_free(app->limiter);
    lb_pool_close(app->pool);
}

/* Blocks until SIGINT or SIGTERM (blocked in every thread, waited for here). */
static void wait_for_stop(const sigset_t *stop)
{
    int sig = 0;
    while (sigwait(stop, &sig) != 0)
        ;
    fprintf(stderr, "xpubench-leaderboard: signal %d: stopping\n", sig);
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

    lb_memory_tune(); /* before any thread starts */
    xpb_err err;
    char *cert = NULL, *key = NULL;
    struct lb_app app;
    struct lb_server *server = NULL;
    rc = 1;
    if (o.cert && (!(cert = read_pem(o.cert, 0)) || !(key = read_pem(o.key, 1))))
        goto done_pem;
    if (!open_app(&app, &o))
        goto done_app;
    o.server.cert_pem = cert;
    o.server.key_pem = key;
    if (lb_server_start(&server, &app, &o.server, &err) != XPB_OK) {
        fprintf(stderr, "xpubench-leaderboard: %s\n", err.msg);
        goto done_app;
    }
    int v6 = strchr(o.server.bind, ':') != NULL;
    printf("xpubench-leaderboard: serving %s://%s%s%s:%u/ (%s%s, schema version %d)\n",
           cert ? "https" : "http", v6 ? "[" : "", o.server.bind, v6 ? "]" : "",
           lb_server_port(server), o.data ? "data " : "PostgreSQL database", o.data ? o.data : "",
           lb_migrate_latest());
    fflush(stdout);
    wait_for_stop(&stop);
    lb_server_stop(server);
    rc = 0;
done_app:
    close_app(&app);
done_pem:
    if (key)
        explicit_bzero(key, strlen(key));
    free(cert);
    free(key);
    return rc;
}
