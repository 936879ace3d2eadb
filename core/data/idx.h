/* IDX files (the format of MNIST and Fashion-MNIST): a magic number naming the element type and
 * the number of dimensions, the dimensions as big-endian 32-bit integers, then the elements
 * row-major. Read whole, gzip-compressed or not (Debian's dataset packages ship them gzipped).
 * Every malformed file is refused with its path and the byte offset of what is wrong, counted in
 * the decompressed content. */
#ifndef XPB_CORE_IDX_H
#define XPB_CORE_IDX_H

#include <stddef.h>
#include <stdint.h>

#include "base/errmsg.h"

#define XPB_IDX_MAX_DIMS 4
/* Files whose elements would take more than this are refused before anything is allocated. */
#define XPB_IDX_MAX_BYTES (512u * 1024u * 1024u)

typedef struct xpb_idx {
    uint32_t ndim;
    uint32_t dims[XPB_IDX_MAX_DIMS];
    size_t count;  /* elements: the product of dims */
    uint8_t *data; /* count unsigned bytes, row-major; owned by the struct (xpb_idx_free) */
} xpb_idx;

/* Reads `path`, which must hold unsigned bytes (type 0x08) in exactly `ndim` dimensions, into
 * *out (the caller frees it with xpb_idx_free). Refused, with err naming the path and the byte
 * offset: a file that cannot be opened or is not valid gzip (XPB_IO_ERROR), a wrong magic, an
 * element type other than unsigned bytes, another number of dimensions, a zero dimension, a
 * size over XPB_IDX_MAX_BYTES, fewer element bytes than the dimensions say (truncated) or more
 * (trailing bytes) (XPB_PARSE_ERROR). */
xpb_status xpb_idx_read(xpb_idx *out, const char *path, uint32_t ndim, xpb_err *err);

/* Frees the elements and zeroes the struct; a zeroed struct is a no-op. */
void xpb_idx_free(xpb_idx *idx);

#endif
