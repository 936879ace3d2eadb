/* What the backend says about its device, the host's CPUs (device_info with an opened backend,
 * describe_device without one): the CPU's name, kind CPU, host memory (memory_bytes 0), the
 * thread count, oneDNN's version with the ISA it dispatches to, the precision policies and
 * which of them the CPU only emulates, and peak FLOP/s per policy.
 *
 * Native or emulated bf16 is decided from two sources that must agree (isa.c): what CPUID says
 * the processor has, and the ISA oneDNN dispatches to (dnnl_get_effective_cpu_isa, which
 * DNNL_MAX_CPU_ISA can lower). bf16-mixed is native with AVX512-BF16 or AMX-BF16; on an
 * AVX-512 CPU without them oneDNN still runs it, converting in software on avx512_core kernels
 * (Conv6 bf16 training measured 2.3x slower than fp32 on such a Xeon), so it is offered as
 * emulated.
 *
 * Peaks are measured, not computed: a VM does not tell its clock or how many FMA ports a core
 * has, so the backend times one dense product per precision (dnnl_sgemm 2048^3 for fp32, a
 * bf16 matmul primitive 2048^3 for bf16-mixed; best of a few runs, on the backend's default
 * thread count) the first time device_info asks in this process. That is the rate oneDNN itself
 * reaches on large GEMMs here, a practical ceiling for "share of peak". describe_device does
 * not measure (it must be cheap): its peaks are 0, unknown. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <omp.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "isa.h"
#include "odn.h"

/* The features CPUID reports (isa.h bits); 0 on other architectures. */
static uint32_t cpuid_features(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid_max(0, NULL) < 7)
        return 0;
    __cpuid_count(7, 0, a, b, c, d);
    uint32_t ebx = b, edx = d, sub1_eax = 0;
    if (a >= 1) { /* EAX of subleaf 0: the highest subleaf */
        __cpuid_count(7, 1, a, b, c, d);
        sub1_eax = a;
    }
    return odn_isa_from_cpuid(ebx, edx, sub1_eax);
#else
    return 0;
#endif
}

/* The features the ISA oneDNN dispatches to uses (oneDNN's ISA values are supersets of the
 * bits of the ISAs below them). */
static uint32_t dispatch_features(void)
{
    unsigned isa = (unsigned)dnnl_get_effective_cpu_isa();
    uint32_t f = 0;
    if ((isa & (unsigned)dnnl_cpu_isa_avx512_core) == (unsigned)dnnl_cpu_isa_avx512_core)
        f |= ODN_ISA_AVX512_CORE;
    if ((isa & (unsigned)dnnl_cpu_isa_avx512_core_bf16) == (unsigned)dnnl_cpu_isa_avx512_core_bf16)
        f |= ODN_ISA_AVX512_BF16;
    if ((isa & (unsigned)dnnl_cpu_isa_avx512_core_amx) == (unsigned)dnnl_cpu_isa_avx512_core_amx)
        f |= ODN_ISA_AMX_TILE | ODN_ISA_AMX_BF16;
    return f;
}

uint32_t odn_cpu_features(void)
{
    return cpuid_features() & dispatch_features();
}

static void cpu_name(char *dst, size_t size)
{
    snprintf(dst, size, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0)
            continue;
        char *v = strchr(line, ':');
        if (!v)
            continue;
        v++;
        while (*v == ' ' || *v == '\t')
            v++;
        v[strcspn(v, "\r\n")] = '\0';
        if (*v) {
            snprintf(dst, size, "%s", v);
            break;
        }
    }
    fclose(f);
}

/* "oneDNN 2.6.3 (avx512_core_bf16, OpenMP runtime)": the version, the ISA oneDNN dispatches
 * to and its threading runtime. */
