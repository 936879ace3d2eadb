/* .npy writer and reader: byte-exact headers (as numpy 1.24's np.save writes them), little-
 * endian data, round trips, malformed files, and an optional cross-check against numpy. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <xpubench/program.h>

#include "check/npy.h"

static char *test_dir;

static int setup(void **state)
{
    (void)state;
    const char *tmp = getenv("TMPDIR");
    char templ[512];
    snprintf(templ, sizeof templ, "%s/xpb_test_npy_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(templ))
        return -1;
    test_dir = strdup(templ);
    return test_dir ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    DIR *d = opendir(test_dir);
    struct dirent *e;
    char path[1024];
    while (d && (e = readdir(d)) != NULL) {
        snprintf(path, sizeof path, "%s/%s", test_dir, e->d_name);
        if (e->d_name[0] != '.' || (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0))
            unlink(path);
    }
    if (d)
        closedir(d);
    rmdir(test_dir);
    free(test_dir);
    return 0;
}

static void path_of(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", test_dir, name);
}

static unsigned char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    unsigned char *buf = malloc(1 << 16);
    assert_non_null(buf);
    *len = fread(buf, 1, 1 << 16, f);
    fclose(f);
    return buf;
}

static void write_raw(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* The 128-byte header numpy writes: magic, version 1.0, length 118, dict, `spaces`, '\n'. */
static void expected_header(unsigned char out[128], const char *dict, size_t spaces)
{
    memcpy(out, "\x93NUMPY\x01\x00\x76\x00", 10);
    size_t n = strlen(dict);
    assert_int_equal(10 + n + spaces + 1, 128);
    memcpy(out + 10, dict, n);
    memset(out + 10 + n, ' ', spaces);
    out[127] = '\n';
}

/* Writes the array, checks the file byte for byte, reads it back and compares. */
static void check_exact(const char *name, uint32_t dtype, uint32_t ndim, const int64_t *dims,
                        const void *data, const char *dict, size_t spaces,
                        const unsigned char *data_bytes, size_t n_data_bytes)
{
    char path[1024];
    path_of(path, sizeof path, name);
    xpb_err err = {{0}};
    if (xpb_npy_write(path, dtype, ndim, dims, data, &err) != XPB_OK)
        fail_msg("%s", err.msg);
    unsigned char want[128];
    expected_header(want, dict, spaces);
    size_t len;
    unsigned char *got = read_file(path, &len);
    assert_int_equal(len, 128 + n_data_bytes);
    assert_memory_equal(got, want, 128);
    if (n_data_bytes)
        assert_memory_equal(got + 128, data_bytes, n_data_bytes);
    free(got);

    struct xpb_npy_array a;
    if (xpb_npy_read(&a, path, &err) != XPB_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(a.dtype, dtype);
    assert_int_equal(a.ndim, ndim);
    size_t numel = 1;
    for (uint32_t d = 0; d < ndim; d++) {
        assert_int_equal(a.dims[d], dims[d]);
        numel *= (size_t)dims[d];
    }
    assert_int_equal(a.numel, numel);
    if (numel)
        assert_memory_equal(a.data, data, numel * 4);
    xpb_npy_free(&a);
    assert_null(a.data);
}

static void test_f32_matrix(void **state)
{
    (void)state;
    const float data[6] = {1.0f, -2.5f, 0.0f, 3.25f, 0.5f, 65504.0f};
    const unsigned char bytes[24] = {
        0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x20, 0xc0, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x50, 0x40, 0x00, 0x00, 0x00, 0x3f, 0x00, 0xe0, 0x7f, 0x47,
    };
    const int64_t dims[2] = {2, 3};
    check_exact("m.npy", XPB_DTYPE_F32, 2, dims, data,
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 58, bytes, 24);
}

static void test_i32_vector(void **state)
{
    (void)state;
    const int32_t data[5] = {1, -1, 256, 0, 2147483647};
    const unsigned char bytes[20] = {
        0x01, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x00, 0x01,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0x7f,
    };
    const int64_t dims[1] = {5};
    check_exact("v.npy", XPB_DTYPE_I32, 1, dims, data,
                "{'descr': '<i4', 'fortran_order': False, 'shape': (5,), }", 60, bytes, 20);
}

static void test_scalar_empty_and_4d(void **state)
{
    (void)state;
    const float one = 1.0f;
    const unsigned char one_bytes[4] = {0x00, 0x00, 0x80, 0x3f};
    check_exact("s.npy", XPB_DTYPE_F32, 0, NULL, &one,
                "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 62, one_bytes, 4);

    const int64_t empty_dims[1] = {0};
    check_exact("e.npy", XPB_DTYPE_F32, 1, empty_dims, NULL,
                "{'descr': '<f4', 'fortran_order': False, 'shape': (0,), }", 60, NULL, 0);

    /* A huge first dimension with no elements: the growth padding shrinks. */
    const int64_t wide_dims[2] = {123456789012, 0};
    check_exact("w.npy", XPB_DTYPE_I32, 2, wide_dims, NULL,
                "{'descr': '<i4', 'fortran_order': False, 'shape': (123456789012, 0), }", 47, NULL,
                0);

    float t[120];
    unsigned char t_bytes[480];
    for (int i = 0; i < 120; i++) {
        t[i] = (float)i; /* small integers: exact, bytes computed from the IEEE layout */
        uint32_t bits = 0;
        if (i) {
            int e = 0;
            while ((i >> (e + 1)) != 0)
                e++;
            bits = (uint32_t)(127 + e) << 23 | (uint32_t)((i << (23 - e)) & 0x7fffff);
        }
        for (int b = 0; b < 4; b++)
            t_bytes[4 * i + b] = (unsigned char)(bits >> (8 * b));
    }
    const int64_t dims4[4] = {2, 3, 4, 5};
    check_exact("t.npy", XPB_DTYPE_F32, 4, dims4, t,
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 4, 5), }", 52, t_bytes,
                480);
}

