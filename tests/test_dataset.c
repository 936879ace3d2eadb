/* Real data (core/data/): IDX files plain and gzipped, every malformed case refused with the
 * file and the byte offset, Fashion-MNIST's four files checked against each other, the epoch
 * permutation and the ranks' disjoint shards. The installed package (dataset-fashion-mnist) is
 * read when it is there. */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "data/dataset.h"
#include "data/epoch.h"
#include "data/idx.h"

static char dir[256];

static int setup(void **state)
{
    (void)state;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/xpb_test_dataset_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[1024];
    while (d && (e = readdir(d)) != NULL)
        if (e->d_name[0] != '.') {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    if (d)
        closedir(d);
    rmdir(dir);
    return 0;
}

/* Writes `n` bytes to dir/name, gzipped when `gz`; the path into out. */
static void put(char *out, size_t size, const char *name, const void *data, size_t n, int gz)
{
    snprintf(out, size, "%s/%s", dir, name);
    if (gz) {
        gzFile f = gzopen(out, "wb");
        assert_non_null(f);
        if (n)
            assert_int_equal(gzwrite(f, data, (unsigned)n), (int)n);
        assert_int_equal(gzclose(f), Z_OK);
    } else {
        FILE *f = fopen(out, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(data, 1, n, f), n);
        fclose(f);
    }
}

/* An IDX header of unsigned bytes with `ndim` big-endian dims into buf; its length. */
static size_t header(uint8_t *buf, uint32_t ndim, const uint32_t *dims)
{
    buf[0] = buf[1] = 0;
    buf[2] = 0x08;
    buf[3] = (uint8_t)ndim;
    for (uint32_t d = 0; d < ndim; d++) {
        buf[4 + 4 * d] = (uint8_t)(dims[d] >> 24);
        buf[5 + 4 * d] = (uint8_t)(dims[d] >> 16);
        buf[6 + 4 * d] = (uint8_t)(dims[d] >> 8);
        buf[7 + 4 * d] = (uint8_t)dims[d];
    }
    return 4 + 4 * ndim;
}

/* Reading `bytes` as an IDX of `ndim` dims fails with `status` and a message holding every
 * string of `want` (NULL-terminated). */
static void expect_refused(const uint8_t *bytes, size_t n, int gz, uint32_t ndim, xpb_status status,
                           const char *const *want)
{
    char path[600];
    put(path, sizeof path, gz ? "bad.gz" : "bad", bytes, n, gz);
    xpb_idx idx;
    xpb_err err = {{0}};
    assert_int_equal(xpb_idx_read(&idx, path, ndim, &err), status);
    assert_null(idx.data);
    assert_non_null(strstr(err.msg, path));
    for (; *want; want++)
        if (!strstr(err.msg, *want))
            fail_msg("message '%s' lacks '%s'", err.msg, *want);
}

static void test_idx_round_trip_plain_and_gzipped(void **state)
{
    (void)state;
    for (int gz = 0; gz < 2; gz++) {
        uint8_t buf[64];
        const uint32_t dims[3] = {2, 3, 4};
        size_t h = header(buf, 3, dims);
        for (int i = 0; i < 24; i++)
            buf[h + i] = (uint8_t)(i * 7);
        char path[600];
        put(path, sizeof path, gz ? "ok.gz" : "ok", buf, h + 24, gz);
        xpb_idx idx;
        xpb_err err = {{0}};
        assert_int_equal(xpb_idx_read(&idx, path, 3, &err), XPB_OK);
        assert_int_equal(idx.ndim, 3);
        assert_int_equal(idx.dims[0], 2);
        assert_int_equal(idx.dims[2], 4);
        assert_int_equal(idx.count, 24);
        assert_int_equal(idx.data[23], (uint8_t)(23 * 7));
        xpb_idx_free(&idx);
        assert_null(idx.data);
    }
}

static void test_idx_refuses_malformed_files(void **state)
{
    (void)state;
    uint8_t buf[64];
    const uint32_t dims[1] = {5};
    for (int gz = 0; gz < 2; gz++) {
        size_t h = header(buf, 1, dims);
        memset(buf + h, 1, 5);
        /* bad magic */
        buf[0] = 0x1f;
        expect_refused(buf, h + 5, gz, 1, XPB_PARSE_ERROR,
                       (const char *const[]){"not an IDX file", "byte 0", NULL});
        buf[0] = 0;
        /* element type */
        buf[2] = 0x0D;
        expect_refused(buf, h + 5, gz, 1, XPB_PARSE_ERROR,
                       (const char *const[]){"byte 2", "0x0d", "unsigned bytes", NULL});
        buf[2] = 0x08;
        /* wrong number of dimensions */
        expect_refused(buf, h + 5, gz, 3, XPB_PARSE_ERROR,
                       (const char *const[]){"byte 3", "1 dimensions, expected 3", NULL});
        /* truncated magic, truncated header, truncated elements */
        expect_refused(buf, 3, gz, 1, XPB_PARSE_ERROR,
                       (const char *const[]){"truncated at byte 3", NULL});
        expect_refused(buf, 6, gz, 1, XPB_PARSE_ERROR,
                       (const char *const[]){"truncated at byte 6", NULL});
        expect_refused(buf, h + 3, gz, 1, XPB_PARSE_ERROR,
                       (const char *const[]){"truncated at byte 11", "5 bytes of elements", NULL});
        /* trailing bytes */
        expect_refused(buf, h + 6, gz, 1, XPB_PARSE_ERROR,
                       (const char *const[]){"trailing bytes at byte 13", NULL});
        /* a zero dimension */
        const uint32_t zero[1] = {0};
        h = header(buf, 1, zero);
        expect_refused(buf, h, gz, 1, XPB_PARSE_ERROR,
                       (const char *const[]){"byte 4", "dimension 0 is 0", NULL});
        /* dimensions that ask for more than the limit, refused before any allocation */
        const uint32_t huge[3] = {100000, 100000, 28};
        h = header(buf, 3, huge);
        expect_refused(buf, h, gz, 3, XPB_PARSE_ERROR,
                       (const char *const[]){"byte 8", "larger than", NULL});
    }
    /* a file that is not there */
    char path[600];
    xpb_idx idx;
    xpb_err err = {{0}};
    snprintf(path, sizeof path, "%s/absent", dir);
    assert_int_equal(xpb_idx_read(&idx, path, 1, &err), XPB_IO_ERROR);
    assert_non_null(strstr(err.msg, "cannot open"));
}

/* A small dataset in dir: `n_train` and `n_test` images of height x 28 with labels (label
 * i % 10; `labels_train` of them for the training split), gzipped or not; with `bad_label`,
 * test label 2 is 10, not a class. */
static void write_dataset(uint32_t n_train, uint32_t n_test, int gz, uint32_t height,
                          uint32_t labels_train, int bad_label)
{
    static const char *stems[2][2] = {{"train-images-idx3-ubyte", "train-labels-idx1-ubyte"},
                                      {"t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"}};
    for (int s = 0; s < 2; s++) {
        uint32_t n = s == 0 ? n_train : n_test;
        size_t px = (size_t)n * height * 28;
        uint8_t *buf = malloc(16 + px);
        assert_non_null(buf);
        const uint32_t idims[3] = {n, height, 28};
        size_t h = header(buf, 3, idims);
        for (size_t i = 0; i < px; i++)
            buf[h + i] = (uint8_t)(i % 251);
        char name[128], path[1024];
        snprintf(name, sizeof name, "%s%s", stems[s][0], gz ? ".gz" : "");
        put(path, sizeof path, name, buf, h + px, gz);
        uint32_t nl = s == 0 ? labels_train : n_test;
        const uint32_t ldims[1] = {nl};
        h = header(buf, 1, ldims);
        for (uint32_t i = 0; i < nl; i++)
            buf[h + i] = (uint8_t)(i % 10);
        if (bad_label && s == 1)
            buf[h + 2] = 10;
        snprintf(name, sizeof name, "%s%s", stems[s][1], gz ? ".gz" : "");
        put(path, sizeof path, name, buf, h + nl, gz);
        free(buf);
    }
}

static void test_dataset_checks_its_files_against_each_other(void **state)
{
    (void)state;
    xpb_dataset ds;
    xpb_err err = {{0}};
    write_dataset(30, 20, 1, 28, 30, 0);
    assert_int_equal(xpb_dataset_open(&ds, "fashion-mnist", dir, &err), XPB_OK);
    assert_int_equal(ds.count[XPB_SPLIT_TRAIN], 30);
    assert_int_equal(ds.count[XPB_SPLIT_TEST], 20);
    assert_int_equal(xpb_dataset_label(&ds, XPB_SPLIT_TEST, 13), 3);
    float img[28 * 28];
    xpb_dataset_image(&ds, XPB_SPLIT_TRAIN, 1, img);
    /* pixel 0 of sample 1 is (784 % 251) / 255, normalised by the training set's statistics */
    double want = ((784 % 251) / 255.0 - ds.mean) / ds.std;
    assert_true(fabs(img[0] - want) < 1e-5);
    assert_true(ds.std > 0 && ds.mean > 0);
    xpb_dataset_close(&ds);

    teardown(NULL), setup(NULL);
    write_dataset(30, 20, 0, 28, 29, 0); /* plain files, counts that disagree */
    assert_int_equal(xpb_dataset_open(&ds, "fashion-mnist", dir, &err), XPB_PARSE_ERROR);
    assert_non_null(strstr(err.msg, "29 labels, but"));
    assert_non_null(strstr(err.msg, "train-labels-idx1-ubyte"));

    teardown(NULL), setup(NULL);
    write_dataset(30, 20, 1, 28, 30, 1); /* a label out of range, at byte 8 + 2 */
    assert_int_equal(xpb_dataset_open(&ds, "fashion-mnist", dir, &err), XPB_PARSE_ERROR);
    assert_non_null(strstr(err.msg, "t10k-labels-idx1-ubyte.gz: byte 10: label 10 of sample 2"));

    teardown(NULL), setup(NULL);
    write_dataset(30, 20, 1, 27, 30, 0); /* wrong image size */
    assert_int_equal(xpb_dataset_open(&ds, "fashion-mnist", dir, &err), XPB_PARSE_ERROR);
    assert_non_null(strstr(err.msg, "images of 27x28 pixels, expected 28x28"));

    teardown(NULL), setup(NULL); /* nothing there: the package is named */
    assert_int_equal(xpb_dataset_open(&ds, "fashion-mnist", dir, &err), XPB_NOT_FOUND);
    assert_non_null(strstr(err.msg, "dataset-fashion-mnist"));
    assert_int_equal(xpb_dataset_open(&ds, "imagenet", dir, &err), XPB_NOT_FOUND);
    assert_non_null(strstr(err.msg, "unknown dataset 'imagenet'"));
}

/* Debian's package, when installed: 60,000 + 10,000 samples, every class, the known statistics
 * of Fashion-MNIST (mean 0.2860, std 0.3530). */
static void test_the_installed_package(void **state)
{
    (void)state;
    if (access(XPB_FASHION_MNIST_DIR "/train-images-idx3-ubyte.gz", R_OK) != 0)
        skip();
    xpb_dataset ds;
    xpb_err err = {{0}};
    assert_int_equal(xpb_dataset_open(&ds, "fashion-mnist", NULL, &err), XPB_OK);
    assert_int_equal(ds.count[XPB_SPLIT_TRAIN], 60000);
    assert_int_equal(ds.count[XPB_SPLIT_TEST], 10000);
    assert_true(fabs(ds.mean - 0.2860) < 5e-4);
    assert_true(fabs(ds.std - 0.3530) < 5e-4);
    uint32_t per_class[10] = {0};
    for (uint32_t i = 0; i < 10000; i++)
        per_class[xpb_dataset_label(&ds, XPB_SPLIT_TEST, i)]++;
    for (int c = 0; c < 10; c++)
        assert_int_equal(per_class[c], 1000);
    xpb_dataset_close(&ds);
}

static void test_epoch_orders_and_shards(void **state)
{
    (void)state;
    enum { N = 1003 };
    static uint32_t a[N], b[N], c[N];
    xpb_epoch_order(a, N, 42, 0);
    xpb_epoch_order(b, N, 42, 0);
    xpb_epoch_order(c, N, 42, 1);
    assert_memory_equal(a, b, sizeof a); /* the same seed and epoch: the same order */
    assert_memory_not_equal(a, c, sizeof a);
    static uint8_t seen[N];
    for (int i = 0; i < N; i++)
        seen[a[i]]++;
    for (int i = 0; i < N; i++)
        assert_int_equal(seen[i], 1); /* a permutation */
    assert_int_equal(xpb_epoch_batches(N, 10, 3), 33);
    assert_int_equal(xpb_epoch_batches(N, 10, 1), 100);
    /* three ranks at batch 10 read disjoint samples, and together what one process reads at 30 */
    memset(seen, 0, sizeof seen);
    for (uint32_t k = 0; k < 33; k++)
        for (uint32_t r = 0; r < 3; r++)
            for (uint32_t i = 0; i < 10; i++) {
                uint32_t s = xpb_epoch_sample(a, k, 10, 3, r, i);
                assert_int_equal(s, xpb_epoch_sample(a, k, 30, 1, 0, r * 10 + i));
                seen[s]++;
            }
    uint32_t total = 0;
    for (int i = 0; i < N; i++) {
        assert_true(seen[i] <= 1);
        total += seen[i];
    }
    assert_int_equal(total, 990);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_idx_round_trip_plain_and_gzipped),
        cmocka_unit_test(test_idx_refuses_malformed_files),
        cmocka_unit_test(test_dataset_checks_its_files_against_each_other),
        cmocka_unit_test(test_the_installed_package),
        cmocka_unit_test(test_epoch_orders_and_shards),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
