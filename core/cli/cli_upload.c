/* `xpubench upload`: publishes results files to a leaderboard, spooling what cannot be sent
 * (see upload.h for the transport, spool.h for the spool and docs/upload.md for the user's
 * guide). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "results/results.h"
#include "publish/spool.h"
#include "publish/upload.h"
#include "render/terminal.h"

#define TOKEN_ENV "XPB_UPLOAD_TOKEN"
#define SERVER_ENV "XPB_UPLOAD_SERVER"

struct upload_cli {
    const char *server; /* --server or $XPB_UPLOAD_SERVER; NULL if neither */
    const char *cacert;
    int flush, list, no_spool;
    struct xpb_upload_opts opts;
    const char **files;
    int n_files;
    char spool[4096];
};

static void usage(FILE *f)
{
    fprintf(f, "usage: xpubench upload FILE... [--server URL] [--cacert FILE] [options]\n"
               "       xpubench upload --flush [--server URL] [--cacert FILE] [options]\n"
               "       xpubench upload --list\n"
               "\n"
               "Publishes results files to a leaderboard over HTTPS. Results that cannot be\n"
               "delivered wait in the spool ($XDG_DATA_HOME/xpubench/spool) until --flush.\n"
               "\n"
               "  --server URL            leaderboard base URL, https:// only\n"
               "                          (default: $" SERVER_ENV ")\n"
               "  --cacert FILE           trust the CA certificates in FILE (PEM) instead of\n"
               "                          the system's (private deployments)\n"
               "  --flush                 send everything waiting in the spool\n"
               "  --list                  show what is waiting in the spool\n"
               "  --retries N             retries after the first attempt (default 4)\n"
               "  --connect-timeout SEC   per attempt (default 10)\n"
               "  --timeout SEC           per attempt, whole exchange (default 60)\n"
               "  --no-spool              do not keep undelivered results in the spool\n"
               "\n"
               "The bearer token comes from $" TOKEN_ENV " only.\n");
}

/* Parses a non-negative integer option value within [lo, hi]. */
static int parse_long(long *out, const char *opt, const char *s, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        xpb_term_line(stderr,
                      "xpubench upload: %s expects a whole number from %ld to %ld, got '%s'", opt,
                      lo, hi, s);
        return 0;
    }
    *out = v;
    return 1;
}

/* Fills *c from argv; returns XPB_EXIT_OK, or the exit code to stop with. */
static int parse_args(struct upload_cli *c, int argc, char **argv)
{
    xpb_upload_opts_init(&c->opts);
    c->server = getenv(SERVER_ENV);
    if (c->server && !*c->server)
        c->server = NULL;
    c->files = calloc((size_t)argc, sizeof *c->files);
    if (!c->files)
        return XPB_EXIT_FAILURE;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        long v;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return -1;
        } else if (!strcmp(a, "--flush")) {
            c->flush = 1;
        } else if (!strcmp(a, "--list")) {
            c->list = 1;
        } else if (!strcmp(a, "--no-spool")) {
            c->no_spool = 1;
        } else if (!strcmp(a, "--token") || !strncmp(a, "--token=", 8)) {
            fprintf(stderr,
                    "xpubench upload: the token is never taken from the command line "
                    "(it would show in the process list and shell history); set " TOKEN_ENV "\n");
            return XPB_EXIT_USAGE;
        } else if (!strcmp(a, "--server") || !strcmp(a, "--cacert") || !strcmp(a, "--retries") ||
                   !strcmp(a, "--timeout") || !strcmp(a, "--connect-timeout")) {
            if (!val) {
                fprintf(stderr, "xpubench upload: %s needs a value\n", a);
                return XPB_EXIT_USAGE;
            }
            i++;
            if (!strcmp(a, "--server")) {
                c->server = val;
            } else if (!strcmp(a, "--cacert")) {
                c->cacert = val;
            } else if (!strcmp(a, "--retries")) {
                if (!parse_long(&v, a, val, 0, 100))
                    return XPB_EXIT_USAGE;
                c->opts.attempts = (int)v + 1;
            } else if (!strcmp(a, "--timeout")) {
                if (!parse_long(&v, a, val, 1, 3600))
                    return XPB_EXIT_USAGE;
                c->opts.timeout_ms = v * 1000;
            } else {
                if (!parse_long(&v, a, val, 1, 600))
                    return XPB_EXIT_USAGE;
                c->opts.connect_timeout_ms = v * 1000;
            }
        } else if (a[0] == '-' && a[1] != '\0') {
            xpb_term_line(stderr, "xpubench upload: unknown option '%s'", a);
            usage(stderr);
            return XPB_EXIT_USAGE;
        } else {
            c->files[c->n_files++] = a;
        }
    }
    if (c->flush + c->list > 1 || ((c->flush || c->list) && c->n_files > 0) ||
        (!c->flush && !c->list && c->n_files == 0)) {
        usage(stderr);
        return XPB_EXIT_USAGE;
    }
    xpb_err err;
    if (xpb_spool_dir(c->spool, sizeof c->spool, &err) != XPB_OK) {
        xpb_term_line(stderr, "xpubench upload: %s", err.msg);
        return XPB_EXIT_FAILURE;
    }
    return XPB_EXIT_OK;
}

