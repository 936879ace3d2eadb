/* The upload spool: results that `xpubench upload` could not deliver yet wait here until
 * `xpubench upload --flush` sends them.
 *
 * The folder is $XDG_DATA_HOME/xpubench/spool, or ~/.local/share/xpubench/spool when
 * XDG_DATA_HOME is unset or not absolute. Each waiting upload is one file "<key>.json", where
 * <key> is the upload's idempotency key (SHA-256 of the canonical results text): the same
 * results spooled twice are one entry. A file is written atomically (temporary file, fsync,
 * rename), so a crash leaves either the complete entry or none; the uploader writes the entry
 * before it sends and removes it only after the server confirmed the submission, so a crash
 * mid-upload leaves the entry in place. Entries the server refused for their content move
 * to the "rejected" subfolder so that a flush does not send them again and again.
 *
 * An entry is a small JSON object: {"spool_version":1, "key", "server", "cacert" (or null),
 * "spooled" (UTC time), "body" (the canonical results text, as a JSON string so that its
 * bytes, and so its hash, survive exactly)}. It never holds the upload token. */
#ifndef XPB_CORE_SPOOL_H
#define XPB_CORE_SPOOL_H

#include <stddef.h>

#include "base/errmsg.h"

#define XPB_SPOOL_VERSION 1

/* One spooled upload, as read back from its file. */
struct xpb_spool_entry {
    char key[65];  /* idempotency key: 64 lower-case hex digits */
    char *path;    /* the entry's file */
    char *server;  /* base URL it was meant for */
    char *cacert;  /* CA file given at upload time, or NULL */
    char *spooled; /* when it was spooled (UTC, ISO 8601) */
    char *body;    /* canonical results text, NUL-terminated */
    size_t body_len;
};

/* Writes the spool folder's path into out (cap bytes). Does not create the folder.
 * XPB_INVALID_ARGUMENT when neither XDG_DATA_HOME nor HOME gives an absolute path or the path
 * does not fit. */
xpb_status xpb_spool_dir(char *out, size_t cap, xpb_err *err);

/* Creates `dir` (and missing parents); a new spool folder gets mode 0700. */
xpb_status xpb_spool_ensure(const char *dir, xpb_err *err);

/* Spools `body` (len bytes, the canonical results text whose SHA-256 hex is `key`) for
 * `server` (cacert may be NULL; it is stored as an absolute path, so that a flush from any
 * folder finds it) as "<dir>/<key>.json", atomically; an existing entry with the same key is
 * replaced. The entry's path goes to path_out (cap bytes) when path_out is not
 * NULL. XPB_INVALID_ARGUMENT when key does not match the body, XPB_IO_ERROR otherwise. */
xpb_status xpb_spool_put(char *path_out, size_t cap, const char *dir, const char *key,
                         const char *server, const char *cacert, const char *body, size_t len,
                         xpb_err *err);

/* Lists the entries of `dir`, oldest first (by modification time, then name): *paths_out
 * receives a malloc'ed array of *count_out malloc'ed paths that the caller releases with
 * xpb_spool_list_free. A missing folder is an empty list. Temporary files and anything not
 * named "<64 hex>.json" are skipped. */
xpb_status xpb_spool_list(char ***paths_out, size_t *count_out, const char *dir, xpb_err *err);
void xpb_spool_list_free(char **paths, size_t count);

/* Reads the entry at `path` into *out (fields owned by *out; release with
 * xpb_spool_entry_free). XPB_PARSE_ERROR when the file is not a valid entry or its body no
 * longer matches its key; XPB_IO_ERROR when it cannot be read. */
xpb_status xpb_spool_read(struct xpb_spool_entry *out, const char *path, xpb_err *err);
void xpb_spool_entry_free(struct xpb_spool_entry *entry);

/* Removes a delivered entry. A file that is already gone is not an error. */
xpb_status xpb_spool_remove(const char *path, xpb_err *err);

/* Moves the entry at `path` into "<dir>/rejected/" (created on demand) and writes the
 * server's reason next to it as "<key>.reason.txt". The moved path goes to moved_out (cap
 * bytes) when it is not NULL. */
xpb_status xpb_spool_reject(char *moved_out, size_t cap, const char *dir, const char *path,
                            const char *reason, xpb_err *err);

#endif
