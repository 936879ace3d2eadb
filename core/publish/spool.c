/* The upload spool (see spool.h). */
#include "publish/spool.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "base/atomic_file.h"
#include "base/sha256.h"

#define SPOOL_MAX_ENTRY_BYTES (64u << 20)

xpb_status xpb_spool_dir(char *out, size_t cap, xpb_err *err)
{
    const char *xdg = getenv("XDG_DATA_HOME");
    int n;
    if (xdg && xdg[0] == '/') {
        n = snprintf(out, cap, "%s/xpubench/spool", xdg);
    } else {
        const char *home = getenv("HOME");
        if (!home || home[0] != '/')
            return xpb_err_set(err, XPB_INVALID_ARGUMENT,
                               "cannot locate the upload spool: neither XDG_DATA_HOME nor HOME "
                               "is an absolute path");
        n = snprintf(out, cap, "%s/.local/share/xpubench/spool", home);
    }
    if (n < 0 || (size_t)n >= cap)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "the upload spool path is too long");
    return XPB_OK;
}

/* mkdir -p with `mode` for every folder it creates. */
static xpb_status make_dirs(const char *dir, mode_t mode, xpb_err *err)
{
    char tmp[4096];
    size_t len = strlen(dir);
    if (len == 0 || len >= sizeof tmp)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "bad spool folder path '%s'", dir);
    memcpy(tmp, dir, len + 1);
    for (char *p = tmp + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char saved = *p;
        *p = '\0';
        struct stat st;
        if (mkdir(tmp, mode) != 0 && errno != EEXIST)
            return xpb_err_set(err, XPB_IO_ERROR, "cannot create %s: %s", tmp, strerror(errno));
        if (stat(tmp, &st) != 0 || !S_ISDIR(st.st_mode))
            return xpb_err_set(err, XPB_IO_ERROR, "%s exists and is not a folder", tmp);
        *p = saved;
        if (saved == '\0')
            return XPB_OK;
    }
}

xpb_status xpb_spool_ensure(const char *dir, xpb_err *err)
{
    return make_dirs(dir, 0700, err);
}

static int is_hex64(const char *s)
{
    for (int i = 0; i < 64; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

/* "<64 hex>.json" and nothing else: temporary files start with '.', reason files differ. */
static int is_entry_name(const char *name)
{
    return strlen(name) == 69 && is_hex64(name) && strcmp(name + 64, ".json") == 0;
}

static void utc_now(char out[32])
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* `path` as an absolute path into out (cap bytes): resolved when the file exists, else joined
 * to the current folder, so that a later --flush from another folder finds the same file. */
static xpb_status absolute_path(char *out, size_t cap, const char *path, xpb_err *err)
{
    char resolved[PATH_MAX], cwd[PATH_MAX];
    int n;
    if (realpath(path, resolved))
        n = snprintf(out, cap, "%s", resolved);
    else if (path[0] == '/')
        n = snprintf(out, cap, "%s", path);
    else if (getcwd(cwd, sizeof cwd))
        n = snprintf(out, cap, "%s/%s", cwd, path);
    else
        return xpb_err_set(err, XPB_IO_ERROR, "cannot make %s absolute: %s", path, strerror(errno));
    if (n < 0 || (size_t)n >= cap)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "the path %s is too long", path);
    return XPB_OK;
}

xpb_status xpb_spool_put(char *path_out, size_t cap, const char *dir, const char *key,
                         const char *server, const char *cacert, const char *body, size_t len,
                         xpb_err *err)
{
    char digest[65], path[4096], when[32];
    xpb_sha256_hex(digest, body, len);
    if (!key || strlen(key) != 64 || strcmp(digest, key) != 0)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "spool key does not match the results");
    int n = snprintf(path, sizeof path, "%s/%s.json", dir, key);
    if (n < 0 || (size_t)n >= sizeof path)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "the spool path is too long");
    char cacert_abs[PATH_MAX];
    xpb_status st = cacert ? absolute_path(cacert_abs, sizeof cacert_abs, cacert, err) : XPB_OK;
    if (st == XPB_OK)
        st = xpb_spool_ensure(dir, err);
    if (st != XPB_OK)
        return st;

    utc_now(when);
    json_t *entry =
        json_pack("{s:i, s:s, s:s, s:s?, s:s, s:s%}", "spool_version", XPB_SPOOL_VERSION, "key",
                  key, "server", server ? server : "", "cacert", cacert ? cacert_abs : NULL,
                  "spooled", when, "body", body, len);
    if (!entry)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT,
                           "cannot spool: the results text is not valid UTF-8");
    char *text = json_dumps(entry, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    json_decref(entry);
    if (!text)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    st = xpb_atomic_write(path, text, strlen(text), err);
    free(text);
    if (st != XPB_OK)
        return st;
    if (path_out) {
        n = snprintf(path_out, cap, "%s", path);
        if (n < 0 || (size_t)n >= cap)
            return xpb_err_set(err, XPB_INVALID_ARGUMENT, "the spool path is too long");
    }
    return XPB_OK;
}