/* Whether an upload can be sent: a well-formed https:// server, a usable token, a readable
 * CA file. Prints why not (a command-line problem: exit code 2) before anything is spooled or
 * sent. */
static int check_sendable(struct upload_cli *c, const char *server, const char *cacert)
{
    if (!server) {
        fprintf(stderr,
                "xpubench upload: no leaderboard given: pass --server URL or set " SERVER_ENV "\n");
        return 0;
    }
    if (!xpb_upload_url_ok(server)) {
        xpb_term_line(stderr,
                      "xpubench upload: %s is not a usable https:// URL (uploads always go over "
                      "HTTPS with certificate verification; the URL must name a host and hold no "
                      "spaces or control characters)",
                      server);
        return 0;
    }
    c->opts.token = getenv(TOKEN_ENV);
    if (!c->opts.token || !*c->opts.token) {
        fprintf(stderr, "xpubench upload: no upload token: set " TOKEN_ENV
                        " to the token the leaderboard's administrator gave you\n");
        return 0;
    }
    if (!xpb_upload_token_ok(c->opts.token)) {
        fprintf(stderr, "xpubench upload: " TOKEN_ENV " holds spaces or control characters: it "
                        "is not a token\n");
        return 0;
    }
    if (cacert && access(cacert, R_OK) != 0) {
        xpb_term_line(stderr, "xpubench upload: cannot read CA file %s: %s", cacert,
                      strerror(errno));
        return 0;
    }
    return 1;
}

/* Sends one spooled entry (at `path`, or NULL when not spooled) and settles it: removed when
 * delivered; when the server refused its content, moved to rejected/ if it came from the
 * spool (the user may no longer have the file) or removed (the user has the file and sees
 * the reason now); left in place otherwise. `label` names it in messages. Returns 1 when
 * delivered. */
static int deliver(struct upload_cli *c, const char *label, const char *path, int from_spool,
                   const char *server, const char *cacert, const char *body, size_t len,
                   const char *key)
{
    struct xpb_upload_opts opts = c->opts;
    opts.server = server;
    opts.cacert = cacert;
    struct xpb_upload_reply reply;
    xpb_err err;
    xpb_status st = xpb_upload_post(&reply, &opts, body, len, key, &err);
    if (st == XPB_OK) {
        if (path && xpb_spool_remove(path, &err) != XPB_OK)
            xpb_term_line(stderr, "xpubench upload: warning: %s", err.msg);
        const char *what =
            reply.outcome == XPB_UPLOAD_DUPLICATE ? "already on the leaderboard" : "uploaded";
        if (reply.id > 0)
            xpb_term_line(stdout, "%s: %s as submission %lld: %s", label, what, reply.id,
                          reply.url);
        else
            xpb_term_line(stdout, "%s: %s", label, what);
        return 1;
    }
    if (st == XPB_INVALID_ARGUMENT) {
        xpb_term_line(stderr, "xpubench upload: %s: %s", label, err.msg);
    } else if (reply.outcome == XPB_UPLOAD_REJECTED) {
        xpb_term_line(stderr, "xpubench upload: %s: rejected by %s (HTTP %ld): %s", label, server,
                      reply.http_status, reply.message[0] ? reply.message : "(no reason given)");
        char moved[4096];
        if (path && !from_spool)
            xpb_spool_remove(path, &err);
        else if (path && xpb_spool_reject(moved, sizeof moved, c->spool, path, reply.message,
                                          &err) == XPB_OK)
            xpb_term_line(stderr, "xpubench upload: %s: kept for reference in %s", label, moved);
        return 0;
    } else if (reply.outcome == XPB_UPLOAD_DENIED) {
        xpb_term_line(stderr, "xpubench upload: %s: refused by %s (HTTP %ld): %s", label, server,
                      reply.http_status, reply.message[0] ? reply.message : "(no reason given)");
        if (reply.http_status == 401 || reply.http_status == 403)
            fprintf(stderr, "xpubench upload: check the token in " TOKEN_ENV "\n");
    } else {
        xpb_term_line(stderr, "xpubench upload: %s: not delivered after %d attempt%s: %s", label,
                      reply.attempts, reply.attempts == 1 ? "" : "s", err.msg);
    }
    if (path)
        xpb_term_line(stderr,
                      "xpubench upload: %s: waiting in the spool (%s); send it later with "
                      "`xpubench upload --flush`",
                      label, path);
    return 0;
}

