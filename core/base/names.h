/* Canonical spellings of enum values in results, tables and messages. All strings static. */
#ifndef XPB_CORE_NAMES_H
#define XPB_CORE_NAMES_H

#include <stdint.h>

const char *xpb_precision_name(uint32_t precision); /* "fp32", "bf16-mixed", ... */
const char *xpb_mode_name(uint32_t mode);           /* "train", "inference" */
const char *xpb_transfer_name(uint32_t transfer);   /* "resident", "streamed" */
const char *xpb_role_name(uint32_t role);           /* "param", "grad", ... */

#endif
