/* NumPy .npy files (format version 1.0) for tensor dumps: `--dump` writes one file per tensor
 * so that anyone can inspect or compare them with numpy.load(). Only the two dtypes of the
 * op set exist: f32 ('<f4') and i32 ('<i4'), always little-endian, C order. */
#ifndef XPB_CORE_NPY_H
#define XPB_CORE_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "base/errmsg.h"

/* Most dimensions a file may have here (the op set needs XPB_MAX_DIMS = 4). */
#define XPB_NPY_MAX_DIMS 8

/* Writes a C-order array of `dtype` (xpb_dtype: XPB_DTYPE_F32 or XPB_DTYPE_I32) with `ndim`
 * dimensions `dims` (ndim 0 is a scalar: one element; dims may be NULL then) from `data`
 * (numel * 4 bytes, host byte order; converted to little-endian if the host is not).
 *
 * The header is the one numpy.save (numpy >= 1.23) writes, byte for byte:
 *   "\x93NUMPY" 1 0 <uint16 LE header length>
 *   "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" + spaces + "\n"
 * with spare spaces for the first dimension to grow to 21 digits, padded so that the data
 * starts at a multiple of 64 bytes. The file is written atomically (xpb_atomic_write).
 * Returns XPB_INVALID_ARGUMENT for an unknown dtype, ndim > XPB_NPY_MAX_DIMS or a negative
 * dimension, XPB_OUT_OF_MEMORY, or the status of xpb_atomic_write. */
xpb_status xpb_npy_write(const char *path, uint32_t dtype, uint32_t ndim, const int64_t *dims,
                         const void *data, xpb_err *err);

/* An array read back by xpb_npy_read. */
struct xpb_npy_array {
    uint32_t dtype; /* xpb_dtype */
    uint32_t ndim;
    int64_t dims[XPB_NPY_MAX_DIMS];
    size_t numel; /* product of dims (1 for ndim 0) */
    void *data;   /* numel * 4 bytes in host byte order; owned by the struct (xpb_npy_free) */
};

/* Reads a .npy file of format version 1.0, 2.0 or 3.0 holding '<f4' or '<i4' (also '>f4',
 * '>i4', '|' never) in C order, into *out. On success out->data is allocated with malloc and
 * owned by the caller, who releases it with xpb_npy_free; on failure *out holds no
 * allocation. Errors: XPB_IO_ERROR (cannot open/read), XPB_PARSE_ERROR (not a .npy file, bad
 * header, truncated data, trailing bytes), XPB_UNSUPPORTED (another dtype, Fortran order,
 * more than XPB_NPY_MAX_DIMS dimensions), XPB_OUT_OF_MEMORY. */
xpb_status xpb_npy_read(struct xpb_npy_array *out, const char *path, xpb_err *err);

/* Frees out->data and clears the struct. NULL and a cleared struct are fine. */
void xpb_npy_free(struct xpb_npy_array *array);

#endif
