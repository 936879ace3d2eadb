/* Inside the conformance suite (conformance.h): the two sides a case runs on, the result of one
 * row, and the files that produce rows: conformance_ops.c (an op or chain case),
 * conformance_models.c (a model step) and conformance_report.c (the table and the JSON). */
#ifndef XPB_CORE_CONFORMANCE_RUN_H
#define XPB_CORE_CONFORMANCE_RUN_H

#include <jansson.h>

#include "check/judge.h"
#include <xpubench/backend.h>

#include "base/errmsg.h"
#include "check/conformance_types.h"
#include "plugin/loader.h"
#include "check/conformance_case.h"

/* One side of the comparison: an opened device of a backend. */
typedef struct xpb_ct_side {
    const char *name;           /* the backend's name; static or the caller's */
    const xpb_backend_api *api; /* owned by the plugin */
    xpb_backend *be;            /* owned by the driver, closed at the end of the suite */
} xpb_ct_side;

/* One row of the table. */
typedef struct xpb_ct_result {
    uint32_t verdict; /* xpb_conformance_verdict */
    int together;     /* the gradients were judged as one vector */
    double max_abs;   /* largest |x - ref| */
    double error;     /* the deciding error (compare.h) */
    double tol;       /* its tolerance */
    char worst[64];   /* the tensor furthest from its tolerance */
    char msg[1200];   /* why, for FAIL / UNSUPPORTED / ERROR */
    /* The tensors outside their tolerance, furthest first: `failing` of them, the first
     * n_located with their worst element (judge.h). */
    uint32_t failing;
    uint32_t n_located;
    struct xpb_located located[XPB_COMPARE_LOCATED_MAX];
} xpb_ct_result;

/* The result of a comparison judged by judge.h: PASS or FAIL, error, tolerance, worst, and
 * where the failing tensors fail. */
void xpb_ct_result_from(xpb_ct_result *r, const xpb_compare_verdict *v);

/* Where rows go: the table (opt->out, when not NULL), the JSON file (opt->json_path, when not
 * NULL), the counts. The table is flushed after every row and the JSON file rewritten
 * (atomically, "complete": false) after every row, so that the rows finished before a crash
 * survive it. */
typedef struct xpb_ct_report {
    const char *backend;                /* the backend under test; the caller's */
    const xpb_conformance_options *opt; /* the caller's */
    xpb_conformance_summary *summary;   /* the caller's */
    json_t *rows;                       /* owned by the report: xpb_ct_report_free */
    xpb_status json_status;             /* the first failed write of the JSON file */
    xpb_err json_err;                   /* its message */
} xpb_ct_report;

/* Starts a report of `backend` with `opt` into *summary (zeroed): prints the table's title and
 * header, writes the JSON file with no row yet. */
void xpb_ct_report_begin(xpb_ct_report *rep, const char *backend,
                         const xpb_conformance_options *opt, xpb_conformance_summary *summary);
/* One row: printed, appended to the JSON file and counted. */
void xpb_ct_report_row(xpb_ct_report *rep, const char *name, const char *shape,
                       const xpb_ct_result *r);
/* The summary line, and the JSON file marked complete. XPB_OK, or the status of the first
 * write of the JSON file that failed (message in err). */
xpb_status xpb_ct_report_end(xpb_ct_report *rep, xpb_err *err);
void xpb_ct_report_free(xpb_ct_report *rep);

/* Runs op or chain case `c` on both sides with the same inputs and judges it into *r. */
void xpb_ct_run_case(xpb_ct_result *r, const xpb_ct_side *test, const xpb_ct_side *ref,
                     const xpb_ct_case *c, const xpb_conformance_options *opt);

/* One training step of every model plugin of `registry` at reduced size (not the heavy ones
 * when opt->quick), twice (keep_all, and as a benchmark compiles it): a "forward" and a
 * "gradients" row each, into `rep`. */
void xpb_ct_model_cases(xpb_ct_report *rep, const xpb_registry *registry, const xpb_ct_side *test,
                        const xpb_ct_side *ref, const xpb_conformance_options *opt);

#endif
