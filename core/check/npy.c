/* NumPy .npy writer and reader (see npy.h). Format reference:
 * numpy/lib/format.py ("NPY format"), versions 1.0 to 3.0. */
#include "check/npy.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <xpubench/program.h>

#include "base/atomic_file.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_ALIGN 64
/* numpy >= 1.23 leaves room in the header for the first dimension to grow to this many
 * digits, so that appending to the file can rewrite the header in place. */
#define NPY_GROWTH_DIGITS 21
#define NPY_HEADER_MAX 4096

static int host_is_little_endian(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* Copies n 4-byte elements, reversing the bytes of each when `swap`. */
static void copy_elements(unsigned char *dst, const unsigned char *src, size_t n, int swap)
{
    if (!swap) {
        if (n)
            memcpy(dst, src, n * 4);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        dst[4 * i + 0] = src[4 * i + 3];
        dst[4 * i + 1] = src[4 * i + 2];
        dst[4 * i + 2] = src[4 * i + 1];
        dst[4 * i + 3] = src[4 * i + 0];
    }
}

static void swap_in_place(unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++, p += 4) {
        unsigned char t0 = p[0], t1 = p[1];
        p[0] = p[3];
        p[1] = p[2];
        p[2] = t1;
        p[3] = t0;
    }
}

/* Element count of dims, or -1 when the byte size would not fit in size_t. */
static int64_t count_elements(uint32_t ndim, const int64_t *dims)
{
    uint64_t n = 1;
    int zero = 0;
    for (uint32_t d = 0; d < ndim; d++) {
        if (dims[d] == 0)
            zero = 1;
        else if (!zero && n > (uint64_t)(SIZE_MAX / 4) / (uint64_t)dims[d])
            return -1;
        else if (!zero)
            n *= (uint64_t)dims[d];
    }
    if (zero)
        return 0;
    return n > (uint64_t)INT64_MAX ? -1 : (int64_t)n;
}

xpb_status xpb_npy_write(const char *path, uint32_t dtype, uint32_t ndim, const int64_t *dims,
                         const void *data, xpb_err *err)
{
    const char *descr = dtype == XPB_DTYPE_F32 ? "<f4" : dtype == XPB_DTYPE_I32 ? "<i4" : NULL;
    if (!descr)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "%s: unknown dtype %" PRIu32, path, dtype);
    if (ndim > XPB_NPY_MAX_DIMS || (ndim > 0 && !dims))
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "%s: %" PRIu32 " dimensions (at most %d)",
                           path, ndim, XPB_NPY_MAX_DIMS);
    for (uint32_t d = 0; d < ndim; d++)
        if (dims[d] < 0)
            return xpb_err_set(err, XPB_INVALID_ARGUMENT, "%s: dimension %" PRIu32 " is %" PRId64,
                               path, d, dims[d]);
    int64_t numel = count_elements(ndim, dims);
    if (numel < 0)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "%s: array too large", path);
    if (numel > 0 && !data)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "%s: no data", path);

    /* The dictionary exactly as numpy's repr-based writer spells it. */
    char dict[NPY_HEADER_MAX];
    size_t n = (size_t)snprintf(dict, sizeof dict,
                                "{'descr': '%s', 'fortran_order': False, "
                                "'shape': (",
                                descr);
    for (uint32_t d = 0; d < ndim; d++)
        n += (size_t)snprintf(dict + n, sizeof dict - n, "%s%" PRId64, d ? ", " : "", dims[d]);
    n += (size_t)snprintf(dict + n, sizeof dict - n, "%s), }", ndim == 1 ? "," : "");
    if (ndim > 0) {
        int digits = snprintf(NULL, 0, "%" PRId64, dims[0]);
        for (int i = digits; i < NPY_GROWTH_DIGITS; i++)
            dict[n++] = ' ';
    }
    size_t hlen = n + 1; /* with the final newline */
    size_t pad = NPY_ALIGN - (NPY_MAGIC_LEN + 2 + 2 + hlen) % NPY_ALIGN;
    size_t header_len = hlen + pad;
    size_t prefix = NPY_MAGIC_LEN + 2 + 2 + header_len;
    size_t data_bytes = (size_t)numel * 4;
    if (data_bytes > SIZE_MAX - prefix)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "%s: array too large", path);

    unsigned char *buf = malloc(prefix + data_bytes);
    if (!buf)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "%s: out of memory for %zu bytes", path,
                           prefix + data_bytes);
    memcpy(buf, NPY_MAGIC, NPY_MAGIC_LEN);
    buf[6] = 1; /* format version 1.0 */
    buf[7] = 0;
    buf[8] = (unsigned char)(header_len & 0xff);
    buf[9] = (unsigned char)(header_len >> 8);
    memcpy(buf + 10, dict, n);
    memset(buf + 10 + n, ' ', pad);
    buf[prefix - 1] = '\n';
    copy_elements(buf + prefix, data, (size_t)numel, !host_is_little_endian());

    xpb_status st = xpb_atomic_write(path, buf, prefix + data_bytes, err);
    free(buf);
    return st;
}