struct listed {
    char *path;
    struct timespec mtime;
};

static int cmp_listed(const void *pa, const void *pb)
{
    const struct listed *a = pa, *b = pb;
    if (a->mtime.tv_sec != b->mtime.tv_sec)
        return a->mtime.tv_sec < b->mtime.tv_sec ? -1 : 1;
    if (a->mtime.tv_nsec != b->mtime.tv_nsec)
        return a->mtime.tv_nsec < b->mtime.tv_nsec ? -1 : 1;
    return strcmp(a->path, b->path);
}

xpb_status xpb_spool_list(char ***paths_out, size_t *count_out, const char *dir, xpb_err *err)
{
    *paths_out = NULL;
    *count_out = 0;
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT)
            return XPB_OK;
        return xpb_err_set(err, XPB_IO_ERROR, "cannot open the spool %s: %s", dir, strerror(errno));
    }
    struct listed *items = NULL;
    size_t n = 0, cap = 0;
    xpb_status st = XPB_OK;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (!is_entry_name(de->d_name))
            continue;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            struct listed *grown = realloc(items, ncap * sizeof *grown);
            if (!grown) {
                st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
                goto fail_items;
            }
            items = grown;
            cap = ncap;
        }
        size_t plen = strlen(dir) + 1 + strlen(de->d_name) + 1;
        char *path = malloc(plen);
        if (!path) {
            st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
            goto fail_items;
        }
        snprintf(path, plen, "%s/%s", dir, de->d_name);
        struct stat sb;
        if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) {
            free(path); /* vanished (delivered by a concurrent flush) or not a file */
            continue;
        }
        items[n].path = path;
        items[n].mtime = sb.st_mtim;
        n++;
    }
    closedir(d);
    d = NULL;
    if (n > 0) {
        qsort(items, n, sizeof *items, cmp_listed);
        char **paths = malloc(n * sizeof *paths);
        if (!paths) {
            st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
            goto fail_items;
        }
        for (size_t i = 0; i < n; i++)
            paths[i] = items[i].path;
        *paths_out = paths;
        *count_out = n;
    }
    free(items);
    return XPB_OK;

fail_items:
    for (size_t i = 0; i < n; i++)
        free(items[i].path);
    free(items);
    if (d)
        closedir(d);
    return st;
}

void xpb_spool_list_free(char **paths, size_t count)
{
    for (size_t i = 0; paths && i < count; i++)
        free(paths[i]);
    free(paths);
}

/* strdup of a member's string value `v`, NULL when absent or null; *bad set when it has
 * another type. */
static char *dup_member(const json_t *v, int *bad)
{
    if (!v || json_is_null(v))
        return NULL;
    if (!json_is_string(v)) {
        *bad = 1;
        return NULL;
    }
    char *s = strdup(json_string_value(v));
    if (!s)
        *bad = 1;
    return s;
}

