/* Atomic file replacement (see atomic_file.h). */
#include "base/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Temporary names keep at most this much of the target's name, so that a long file name
 * (close to NAME_MAX) still leaves room for the prefix and the unique suffix. */
#define TEMP_BASE_MAX 120
#define TEMP_ATTEMPTS 100

/* Distinguishes temporary files of several threads of one process. */
static atomic_uint temp_counter;

/* Creates `dir` and its missing parents. `dir` is modified while it runs and restored;
 * `path` (the file to write) is for messages. */
static xpb_status make_dirs(char *dir, const char *path, xpb_err *err)
{
    struct stat st;
    if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
        return XPB_OK;
    for (char *p = dir + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char saved = *p;
        *p = '\0';
        int rc = mkdir(dir, 0777);
        int e = errno;
        if (rc != 0 && e == EEXIST && stat(dir, &st) == 0 && !S_ISDIR(st.st_mode))
            e = ENOTDIR;
        else if (rc != 0 && e == EEXIST)
            rc = 0;
        if (rc != 0) {
            xpb_err_set(err, XPB_IO_ERROR, "%s: cannot create directory %s: %s", path, dir,
                        strerror(e));
            *p = saved;
            return XPB_IO_ERROR;
        }
        *p = saved;
        if (saved == '\0')
            return XPB_OK;
    }
}

/* Opens a new temporary file "<dir>/.<base>.<unique>.tmp" (O_EXCL, mode 0666 minus the
 * umask) and stores its name in tmp. Returns the descriptor or -1 with errno set. */
static int open_temp(char *tmp, size_t tmp_size, const char *dir, const char *base)
{
    for (int attempt = 0; attempt < TEMP_ATTEMPTS; attempt++) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        unsigned n = atomic_fetch_add(&temp_counter, 1u);
        unsigned long tag = (unsigned long)ts.tv_nsec ^ ((unsigned long)n << 20);
        int len = snprintf(tmp, tmp_size, "%s/.%.*s.%ld.%lx.tmp", dir, TEMP_BASE_MAX, base,
                           (long)getpid(), tag);
        if (len < 0 || (size_t)len >= tmp_size) {
            errno = ENAMETOOLONG;
            return -1;
        }
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

static int write_all(int fd, const unsigned char *p, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0) {
            errno = EIO;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Makes the rename durable. Best effort: file systems that cannot sync a directory (EINVAL,
 * ENOTSUP) and directories we may not open for reading are accepted; a real I/O error of the
 * sync is reported, although the new content is already in place by then. */
static xpb_status sync_dir(const char *dir, xpb_err *err)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return XPB_OK;
    int rc = fsync(fd);
    int e = errno;
    close(fd);
    if (rc != 0 && e != EINVAL && e != ENOTSUP && e != EROFS && e != EBADF)
        return xpb_err_set(err, XPB_IO_ERROR, "cannot sync directory %s: %s", dir, strerror(e));
    return XPB_OK;
}

/* Puts the complete temporary file `tmp` in place at `path`: renamed over it (`replace`), or
 * linked to it only if nothing is there yet and then unlinked (a link fails with EEXIST
 * instead of replacing). File systems without hard links fall back to a check and a rename,
 * which is not atomic against another writer. */
static xpb_status put_in_place(const char *tmp, const char *path, int replace, xpb_err *err)
{
    if (replace) {
        if (rename(tmp, path) != 0)
            return xpb_err_set(err, XPB_IO_ERROR, "%s: cannot replace it: %s", path,
                               strerror(errno));
        return XPB_OK;
    }
    if (link(tmp, path) == 0) {
        unlink(tmp);
        return XPB_OK;
    }
    int e = errno;
    struct stat st;
    if (e != EEXIST && (e == EPERM || e == ENOTSUP || e == EOPNOTSUPP || e == EMLINK) &&
        lstat(path, &st) != 0 && errno == ENOENT && rename(tmp, path) == 0)
        return XPB_OK;
    if (e == EEXIST)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "%s: exists already", path);
    return xpb_err_set(err, XPB_IO_ERROR, "%s: cannot create it: %s", path, strerror(e));
}

/* xpb_atomic_write and xpb_atomic_create. */
static xpb_status atomic_put(const char *path, const void *data, size_t len, int replace,
                             xpb_err *err)
{
    xpb_status st = XPB_IO_ERROR;
    if (!path || !*path || path[strlen(path) - 1] == '/')
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "%s: not a file name",
                           path ? path : "(null)");
    if (!data && len > 0)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "%s: no data to write", path);

    /* Split into directory and base name. */
    char *dir = strdup(path);
    if (!dir)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "%s: out of memory", path);
    const char *base;
    char *slash = strrchr(dir, '/');
    if (!slash) {
        base = path;
        strcpy(dir, ".");
    } else {
        base = path + (slash - dir) + 1;
        if (slash == dir)
            slash[1] = '\0'; /* "/name": the directory is "/" */
        else
            *slash = '\0';
    }

    if ((st = make_dirs(dir, path, err)) != XPB_OK)
        goto free_dir;
    /* Never rename over a device, fifo or socket (say -o /dev/null as root); a directory fails
     * at the rename below. */
    struct stat target;
    if (stat(path, &target) == 0 && !S_ISREG(target.st_mode) && !S_ISDIR(target.st_mode)) {
        st = xpb_err_set(err, XPB_IO_ERROR, "%s: exists and is not a regular file", path);
        goto free_dir;
    }

    size_t tmp_size = strlen(dir) + TEMP_BASE_MAX + 64;
    char *tmp = malloc(tmp_size);
    if (!tmp) {
        st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "%s: out of memory", path);
        goto free_dir;
    }
    int fd = open_temp(tmp, tmp_size, dir, base);
    if (fd < 0) {
        st = xpb_err_set(err, XPB_IO_ERROR, "%s: cannot create a temporary file in %s: %s", path,
                         dir, strerror(errno));
        goto free_tmp;
    }

    /* Keep the permissions of the file being replaced. */
    struct stat old;
    if (lstat(path, &old) == 0 && S_ISREG(old.st_mode) && fchmod(fd, old.st_mode & 07777) != 0) {
        st = xpb_err_set(err, XPB_IO_ERROR, "%s: cannot set the mode of %s: %s", path, tmp,
                         strerror(errno));
        goto close_fd;
    }
    if (write_all(fd, data, len) != 0) {
        st = xpb_err_set(err, XPB_IO_ERROR, "%s: cannot write %s: %s", path, tmp, strerror(errno));
        goto close_fd;
    }
    if (fsync(fd) != 0) {
        st = xpb_err_set(err, XPB_IO_ERROR, "%s: cannot sync %s: %s", path, tmp, strerror(errno));
        goto close_fd;
    }
    int rc = close(fd);
    fd = -1;
    if (rc != 0) {
        st = xpb_err_set(err, XPB_IO_ERROR, "%s: cannot close %s: %s", path, tmp, strerror(errno));
        goto unlink_tmp;
    }
    if ((st = put_in_place(tmp, path, replace, err)) != XPB_OK)
        goto unlink_tmp;
    st = sync_dir(dir, err);
    goto free_tmp;

close_fd:
    close(fd);
unlink_tmp:
    unlink(tmp);
free_tmp:
    free(tmp);
free_dir:
    free(dir);
    return st;
}

xpb_status xpb_atomic_write(const char *path, const void *data, size_t len, xpb_err *err)
{
    return atomic_put(path, data, len, 1, err);
}

xpb_status xpb_atomic_create(const char *path, const void *data, size_t len, xpb_err *err)
{
    return atomic_put(path, data, len, 0, err);
}
