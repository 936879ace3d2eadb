/* The name of the results schema and the versions this build writes and reads
 * (docs/results.md, "Versions"). */
#ifndef XPB_CORE_SCHEMA_VERSION_H
#define XPB_CORE_SCHEMA_VERSION_H

#define XPB_RESULTS_SCHEMA "xpubench-results"
/* The version this build writes, and the oldest it still reads. */
#define XPB_RESULTS_SCHEMA_VERSION 3
#define XPB_RESULTS_SCHEMA_MIN_VERSION 1

#endif