xpb_status xpb_spool_read(struct xpb_spool_entry *out, const char *path, xpb_err *err)
{
    memset(out, 0, sizeof *out);
    json_error_t jerr;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        FILE *probe = fopen(path, "rb");
        if (!probe)
            return xpb_err_set(err, XPB_IO_ERROR, "cannot read spool entry %s: %s", path,
                               strerror(errno));
        fclose(probe);
        return xpb_err_set(err, XPB_PARSE_ERROR, "spool entry %s is damaged: %s (line %d)", path,
                           jerr.text, jerr.line);
    }
    xpb_status st = XPB_OK;
    /* the members, borrowed from root; those missing (or a root that is no object) stay NULL */
    json_t *version = NULL, *key = NULL, *body = NULL, *server = NULL, *cacert = NULL;
    json_t *spooled = NULL;
    json_unpack(root, "{s?o, s?o, s?o, s?o, s?o, s?o}", "spool_version", &version, "key", &key,
                "body", &body, "server", &server, "cacert", &cacert, "spooled", &spooled);
    if (!json_is_integer(version) || json_integer_value(version) != XPB_SPOOL_VERSION ||
        !json_is_string(key) || json_string_length(key) != 64 || !json_is_string(body) ||
        json_string_length(body) > SPOOL_MAX_ENTRY_BYTES) {
        st = xpb_err_set(err, XPB_PARSE_ERROR,
                         "spool entry %s is not a version %d entry (spool_version, key, body)",
                         path, XPB_SPOOL_VERSION);
        goto fail_root;
    }
    int bad = 0;
    out->server = dup_member(server, &bad);
    out->cacert = dup_member(cacert, &bad);
    out->spooled = dup_member(spooled, &bad);
    out->path = strdup(path);
    out->body_len = json_string_length(body);
    out->body = malloc(out->body_len + 1);
    if (bad || !out->path || !out->body) {
        st = xpb_err_set(err, XPB_PARSE_ERROR, "spool entry %s has bad members", path);
        goto fail_entry;
    }
    memcpy(out->body, json_string_value(body), out->body_len);
    out->body[out->body_len] = '\0';
    memcpy(out->key, json_string_value(key), 65);
    char digest[65];
    xpb_sha256_hex(digest, out->body, out->body_len);
    if (strcmp(digest, out->key) != 0) {
        st = xpb_err_set(err, XPB_PARSE_ERROR,
                         "spool entry %s is damaged: its results no longer match its key", path);
        goto fail_entry;
    }
    json_decref(root);
    return XPB_OK;

fail_entry:
    xpb_spool_entry_free(out);
fail_root:
    json_decref(root);
    return st;
}

void xpb_spool_entry_free(struct xpb_spool_entry *entry)
{
    free(entry->path);
    free(entry->server);
    free(entry->cacert);
    free(entry->spooled);
    free(entry->body);
    memset(entry, 0, sizeof *entry);
}

xpb_status xpb_spool_remove(const char *path, xpb_err *err)
{
    if (unlink(path) != 0 && errno != ENOENT)
        return xpb_err_set(err, XPB_IO_ERROR, "cannot remove spool entry %s: %s", path,
                           strerror(errno));
    return XPB_OK;
}

xpb_status xpb_spool_reject(char *moved_out, size_t cap, const char *dir, const char *path,
                            const char *reason, xpb_err *err)
{
    char rejected[4096], target[4200], reason_path[4200];
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (!is_entry_name(base))
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "%s is not a spool entry", path);
    int n = snprintf(rejected, sizeof rejected, "%s/rejected", dir);
    if (n < 0 || (size_t)n >= sizeof rejected)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "the spool path is too long");
    xpb_status st = make_dirs(rejected, 0700, err);
    if (st != XPB_OK)
        return st;
    snprintf(target, sizeof target, "%s/%s", rejected, base);
    snprintf(reason_path, sizeof reason_path, "%s/%.64s.reason.txt", rejected, base);
    if (reason) {
        size_t rlen = strlen(reason);
        char *line = malloc(rlen + 2);
        if (!line)
            return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
        memcpy(line, reason, rlen);
        line[rlen] = '\n';
        st = xpb_atomic_write(reason_path, line, rlen + 1, err);
        free(line);
        if (st != XPB_OK)
            return st;
    }
    if (rename(path, target) != 0)
        return xpb_err_set(err, XPB_IO_ERROR, "cannot move %s to %s: %s", path, target,
                           strerror(errno));
    if (moved_out)
        snprintf(moved_out, cap, "%s", target);
    return XPB_OK;
}
