/* The vocabulary of the conformance suite (conformance.h): its options, the verdict of a case,
 * the summary of a run. Shared by the driver and its parts (conformance_run.h). */
#ifndef XPB_CORE_CONFORMANCE_TYPES_H
#define XPB_CORE_CONFORMANCE_TYPES_H

#include <stdint.h>
#include <stdio.h>

typedef struct xpb_conformance_options {
    uint32_t precision;    /* xpb_precision for the backend under test (the reference runs fp32) */
    uint32_t fusion;       /* compile option fusion for the backend under test */
    uint32_t threads;      /* compile option threads for the backend under test (0: its default) */
    int quick;             /* the reduced shape set (seconds instead of minutes) */
    int models;            /* also one training step of every model plugin at reduced size */
    const char *filter;    /* only cases whose name contains this; NULL: every case */
    uint64_t seed;         /* input data */
    FILE *out;             /* where the table and the summary go; NULL: nowhere */
    int verbose;           /* also one line per compared tensor */
    const char *json_path; /* also write the results as JSON there; NULL: no file */
} xpb_conformance_options;

/* The verdict of one case (one row of the table). Numbers are fixed. */
typedef enum xpb_conformance_verdict {
    XPB_CONFORMANCE_PASS = 0,        /* within tolerance */
    XPB_CONFORMANCE_FAIL = 1,        /* outside tolerance (or non-finite) */
    XPB_CONFORMANCE_UNSUPPORTED = 2, /* the backend under test refused it (XPB_UNSUPPORTED) */
    XPB_CONFORMANCE_ERROR = 3,       /* it could not run: a failure on either side, no memory */
} xpb_conformance_verdict;
#define XPB_CONFORMANCE_VERDICT_COUNT 4

typedef struct xpb_conformance_summary {
    uint32_t passed;
    uint32_t failed;      /* FAIL and ERROR */
    uint32_t unsupported; /* the backend refused the case (XPB_UNSUPPORTED) */
} xpb_conformance_summary;

/* "PASS", "FAIL", "UNSUPPORTED", "ERROR" (the table's and the JSON's spelling); "?" for any
 * other number. Static. */
const char *xpb_conformance_verdict_name(uint32_t verdict);

#endif