/* ---- reader ---- */

/* A cursor over the header text. */
struct cursor {
    const char *p, *end;
};

static void skip_space(struct cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static int eat(struct cursor *c, char ch)
{
    skip_space(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

/* A quoted Python string literal without escapes into out (NUL-terminated). */
static int parse_string(struct cursor *c, char *out, size_t size)
{
    skip_space(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
        return 0;
    char q = *c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != q) {
        if (*c->p == '\\' || n + 1 >= size)
            return 0;
        out[n++] = *c->p++;
    }
    if (c->p >= c->end)
        return 0;
    c->p++;
    out[n] = '\0';
    return 1;
}

static int parse_word(struct cursor *c, const char *word)
{
    skip_space(c);
    size_t n = strlen(word);
    if ((size_t)(c->end - c->p) >= n && memcmp(c->p, word, n) == 0) {
        c->p += n;
        return 1;
    }
    return 0;
}

/* "(2, 3)", "(5,)", "()" */
static int parse_shape(struct cursor *c, struct xpb_npy_array *a, int *too_many)
{
    if (!eat(c, '('))
        return 0;
    a->ndim = 0;
    for (;;) {
        skip_space(c);
        if (eat(c, ')'))
            return 1;
        if (c->p >= c->end || *c->p < '0' || *c->p > '9')
            return 0;
        int64_t v = 0;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
            if (v > (INT64_MAX - 9) / 10)
                return 0;
            v = v * 10 + (*c->p++ - '0');
        }
        if (c->p < c->end && *c->p == 'L') /* Python 2 long */
            c->p++;
        if (a->ndim == XPB_NPY_MAX_DIMS) {
            *too_many = 1;
            return 0;
        }
        a->dims[a->ndim++] = v;
        if (!eat(c, ',')) {
            return eat(c, ')');
        }
    }
}

/* Parses the header dictionary into a (dtype, ndim, dims) and *big_endian. */
static xpb_status parse_header(struct xpb_npy_array *a, int *big_endian, const char *text,
                               size_t len, const char *path, xpb_err *err)
{
    struct cursor c = {text, text + len};
    int have_descr = 0, have_order = 0, have_shape = 0, too_many = 0;
    char key[32], descr[32];
    if (!eat(&c, '{'))
        goto bad;
    while (!eat(&c, '}')) {
        if (!parse_string(&c, key, sizeof key) || !eat(&c, ':'))
            goto bad;
        if (strcmp(key, "descr") == 0 && !have_descr) {
            if (!parse_string(&c, descr, sizeof descr))
                goto bad;
            have_descr = 1;
        } else if (strcmp(key, "fortran_order") == 0 && !have_order) {
            if (parse_word(&c, "True"))
                return xpb_err_set(err, XPB_UNSUPPORTED,
                                   "%s: Fortran-order arrays are not "
                                   "supported",
                                   path);
            if (!parse_word(&c, "False"))
                goto bad;
            have_order = 1;
        } else if (strcmp(key, "shape") == 0 && !have_shape) {
            if (!parse_shape(&c, a, &too_many)) {
                if (too_many)
                    return xpb_err_set(err, XPB_UNSUPPORTED, "%s: more than %d dimensions", path,
                                       XPB_NPY_MAX_DIMS);
                goto bad;
            }
            have_shape = 1;
        } else {
            goto bad;
        }
        if (!eat(&c, ',')) {
            if (!eat(&c, '}'))
                goto bad;
            break;
        }
    }
    skip_space(&c);
    if (c.p != c.end || !have_descr || !have_order || !have_shape)
        goto bad;
    if (strcmp(descr, "<f4") == 0 || strcmp(descr, ">f4") == 0)
        a->dtype = XPB_DTYPE_F32;
    else if (strcmp(descr, "<i4") == 0 || strcmp(descr, ">i4") == 0)
        a->dtype = XPB_DTYPE_I32;
    else
        return xpb_err_set(err, XPB_UNSUPPORTED,
                           "%s: dtype '%s' is not supported (only <f4 and "
                           "<i4)",
                           path, descr);
    *big_endian = descr[0] == '>';
    return XPB_OK;
bad:
    return xpb_err_set(err, XPB_PARSE_ERROR, "%s: malformed .npy header: %.*s", path,
                       (int)(len > 200 ? 200 : len), text);
}

void xpb_npy_free(struct xpb_npy_array *array)
{
    if (!array)
        return;
    free(array->data);
    memset(array, 0, sizeof *array);
}

/* The magic and version of the open file f: *header_len gets the header's length and *prefix
 * the bytes before the header (10 for version 1.0, 12 for 2.0 and 3.0). */
static xpb_status read_preamble(size_t *header_len, size_t *prefix, FILE *f, const char *path,
                                xpb_err *err)
{
    unsigned char pre[12];
    if (fread(pre, 1, 10, f) < 10 || memcmp(pre, NPY_MAGIC, NPY_MAGIC_LEN) != 0)
        return xpb_err_set(err, XPB_PARSE_ERROR, "%s: not a .npy file (bad magic)", path);
    if (pre[6] == 1 && pre[7] == 0) {
        *header_len = (size_t)pre[8] | (size_t)pre[9] << 8;
        *prefix = 10;
    } else if ((pre[6] == 2 || pre[6] == 3) && pre[7] == 0) {
        if (fread(pre + 10, 1, 2, f) != 2)
            return xpb_err_set(err, XPB_PARSE_ERROR, "%s: truncated header", path);
        *header_len =
            (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
        *prefix = 12;
    } else {
        return xpb_err_set(err, XPB_UNSUPPORTED, "%s: .npy format version %u.%u is not supported",
                           path, pre[6], pre[7]);
    }
    if (*header_len > NPY_HEADER_MAX * 16)
        return xpb_err_set(err, XPB_PARSE_ERROR, "%s: header of %zu bytes is implausible", path,
                           *header_len);
    return XPB_OK;
}

/* The header dictionary (header_len bytes of f) into a's dtype, ndim, dims and numel. */
static xpb_status read_header(struct xpb_npy_array *a, int *big_endian, FILE *f, size_t header_len,
                              const char *path, xpb_err *err)
{
    xpb_status st;
    char *header = malloc(header_len + 1);
    if (!header)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "%s: out of memory", path);
    if (fread(header, 1, header_len, f) != header_len || header_len == 0 ||
        header[header_len - 1] != '\n') {
        st = xpb_err_set(err, XPB_PARSE_ERROR, "%s: truncated header", path);
        goto free_header;
    }
    header[header_len] = '\0';
    if ((st = parse_header(a, big_endian, header, header_len, path, err)) != XPB_OK)
        goto free_header;
    int64_t numel = count_elements(a->ndim, a->dims);
    if (numel < 0) {
        st = xpb_err_set(err, XPB_PARSE_ERROR, "%s: array too large", path);
        goto free_header;
    }
    a->numel = (size_t)numel;
free_header:
    free(header);
    return st;
}

/* The data of f (a->numel elements after `offset` bytes of preamble and header) into a->data,
 * in host byte order. The file must hold exactly that much. */
static xpb_status read_data(struct xpb_npy_array *a, int big_endian, FILE *f, size_t offset,
                            const char *path, xpb_err *err)
{
    size_t bytes = a->numel * 4;
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) &&
        (uint64_t)sb.st_size != (uint64_t)offset + bytes)
        return xpb_err_set(err, XPB_PARSE_ERROR,
                           "%s: file has %lld bytes of data, the header announces %zu", path,
                           (long long)sb.st_size - (long long)offset, bytes);
    unsigned char *raw = malloc(bytes ? bytes : 1);
    if (!raw)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "%s: out of memory for %zu bytes", path, bytes);
    if (fread(raw, 1, bytes, f) != bytes || fgetc(f) != EOF) {
        free(raw);
        return xpb_err_set(err, XPB_PARSE_ERROR, "%s: data does not match the header's shape",
                           path);
    }
    if (big_endian == host_is_little_endian())
        swap_in_place(raw, a->numel);
    a->data = raw;
    return XPB_OK;
}

xpb_status xpb_npy_read(struct xpb_npy_array *out, const char *path, xpb_err *err)
{
    xpb_status st;
    struct xpb_npy_array a;
    memset(&a, 0, sizeof a);
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f)
        return xpb_err_set(err, XPB_IO_ERROR, "%s: cannot open: %s", path, strerror(errno));
    size_t header_len = 0, prefix = 0;
    int big_endian = 0;
    if ((st = read_preamble(&header_len, &prefix, f, path, err)) == XPB_OK &&
        (st = read_header(&a, &big_endian, f, header_len, path, err)) == XPB_OK &&
        (st = read_data(&a, big_endian, f, prefix + header_len, path, err)) == XPB_OK)
        *out = a;
    fclose(f);
    return st;
}
