/* Reading IDX files (see idx.h). zlib's gzread reads plain files as they are, so one path
 * serves both forms. */
#include "data/idx.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* Reads up to `n` bytes; the count read, or -1 on a read error (message in err). */
static long read_some(gzFile f, void *buf, size_t n, const char *path, xpb_err *err)
{
    size_t got = 0;
    while (got < n) {
        unsigned chunk = n - got > (1u << 30) ? (1u << 30) : (unsigned)(n - got);
        int r = gzread(f, (char *)buf + got, chunk);
        if (r < 0) {
            int zerr = 0;
            const char *msg = gzerror(f, &zerr);
            xpb_err_set(err, XPB_IO_ERROR, "%s: cannot read at byte %zu: %s", path, got,
                        zerr == Z_ERRNO ? strerror(errno) : msg);
            return -1;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (long)got;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* Checks the 4-byte magic: two zero bytes, the type, the dimension count. */
static xpb_status check_magic(const uint8_t *m, uint32_t ndim, const char *path, xpb_err *err)
{
    if (m[0] != 0 || m[1] != 0)
        return xpb_err_set(err, XPB_PARSE_ERROR,
                           "%s: not an IDX file: byte 0 holds 0x%02x%02x, expected 0x0000 (the "
                           "magic number starts with two zero bytes)",
                           path, m[0], m[1]);
    if (m[2] != 0x08)
        return xpb_err_set(err, XPB_PARSE_ERROR,
                           "%s: byte 2: element type 0x%02x, expected 0x08 (unsigned bytes)", path,
                           m[2]);
    if (m[3] != ndim)
        return xpb_err_set(err, XPB_PARSE_ERROR, "%s: byte 3: %u dimensions, expected %u (%s)",
                           path, m[3], ndim,
                           ndim == 1 ? "a label file" : "an image file: count, rows, columns");
    return XPB_OK;
}

/* Reads the dimensions after the magic into out, checking each and the total size. */
static xpb_status read_dims(xpb_idx *out, gzFile f, uint32_t ndim, const char *path, xpb_err *err)
{
    uint8_t raw[4 * XPB_IDX_MAX_DIMS];
    long got = read_some(f, raw, 4u * ndim, path, err);
    if (got < 0)
        return XPB_IO_ERROR;
    if ((size_t)got < 4u * ndim)
        return xpb_err_set(err, XPB_PARSE_ERROR,
                           "%s: truncated at byte %ld: the header needs %u bytes of dimensions",
                           path, 4 + got, 4u * ndim);
    size_t count = 1;
    for (uint32_t d = 0; d < ndim; d++) {
        out->dims[d] = be32(raw + 4 * d);
        if (out->dims[d] == 0)
            return xpb_err_set(err, XPB_PARSE_ERROR, "%s: byte %u: dimension %u is 0", path,
                               4 + 4 * d, d);
        if (count > XPB_IDX_MAX_BYTES / out->dims[d])
            return xpb_err_set(err, XPB_PARSE_ERROR,
                               "%s: byte %u: dimension %u (%u) makes the file larger than %u "
                               "bytes of elements",
                               path, 4 + 4 * d, d, out->dims[d], XPB_IDX_MAX_BYTES);
        count *= out->dims[d];
    }
    out->ndim = ndim;
    out->count = count;
    return XPB_OK;
}

xpb_status xpb_idx_read(xpb_idx *out, const char *path, uint32_t ndim, xpb_err *err)
{
    memset(out, 0, sizeof *out);
    if (ndim < 1 || ndim > XPB_IDX_MAX_DIMS)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "%s: %u dimensions asked for", path, ndim);
    gzFile f = gzopen(path, "rb");
    if (!f)
        return xpb_err_set(err, XPB_IO_ERROR, "%s: cannot open: %s", path,
                           errno ? strerror(errno) : "out of memory");
    xpb_status st;
    uint8_t magic[4];
    long got = read_some(f, magic, 4, path, err);
    if (got < 0) {
        st = XPB_IO_ERROR;
        goto close_file;
    }
    if (got < 4) {
        st = xpb_err_set(err, XPB_PARSE_ERROR,
                         "%s: truncated at byte %ld: an IDX file starts with a 4-byte magic number",
                         path, got);
        goto close_file;
    }
    if ((st = check_magic(magic, ndim, path, err)) || (st = read_dims(out, f, ndim, path, err)))
        goto close_file;
    size_t header = 4 + 4u * ndim;
    out->data = malloc(out->count ? out->count : 1);
    if (!out->data) {
        st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "%s: out of memory for %zu bytes", path,
                         out->count);
        goto close_file;
    }
    got = read_some(f, out->data, out->count, path, err);
    if (got < 0) {
        st = XPB_IO_ERROR;
        goto free_data;
    }
    if ((size_t)got < out->count) {
        st = xpb_err_set(err, XPB_PARSE_ERROR,
                         "%s: truncated at byte %zu: the dimensions say %zu bytes of elements "
                         "after the %zu-byte header, the file holds %ld",
                         path, header + (size_t)got, out->count, header, got);
        goto free_data;
    }
    uint8_t extra;
    if ((got = read_some(f, &extra, 1, path, err)) != 0) {
        st = got < 0 ? XPB_IO_ERROR
                     : xpb_err_set(err, XPB_PARSE_ERROR,
                                   "%s: trailing bytes at byte %zu: the dimensions say the file "
                                   "ends there",
                                   path, header + out->count);
        goto free_data;
    }
    gzclose(f);
    return XPB_OK;
free_data:
    free(out->data);
close_file:
    gzclose(f);
    memset(out, 0, sizeof *out);
    return st;
}

void xpb_idx_free(xpb_idx *idx)
{
    if (!idx)
        return;
    free(idx->data);
    memset(idx, 0, sizeof *idx);
}