static void test_write_errors(void **state)
{
    (void)state;
    char path[1024], listing_path[1024];
    path_of(path, sizeof path, "bad.npy");
    xpb_err err = {{0}};
    float x = 0;
    int64_t dims[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    assert_int_equal(xpb_npy_write(path, 7, 1, dims, &x, &err), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(err.msg, "dtype"));
    assert_int_equal(xpb_npy_write(path, XPB_DTYPE_F32, 9, dims, &x, &err), XPB_INVALID_ARGUMENT);
    int64_t neg[2] = {2, -1};
    assert_int_equal(xpb_npy_write(path, XPB_DTYPE_F32, 2, neg, &x, &err), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(err.msg, "-1"));
    int64_t two[1] = {2};
    assert_int_equal(xpb_npy_write(path, XPB_DTYPE_F32, 1, two, NULL, &err), XPB_INVALID_ARGUMENT);
    int64_t huge[2] = {INT64_MAX, INT64_MAX};
    assert_int_equal(xpb_npy_write(path, XPB_DTYPE_F32, 2, huge, &x, &err), XPB_INVALID_ARGUMENT);
    snprintf(listing_path, sizeof listing_path, "%s", path);
    assert_int_equal(access(listing_path, F_OK), -1);
}

/* Hand-made files: other header spellings that numpy also reads, and malformed ones. */
static xpb_status read_bytes(struct xpb_npy_array *a, const void *bytes, size_t len, xpb_err *err)
{
    char path[1024];
    path_of(path, sizeof path, "in.npy");
    write_raw(path, bytes, len);
    return xpb_npy_read(a, path, err);
}

/* A file "magic ver 0 len header data" with the header padded to 64 (version 1) bytes. */
static size_t make_file(unsigned char *out, int version, const char *dict, const void *data,
                        size_t data_len)
{
    size_t prefix = version == 1 ? 10 : 12;
    size_t n = strlen(dict);
    size_t total = (prefix + n + 1 + 63) / 64 * 64;
    size_t hlen = total - prefix;
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (unsigned char)version;
    out[7] = 0;
    out[8] = (unsigned char)(hlen & 0xff);
    out[9] = (unsigned char)(hlen >> 8);
    if (version != 1) {
        out[10] = 0;
        out[11] = 0;
    }
    memcpy(out + prefix, dict, n);
    memset(out + prefix + n, ' ', hlen - n - 1);
    out[total - 1] = '\n';
    memcpy(out + total, data, data_len);
    return total + data_len;
}

static void test_read_variants(void **state)
{
    (void)state;
    unsigned char file[1024];
    struct xpb_npy_array a;
    xpb_err err = {{0}};
    const unsigned char be[8] = {0x3f, 0x80, 0x00, 0x00, 0xc0, 0x20, 0x00, 0x00}; /* 1, -2.5 */
    const unsigned char le[8] = {0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x20, 0xc0};

    /* version 2.0, keys in another order, double quotes, no trailing comma, big-endian */
    size_t n =
        make_file(file, 2, "{\"shape\": (2,), \"fortran_order\": False, \"descr\": '>f4'}", be, 8);
    if (read_bytes(&a, file, n, &err) != XPB_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(a.dtype, XPB_DTYPE_F32);
    assert_int_equal(a.ndim, 1);
    assert_int_equal(a.dims[0], 2);
    assert_true(((float *)a.data)[0] == 1.0f);
    assert_true(((float *)a.data)[1] == -2.5f);
    xpb_npy_free(&a);

    /* version 1.0 with the shape as (1,2) */
    n = make_file(file, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,2), }", le, 8);
    assert_int_equal(read_bytes(&a, file, n, &err), XPB_OK);
    assert_int_equal(a.ndim, 2);
    assert_int_equal(a.dims[1], 2);
    xpb_npy_free(&a);

    struct {
        const char *dict;
        size_t data_len;
        xpb_status status;
        const char *says;
    } bad[] = {
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", 8, XPB_UNSUPPORTED, "<f8"},
        {"{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", 8, XPB_UNSUPPORTED, "Fortran"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", 4,
         XPB_UNSUPPORTED, "dimensions"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 8, XPB_PARSE_ERROR,
         "header announces 12"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 8, XPB_PARSE_ERROR,
         "header announces 4"},
        {"{'descr': '<f4', 'shape': (2,), }", 8, XPB_PARSE_ERROR, "malformed"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", 8, XPB_PARSE_ERROR,
         "malformed"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", 8, XPB_PARSE_ERROR,
         "malformed"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,) } x", 8, XPB_PARSE_ERROR,
         "malformed"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        n = make_file(file, 1, bad[i].dict, le, bad[i].data_len);
        xpb_status st = read_bytes(&a, file, n, &err);
        if (st != bad[i].status || !strstr(err.msg, bad[i].says) || a.data)
            fail_msg("case %zu: expected %d with \"%s\", got %d: %s", i, bad[i].status, bad[i].says,
                     st, err.msg);
    }

    /* Not a .npy file at all, a cut header, an unknown version, a missing file. */
    assert_int_equal(read_bytes(&a, "PK\x03\x04 zip", 8, &err), XPB_PARSE_ERROR);
    assert_non_null(strstr(err.msg, "magic"));
    n = make_file(file, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", le, 8);
    assert_int_equal(read_bytes(&a, file, 40, &err), XPB_PARSE_ERROR);
    assert_non_null(strstr(err.msg, "truncated"));
    file[6] = 4;
    assert_int_equal(read_bytes(&a, file, n, &err), XPB_UNSUPPORTED);
    char path[1024];
    path_of(path, sizeof path, "missing.npy");
    assert_int_equal(xpb_npy_read(&a, path, &err), XPB_IO_ERROR);
    xpb_npy_free(NULL);
}

/* With numpy installed (/usr/bin/python3), numpy reads our files, writes identical bytes for
 * the same arrays, and we read what numpy writes. */
static void test_numpy_cross_check(void **state)
{
    (void)state;
    if (access("/usr/bin/python3", X_OK) != 0 ||
        system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") != 0)
        skip();
    char ours[1024], theirs[1024], cmd[4096];
    path_of(ours, sizeof ours, "ours.npy");
    path_of(theirs, sizeof theirs, "theirs.npy");
    const float data[6] = {1.0f, -2.5f, 0.0f, 3.25f, 0.5f, 65504.0f};
    const int64_t dims[2] = {2, 3};
    xpb_err err = {{0}};
    assert_int_equal(xpb_npy_write(ours, XPB_DTYPE_F32, 2, dims, data, &err), XPB_OK);
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c '\n"
             "import io, sys, numpy as np\n"
             "a = np.load(sys.argv[1])\n"
             "assert a.dtype == np.float32 and a.shape == (2, 3), (a.dtype, a.shape)\n"
             "assert a.tolist() == [[1.0, -2.5, 0.0], [3.25, 0.5, 65504.0]], a.tolist()\n"
             "v = tuple(int(x) for x in np.__version__.split(\".\")[:2])\n"
             "if v >= (1, 23):\n"
             "    b = io.BytesIO(); np.save(b, a)\n"
             "    assert b.getvalue() == open(sys.argv[1], \"rb\").read(), \"bytes differ\"\n"
             "np.save(sys.argv[2], np.arange(-6, 18, dtype=\"<i4\").reshape(2, 3, 4))\n"
             "' '%s' '%s'",
             ours, theirs);
    assert_int_equal(system(cmd), 0);
    struct xpb_npy_array a;
    if (xpb_npy_read(&a, theirs, &err) != XPB_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(a.dtype, XPB_DTYPE_I32);
    assert_int_equal(a.ndim, 3);
    assert_int_equal(a.dims[0], 2);
    assert_int_equal(a.dims[1], 3);
    assert_int_equal(a.dims[2], 4);
    for (int i = 0; i < 24; i++)
        assert_int_equal(((int32_t *)a.data)[i], i - 6);
    xpb_npy_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f32_matrix),          cmocka_unit_test(test_i32_vector),
        cmocka_unit_test(test_scalar_empty_and_4d), cmocka_unit_test(test_write_errors),
        cmocka_unit_test(test_read_variants),       cmocka_unit_test(test_numpy_cross_check),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