static int upload_files(struct upload_cli *c)
{
    if (!check_sendable(c, c->server, c->cacert))
        return XPB_EXIT_USAGE;
    int failed = 0, bad_input = 0;
    for (int i = 0; i < c->n_files; i++) {
        const char *file = c->files[i];
        json_t *doc = NULL;
        xpb_err err;
        if (xpb_results_load(&doc, file, &err) != XPB_OK) {
            xpb_term_line(stderr, "xpubench upload: %s", err.msg);
            bad_input = 1;
            continue;
        }
        char *body = NULL, key[65], path[4096];
        size_t len = 0;
        xpb_status st = xpb_results_canonical(&body, &len, key, doc, &err);
        json_decref(doc);
        if (st != XPB_OK) {
            xpb_term_line(stderr, "xpubench upload: %s: %s", file, err.msg);
            failed = 1;
            continue;
        }
        /* Spool first: if this process dies mid-upload, the entry is still there. */
        const char *spooled = NULL;
        if (!c->no_spool) {
            if (xpb_spool_put(path, sizeof path, c->spool, key, c->server, c->cacert, body, len,
                              &err) == XPB_OK)
                spooled = path;
            else
                xpb_term_line(stderr, "xpubench upload: warning: cannot spool %s: %s", file,
                              err.msg);
        }
        if (!deliver(c, file, spooled, 0, c->server, c->cacert, body, len, key))
            failed = 1;
        free(body);
    }
    if (bad_input)
        return XPB_EXIT_INPUT;
    return failed ? XPB_EXIT_FAILURE : XPB_EXIT_OK;
}

static int list_spool(struct upload_cli *c)
{
    char **paths;
    size_t n;
    xpb_err err;
    if (xpb_spool_list(&paths, &n, c->spool, &err) != XPB_OK) {
        xpb_term_line(stderr, "xpubench upload: %s", err.msg);
        return XPB_EXIT_FAILURE;
    }
    xpb_term_line(stdout, "spool: %s (%zu waiting)", c->spool, n);
    for (size_t i = 0; i < n; i++) {
        struct xpb_spool_entry e;
        if (xpb_spool_read(&e, paths[i], &err) != XPB_OK) {
            xpb_term_line(stdout, "  %s: %s", paths[i], err.msg);
            continue;
        }
        xpb_term_line(stdout, "  %.16s  spooled %s  for %s  (%zu bytes)", e.key,
                      e.spooled ? e.spooled : "?", e.server && *e.server ? e.server : "(no server)",
                      e.body_len);
        xpb_spool_entry_free(&e);
    }
    xpb_spool_list_free(paths, n);
    return XPB_EXIT_OK;
}

static int flush_spool(struct upload_cli *c)
{
    char **paths;
    size_t n;
    xpb_err err;
    if (xpb_spool_list(&paths, &n, c->spool, &err) != XPB_OK) {
        xpb_term_line(stderr, "xpubench upload: %s", err.msg);
        return XPB_EXIT_FAILURE;
    }
    if (n == 0) {
        printf("spool is empty: nothing to send\n");
        xpb_spool_list_free(paths, n);
        return XPB_EXIT_OK;
    }
    c->opts.token = getenv(TOKEN_ENV);
    size_t sent = 0;
    int usage_error = 0;
    for (size_t i = 0; i < n; i++) {
        struct xpb_spool_entry e;
        if (xpb_spool_read(&e, paths[i], &err) != XPB_OK) {
            xpb_term_line(stderr, "xpubench upload: %s (left in place)", err.msg);
            continue;
        }
        const char *server = c->server ? c->server : (e.server && *e.server ? e.server : NULL);
        const char *cacert = c->cacert ? c->cacert : e.cacert;
        char label[64];
        snprintf(label, sizeof label, "spooled %.16s", e.key);
        if (!check_sendable(c, server, cacert))
            usage_error = 1;
        else if (deliver(c, label, e.path, 1, server, cacert, e.body, e.body_len, e.key))
            sent++;
        xpb_spool_entry_free(&e);
        if (usage_error)
            break;
    }
    xpb_spool_list_free(paths, n);
    printf("flush: %zu delivered, %zu not delivered\n", sent, n - sent);
    if (usage_error)
        return XPB_EXIT_USAGE;
    return sent == n ? XPB_EXIT_OK : XPB_EXIT_FAILURE;
}

int xpb_cli_upload(int argc, char **argv)
{
    struct upload_cli c;
    memset(&c, 0, sizeof c);
    int rc = parse_args(&c, argc, argv);
    if (rc == XPB_EXIT_OK) {
        if (c.list)
            rc = list_spool(&c);
        else if (c.flush)
            rc = flush_spool(&c);
        else
            rc = upload_files(&c);
    } else if (rc < 0) {
        rc = XPB_EXIT_OK; /* --help */
    }
    free(c.files);
    return rc;
}
