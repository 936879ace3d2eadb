/* Real datasets for time-to-accuracy runs: Fashion-MNIST (60,000 training and 10,000 test images,
 * 28x28 grayscale, 10 classes) from Debian's package dataset-fashion-mnist or a folder the
 * scenario names. Loaded whole into memory (about 55 MB) and checked: image and label counts
 * agree, images are 28x28, every label is a class. Samples are normalised with the training
 * set's own mean and standard deviation of pixel / 255 (computed at load, reported). */
#ifndef XPB_CORE_DATASET_H
#define XPB_CORE_DATASET_H

#include <stddef.h>
#include <stdint.h>

#include "base/errmsg.h"
#include "data/idx.h"

/* Where Debian's package installs Fashion-MNIST. */
#define XPB_FASHION_MNIST_DIR "/usr/share/datasets/fashion-mnist"

typedef enum xpb_split {
    XPB_SPLIT_TRAIN = 0,
    XPB_SPLIT_TEST = 1,
} xpb_split;

typedef struct xpb_dataset {
    const char *name; /* "fashion-mnist", static */
    char dir[512];    /* the folder the files came from */
    uint32_t channels, height, width, classes;
    uint32_t count[2]; /* samples per split */
    xpb_idx images[2]; /* per split: [count, height, width] bytes */
    xpb_idx labels[2]; /* per split: [count] bytes, each < classes */
    double mean, std;  /* of pixel / 255 over the training images */
} xpb_dataset;

/* The names `data:` accepts besides "synthetic", NULL-terminated, static. */
extern const char *const xpb_dataset_names[];

/* Loads dataset `name` from folder `dir` (NULL: the package's folder) into *out (the caller
 * frees it with xpb_dataset_close). Fashion-MNIST's files are train-images-idx3-ubyte,
 * train-labels-idx1-ubyte, t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte, each with or
 * without ".gz". Errors name the file and, for a malformed one, the byte offset:
 * XPB_NOT_FOUND (unknown name, or files absent: the message says which package installs them),
 * XPB_IO_ERROR, XPB_PARSE_ERROR (bad magic, dimensions, truncated, label out of range, counts
 * that disagree), XPB_OUT_OF_MEMORY. */
xpb_status xpb_dataset_open(xpb_dataset *out, const char *name, const char *dir, xpb_err *err);

/* Frees the samples; a zeroed struct is a no-op. */
void xpb_dataset_close(xpb_dataset *ds);

/* Sample `index` of `split` normalised, channels x height x width floats into `out`. */
void xpb_dataset_image(const xpb_dataset *ds, xpb_split split, uint32_t index, float *out);

/* The class of sample `index` of `split`. */
int32_t xpb_dataset_label(const xpb_dataset *ds, xpb_split split, uint32_t index);

#endif
