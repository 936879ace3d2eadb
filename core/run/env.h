/* The environment a result was measured in: OS, CPU, memory, compiler, libraries, plugins. */
#ifndef XPB_CORE_ENV_H
#define XPB_CORE_ENV_H

#include <jansson.h>
#include <stdint.h>

#include "loader.h"

/* A new "environment" object (docs/results.md). Caller owns it (json_decref). */
json_t *xpb_env_collect(const xpb_registry *registry);

/* The CPU model name from /proc/cpuinfo into buf ("unknown" when absent); returns buf. */
const char *xpb_env_cpu_model(char *buf, size_t size);

/* Peak resident set size of this process in bytes (getrusage). */
uint64_t xpb_env_peak_rss(void);

#endif
