/* Canonical spellings of enum values in results, tables and messages. All strings static. */
#ifndef XPB_CORE_NAMES_H
#define XPB_CORE_NAMES_H

#include <stdint.h>

/* The reference backend: the numerical oracle every other backend is checked against. */
#define XPB_REFERENCE_BACKEND "cpu_ref"

/* Precision policies: the one table of their names. `name` is what results and tables write;
 * `alias` is the short spelling scenarios and options also accept. */
typedef struct xpb_precision_spelling {
    uint32_t precision; /* xpb_precision */
    const char *name;   /* "bf16-mixed" */
    const char *alias;  /* "bf16" */
} xpb_precision_spelling;
/* Every policy, in enum order, terminated by {0, NULL, NULL}. */
extern const xpb_precision_spelling xpb_precision_spellings[];
/* NULL-terminated canonical names, for enumerations in validators. */
extern const char *const xpb_precision_names[];

/* The policy spelled `text` (name or alias) in *out; 0 on success, -1 when unknown. */
int xpb_precision_parse(uint32_t *out, const char *text);
/* "fp32, tf32, bf16-mixed (bf16) or fp16-mixed (fp16)": for "expected ..." messages. */
const char *xpb_precision_expected(void);

/* What a run does with its model. */
typedef enum xpb_mode {
    XPB_MODE_TRAIN = 1,
    XPB_MODE_INFERENCE = 2,
    XPB_MODE_TTA = 3, /* time to accuracy: train on real data until a test accuracy */
} xpb_mode;

const char *xpb_precision_name(uint32_t precision); /* "fp32", "bf16-mixed", ... */
const char *xpb_mode_name(uint32_t mode);           /* "train", "inference", "tta" */
const char *xpb_transfer_name(uint32_t transfer);   /* "resident", "streamed" */
const char *xpb_role_name(uint32_t role);           /* "param", "grad", ... */

#endif
