/* Atomic file replacement: a reader of `path` sees either the old content or the complete new
 * content, never a truncated file, even when the process is killed or the machine loses power
 * in the middle (temporary file in the same directory + fsync + rename + fsync of the
 * directory). Used for results files, .npy dumps and the upload spool. */
#ifndef XPB_CORE_ATOMIC_FILE_H
#define XPB_CORE_ATOMIC_FILE_H

#include <stddef.h>

#include "base/errmsg.h"

/* Replaces `path` by `len` bytes of `data` (data may be NULL when len is 0).
 *
 * Missing parent directories are created first (like mkdir -p, mode 0777 minus the umask).
 * The new content goes to a uniquely named temporary file ".<name>.<unique>.tmp" next to
 * `path`, created with O_EXCL like mkstemp but with mode 0666 minus the umask (mkstemp would
 * force 0600); when `path` already exists, its permission bits are kept. The temporary file
 * is written completely, fsync'ed and renamed over `path`, then the directory is fsync'ed so
 * the rename itself is durable.
 *
 * On any failure the temporary file is removed, `path` keeps its old content (or stays
 * absent), and the status is XPB_INVALID_ARGUMENT (empty path, path ending in '/') or
 * XPB_IO_ERROR, with err->msg naming the path, the step that failed and strerror(errno).
 * A symbolic link at `path` is replaced by the file, not followed. */
xpb_status xpb_atomic_write(const char *path, const void *data, size_t len, xpb_err *err);

/* xpb_atomic_write that never replaces: `path` appears complete or not at all, and only when
 * nothing (not even a dangling link) is there. The complete temporary file is hard-linked to
 * `path` (which fails instead of replacing) and then removed. XPB_INVALID_ARGUMENT when `path`
 * exists (err->msg "<path>: exists already"; nothing written), otherwise as xpb_atomic_write. On a
 * file system without hard links it checks and renames, which another writer could race. */
xpb_status xpb_atomic_create(const char *path, const void *data, size_t len, xpb_err *err);

#endif
