/* The environment a result was measured in: OS, CPU, memory, compiler, libraries, plugins. */
#ifndef XPB_CORE_ENV_H
#define XPB_CORE_ENV_H

#include <jansson.h>
#include <stdint.h>

#include "plugin/loader.h"

/* The instruction-set extensions environment.cpu.flags reports when the CPU lists them, in this
 * order: the vector ISAs DL kernels are built for, and the features that decide whether bf16
 * and fp16 run natively (AVX512-BF16, AVX512-FP16, AMX tiles with their BF16, INT8 and FP16
 * units). Names as Linux spells them in /proc/cpuinfo. */
#define XPB_ENV_CPU_FLAGS                                                                          \
    "sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512_vnni", "avx512_bf16",           \
        "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8", "amx_fp16"

/* A new "environment" object (docs/results.md). Caller owns it (json_decref). */
json_t *xpb_env_collect(const xpb_registry *registry);

/* The "cpu" object of the environment from the text of /proc/cpuinfo (`cpuinfo`; NULL is read
 * as empty): "model" (the first "model name", "unknown" when there is none), "cores" (distinct
 * physical id / core id pairs; `logical_cpus` when the text has none), "logical_cpus" and
 * "flags" (those of XPB_ENV_CPU_FLAGS that the first "flags" line lists as whole words, in the
 * order of XPB_ENV_CPU_FLAGS). A new object owned by the caller (json_decref); NULL when out of
 * memory. */
json_t *xpb_env_cpu_from_cpuinfo(const char *cpuinfo, long logical_cpus);

/* The CPU model name from /proc/cpuinfo into buf ("unknown" when absent); returns buf. */
const char *xpb_env_cpu_model(char *buf, size_t size);

/* Peak resident set size of this process in bytes (getrusage). */
uint64_t xpb_env_peak_rss(void);

#endif