static void library_string(char *dst, size_t size)
{
    const dnnl_version_t *v = dnnl_version();
    const char *isa = dnnl_cpu_isa2str(dnnl_get_effective_cpu_isa());
    if (strncmp(isa, "cpu_isa_", 8) == 0)
        isa += 8;
    snprintf(dst, size, "oneDNN %d.%d.%d (%s, %s runtime)", v->major, v->minor, v->patch, isa,
             dnnl_runtime2str(v->cpu_runtime));
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Timed runs of each peak measurement after one warm-up run (JIT, page faults, thread pool):
 * the fastest counts, so that a busy moment on a shared machine does not lower the peak below
 * what a model then reaches (2048^3 takes ~60 ms in fp32 on 2 AVX-512 cores). */
#define PEAK_RUNS 6

static double measure_sgemm(void)
{
    const int64_t n = 2048;
    float *a = malloc((size_t)(n * n) * sizeof *a), *b = malloc((size_t)(n * n) * sizeof *b),
          *c = malloc((size_t)(n * n) * sizeof *c);
    double best = 0.0;
    if (a && b && c) {
        for (int64_t i = 0; i < n * n; i++) {
            a[i] = (float)(i % 7) * 0.25f;
            b[i] = (float)(i % 5) * 0.5f;
        }
        for (int r = 0; r <= PEAK_RUNS; r++) {
            double t0 = now_seconds();
            if (dnnl_sgemm('N', 'N', n, n, n, 1.0f, a, n, b, n, 0.0f, c, n) != dnnl_success)
                break;
            double dt = now_seconds() - t0;
            double rate = 2.0 * (double)n * (double)n * (double)n / dt;
            if (r > 0 && rate > best)
                best = rate;
        }
    }
    free(a);
    free(b);
    free(c);
    return best;
}

static double measure_bf16_matmul(xpb_backend *be)
{
    const int64_t n = 2048;
    int64_t dims[2] = {n, n};
    dnnl_memory_desc_t md;
    odn_md_tag(&md, 2, dims, dnnl_bf16, dnnl_ab);
    dnnl_matmul_desc_t d;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_primitive_t prim = NULL;
    dnnl_memory_t m[3] = {NULL, NULL, NULL};
    double best = 0.0;
    if (dnnl_matmul_desc_init(&d, &md, &md, NULL, &md) != dnnl_success ||
        dnnl_primitive_desc_create(&pd, &d, NULL, be->engine, NULL) != dnnl_success ||
        dnnl_primitive_create(&prim, pd) != dnnl_success)
        goto out;
    for (int i = 0; i < 3; i++)
        if (dnnl_memory_create(&m[i], &md, be->engine, DNNL_MEMORY_ALLOCATE) != dnnl_success)
            goto out;
    for (int i = 0; i < 2; i++) {
        void *p;
        dnnl_memory_get_data_handle(m[i], &p);
        uint16_t *h = p;
        for (int64_t k = 0; k < n * n; k++)
            h[k] = odn_f32_to_bf16((float)(k % 7) * 0.25f);
    }
    dnnl_exec_arg_t args[3] = {
        {DNNL_ARG_SRC, m[0]}, {DNNL_ARG_WEIGHTS, m[1]}, {DNNL_ARG_DST, m[2]}};
    for (int r = 0; r <= PEAK_RUNS; r++) {
        double t0 = now_seconds();
        if (dnnl_primitive_execute(prim, be->stream, 3, args) != dnnl_success ||
            dnnl_stream_wait(be->stream) != dnnl_success)
            break;
        double dt = now_seconds() - t0;
        double rate = 2.0 * (double)n * (double)n * (double)n / dt;
        if (r > 0 && rate > best)
            best = rate;
    }
out:
    for (int i = 0; i < 3; i++)
        if (m[i])
            dnnl_memory_destroy(m[i]);
    if (prim)
        dnnl_primitive_destroy(prim);
    if (pd)
        dnnl_primitive_desc_destroy(pd);
    return best;
}

/* Measured once per process (the host calls device_info from one thread at a time). */
static int peaks_done;
static double peaks[XPB_PEAK_SLOTS];
static double bandwidth;
static char bandwidth_source[96];

/* Fills peak[] with the measured rates of the policies in `precisions`. */
static void measure_peaks(double *peak, xpb_backend *be, uint32_t precisions)
{
    if (!peaks_done) {
        int saved = omp_get_max_threads();
        omp_set_num_threads((int)be->default_threads);
        peaks[XPB_PRECISION_FP32] = measure_sgemm();
        if (precisions & XPB_PRECISION_BIT(XPB_PRECISION_BF16_MIXED))
            peaks[XPB_PRECISION_BF16_MIXED] = measure_bf16_matmul(be);
        bandwidth = odn_measure_bandwidth(bandwidth_source, sizeof bandwidth_source,
                                          (int)be->default_threads);
        omp_set_num_threads(saved);
        peaks_done = 1;
    }
    for (int p = 0; p < XPB_PEAK_SLOTS; p++)
        peak[p] = (precisions & XPB_PRECISION_BIT(p)) ? peaks[p] : 0.0;
}

void odn_device_describe(xpb_device_info *out, xpb_backend *be)
{
    uint32_t features = odn_cpu_features();
    uint32_t precisions = odn_isa_precisions(features);
    if (XPB_HAS_MEMBER(out, xpb_device_info, name))
        cpu_name(out->name, sizeof out->name);
    if (XPB_HAS_MEMBER(out, xpb_device_info, driver))
        out->driver[0] = '\0';
    if (XPB_HAS_MEMBER(out, xpb_device_info, libraries))
        library_string(out->libraries, sizeof out->libraries);
    if (XPB_HAS_MEMBER(out, xpb_device_info, precisions))
        out->precisions = precisions;
    if (XPB_HAS_MEMBER(out, xpb_device_info, threads))
        out->threads = be ? be->default_threads : odn_default_threads();
    if (XPB_HAS_MEMBER(out, xpb_device_info, memory_bytes))
        out->memory_bytes = 0; /* host memory */
    if (XPB_HAS_MEMBER(out, xpb_device_info, peak_flops)) {
        if (be)
            measure_peaks(out->peak_flops, be, precisions);
        else
            memset(out->peak_flops, 0, sizeof out->peak_flops);
    }
    if (XPB_HAS_MEMBER(out, xpb_device_info, kind))
        out->kind = XPB_DEVICE_CPU;
    if (XPB_HAS_MEMBER(out, xpb_device_info, emulated_precisions))
        out->emulated_precisions = odn_isa_emulated(features);
    /* ABI 1.3: the limits with their sources; a CPU has no datasheet figures here */
    if (XPB_HAS_MEMBER(out, xpb_device_info, peak_flops_source))
        snprintf(out->peak_flops_source, sizeof out->peak_flops_source, "%s",
                 be ? "measured: dnnl_sgemm fp32 (and bf16 matmul) 2048^3, best of 6" : "");
    if (XPB_HAS_MEMBER(out, xpb_device_info, memory_bandwidth_source)) {
        out->memory_bandwidth = be ? bandwidth : 0.0;
        snprintf(out->memory_bandwidth_source, sizeof out->memory_bandwidth_source, "%s",
                 be ? bandwidth_source : "");
    }
}
