/* Loading and checking a real dataset (see dataset.h). */
#include "data/dataset.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char *const xpb_dataset_names[] = {"fashion-mnist", NULL};

static const char *const file_stem[2][2] = {
    {"train-images-idx3-ubyte", "train-labels-idx1-ubyte"},
    {"t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"},
};

/* The path of `stem` in `dir`, compressed or not, into buf; 0 when neither exists. */
static int find_file(char *buf, size_t size, const char *dir, const char *stem)
{
    snprintf(buf, size, "%s/%s.gz", dir, stem);
    if (access(buf, F_OK) == 0)
        return 1;
    snprintf(buf, size, "%s/%s", dir, stem);
    return access(buf, F_OK) == 0;
}

/* Reads one split's images and labels and checks them against each other. */
static xpb_status load_split(xpb_dataset *ds, xpb_split split, xpb_err *err)
{
    char images[600], labels[600];
    xpb_status st;
    int have_images = find_file(images, sizeof images, ds->dir, file_stem[split][0]);
    int have_labels = find_file(labels, sizeof labels, ds->dir, file_stem[split][1]);
    if (!have_images || !have_labels)
        return xpb_err_set(err, XPB_NOT_FOUND,
                           "%s: %s(.gz) not found: data: %s needs the files of Debian's package "
                           "dataset-fashion-mnist (apt-get install dataset-fashion-mnist, or "
                           "scripts/deps.sh data) or a data_dir holding them",
                           ds->dir, file_stem[split][have_images ? 1 : 0], ds->name);
    if ((st = xpb_idx_read(&ds->images[split], images, 3, err)) ||
        (st = xpb_idx_read(&ds->labels[split], labels, 1, err)))
        return st;
    const xpb_idx *im = &ds->images[split], *lb = &ds->labels[split];
    if (im->dims[1] != ds->height || im->dims[2] != ds->width)
        return xpb_err_set(err, XPB_PARSE_ERROR,
                           "%s: bytes 8-15: images of %ux%u pixels, expected %ux%u for %s", images,
                           im->dims[1], im->dims[2], ds->height, ds->width, ds->name);
    if (im->dims[0] != lb->dims[0])
        return xpb_err_set(err, XPB_PARSE_ERROR,
                           "%s: byte 4: %u labels, but %s holds %u images (byte 4): the files do "
                           "not belong together",
                           labels, lb->dims[0], images, im->dims[0]);
    for (size_t i = 0; i < lb->count; i++)
        if (lb->data[i] >= ds->classes)
            return xpb_err_set(err, XPB_PARSE_ERROR,
                               "%s: byte %zu: label %u of sample %zu is not a class (0..%u)",
                               labels, 8 + i, lb->data[i], i, ds->classes - 1);
    ds->count[split] = im->dims[0];
    return XPB_OK;
}

/* Mean and standard deviation of pixel / 255 over the training images. */
static void statistics(xpb_dataset *ds)
{
    const xpb_idx *im = &ds->images[XPB_SPLIT_TRAIN];
    double sum = 0, sq = 0;
    for (size_t i = 0; i < im->count; i++) {
        double v = im->data[i] / 255.0;
        sum += v;
        sq += v * v;
    }
    double n = (double)im->count;
    ds->mean = sum / n;
    double var = sq / n - ds->mean * ds->mean;
    ds->std = var > 0 ? sqrt(var) : 1.0;
}

xpb_status xpb_dataset_open(xpb_dataset *out, const char *name, const char *dir, xpb_err *err)
{
    memset(out, 0, sizeof *out);
    if (!name || strcmp(name, "fashion-mnist") != 0)
        return xpb_err_set(err, XPB_NOT_FOUND, "unknown dataset '%s' (known: fashion-mnist)",
                           name ? name : "(null)");
    out->name = xpb_dataset_names[0];
    snprintf(out->dir, sizeof out->dir, "%s", dir && dir[0] ? dir : XPB_FASHION_MNIST_DIR);
    out->channels = 1;
    out->height = out->width = 28;
    out->classes = 10;
    xpb_status st;
    if ((st = load_split(out, XPB_SPLIT_TRAIN, err)) ||
        (st = load_split(out, XPB_SPLIT_TEST, err))) {
        xpb_dataset_close(out);
        return st;
    }
    statistics(out);
    return XPB_OK;
}

void xpb_dataset_close(xpb_dataset *ds)
{
    if (!ds)
        return;
    for (int s = 0; s < 2; s++) {
        xpb_idx_free(&ds->images[s]);
        xpb_idx_free(&ds->labels[s]);
    }
    memset(ds, 0, sizeof *ds);
}

void xpb_dataset_image(const xpb_dataset *ds, xpb_split split, uint32_t index, float *out)
{
    size_t n = (size_t)ds->height * ds->width;
    const uint8_t *px = ds->images[split].data + (size_t)index * n;
    double scale = 1.0 / (255.0 * ds->std), shift = ds->mean / ds->std;
    for (size_t i = 0; i < n; i++)
        out[i] = (float)(px[i] * scale - shift);
}

int32_t xpb_dataset_label(const xpb_dataset *ds, xpb_split split, uint32_t index)
{
    return ds->labels[split].data[index];
}
