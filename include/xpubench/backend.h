/* xpubench public SDK: the backend interface (the ABI version is plugin.h's).
 *
 * A backend plugin's descriptor (plugin.h) points at a `static const xpb_backend_api`.
 * Life cycle, as the host drives it:
 *
 *   device_count(&n)               how many devices, without opening one (ABI 1.1)
 *   describe_device(i, &info)      what device i is, without opening it (ABI 1.1)
 *   open(&be, device)              one device context; XPB_NO_DEVICE when there is none
 *   device_info(be, &info)         name, driver, precisions, peak FLOP/s
 *   compile(&exe, be, prog, opts)  everything slow happens here, outside the timed region
 *   write(exe, tensor, ...)        parameters, state and the first batch, canonical layout
 *   run(exe, phase) ... synchronize(exe)      the timed part, many times
 *     (streamed batches: write_async(exe, input, ...) before the step's first run)
 *   read(exe, tensor, ...)         losses, outputs, parameters, gradients
 *   destroy(exe); close(be)
 *
 * Threading: the host calls a backend from one thread at a time per `xpb_backend`.
 * Errors: every call that fails returns a status and leaves a message for last_error (on the
 * backend) or exe_last_error (on the executable), valid until the next call on that handle.
 * An op or attribute the backend cannot execute makes compile return XPB_UNSUPPORTED with a
 * message naming the op and its layer. */
#ifndef XPUBENCH_BACKEND_H
#define XPUBENCH_BACKEND_H

#include "comm.h"
#include "plugin.h"
#include "program.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct xpb_backend xpb_backend;       /* opaque: an opened device */
typedef struct xpb_executable xpb_executable; /* opaque: a compiled program */

/* Precision policies. The program is always written in fp32 semantics; a mixed policy keeps
 * fp32 master weights and optimizer state. Numbers are fixed. */
typedef enum xpb_precision {
    XPB_PRECISION_FP32 = 1,
    XPB_PRECISION_TF32 = 2,
    XPB_PRECISION_BF16_MIXED = 3,
    XPB_PRECISION_FP16_MIXED = 4,
} xpb_precision;
#define XPB_PRECISION_COUNT 5 /* one past the last policy: size of per-precision tables */
/* Slots of xpb_device_info.peak_flops, frozen at ABI 1.0 (index 0 unused, 1..4 the policies
 * above): a policy added later gets its peak in a member appended to xpb_device_info. */
#define XPB_PEAK_SLOTS 5
#define XPB_PRECISION_BIT(p) (1u << (p))

/* What kind of processor a device is (ABI 1.1). Numbers are fixed. */
typedef enum xpb_device_kind {
    XPB_DEVICE_UNKNOWN = 0,     /* not said (a backend of ABI 1.0) */
    XPB_DEVICE_CPU = 1,         /* the host's processors, host memory */
    XPB_DEVICE_GPU = 2,         /* a graphics processor with its own memory */
    XPB_DEVICE_ACCELERATOR = 3, /* any other accelerator (NPU, TPU, FPGA ...) */
} xpb_device_kind;

/* How input batches reach the device in timed steps (ABI 1.1 compile option). */
typedef enum xpb_transfer {
    XPB_TRANSFER_RESIDENT = 0, /* written once before the clock; stays on the device */
    XPB_TRANSFER_STREAMED = 1, /* written (write_async when present) in every timed step */
} xpb_transfer;

typedef struct xpb_compile_options {
    size_t struct_size;
    uint32_t precision; /* xpb_precision; a policy the backend cannot honour: XPB_UNSUPPORTED */
    uint32_t fusion;    /* 1: fuse as the backend sees fit; 0: every op is its own kernel */
    uint32_t threads;   /* host threads the backend may use; 0 = its own default */
    uint32_t profiling; /* 1: collect per-op times for profile_read (may slow the run) */
    /* 1: every tensor keeps its value after run() and may be read (no memory reuse, no
     * eliding of intermediates). Used by --dump and the conformance suite. */
    uint32_t keep_all;

    /* ---- ABI 1.1 ---- */
    /* xpb_transfer: STREAMED means the host writes the INPUT tensors in every timed step, with
     * write_async when the backend has it (a backend may double-buffer them). */
    uint32_t transfer;

    /* ---- ABI 1.2 ---- */
    /* The ranks this program's ALL_REDUCE ops average over (comm.h); NULL for a program run by
     * one process. Owned by the host; valid until destroy(exe). */
    const xpb_communicator *comm;
} xpb_compile_options;

/* Filled by device_info. The host sets struct_size; the backend writes only members that
 * struct_size covers. Strings are copied in (NUL-terminated, truncated to fit). */
typedef struct xpb_device_info {
    size_t struct_size;
    char name[128];        /* e.g. "Intel(R) Xeon(R) Platinum 8481C" or "Tesla T4" */
    char driver[128];      /* driver / runtime version, "" when not applicable */
    char libraries[256];   /* "oneDNN 2.6.3 (avx512_core_amx)", "cuDNN 9.1.0, cuBLAS 13.0" */
    uint32_t precisions;   /* XPB_PRECISION_BIT of every supported policy */
    uint32_t threads;      /* threads the device context uses (0 for accelerators) */
    uint64_t memory_bytes; /* device memory, 0 when it is host memory */
    double peak_flops[XPB_PEAK_SLOTS]; /* per policy (index = xpb_precision), FLOP/s; 0: unknown */

    /* ---- ABI 1.1 ---- */
    uint32_t kind; /* xpb_device_kind */
    /* XPB_PRECISION_BIT of the policies among `precisions` that this device runs without
     * native hardware support (bf16 on a CPU without AVX512-BF16 or AMX, say): they work but
     * are slower than the device's fp32, so a run on them is refused unless the scenario
     * allows emulation, and the results say so. */
    uint32_t emulated_precisions;

    /* ---- ABI 1.3: the device's limits, each with where it comes from ---- */
    /* Where peak_flops come from: "measured: dnnl_sgemm 2048^3, 2 threads" or "datasheet". */
    char peak_flops_source[96];
    /* Bytes per second the device's own memory sustains, measured by the backend (a STREAM
     * triad on the run's threads for a CPU, device-to-device copies for a GPU); 0: unknown. */
    double memory_bandwidth;
    char memory_bandwidth_source[96]; /* "measured: STREAM triad, 3 x 64 MiB, 2 threads" */
    /* The vendor's figures, where known (0: unknown): memory bandwidth in bytes/s and peak
     * FLOP/s per policy (index = xpb_precision, as peak_flops). */
    double datasheet_bandwidth;
    double datasheet_flops[XPB_PEAK_SLOTS];
} xpb_device_info;

typedef struct xpb_op_profile {
    uint32_t op;         /* index into program.ops */
    uint32_t fused_into; /* op index whose kernel also did this op's work, or XPB_NO_TENSOR */
    uint64_t calls;
    double seconds; /* total time spent in this op's kernel(s) */
} xpb_op_profile;

typedef struct xpb_memory_stats {
    size_t struct_size;
    uint64_t bytes_in_use; /* memory the executable holds now */
    uint64_t peak_bytes;   /* high-water mark since compile */
} xpb_memory_stats;

typedef struct xpb_backend_api {
    size_t struct_size;

    /* Opens device `device_index` (0-based). *out is owned by the caller and released with
     * close. XPB_NO_DEVICE when the device does not exist (last_error(NULL) explains). */
    xpb_status (*open)(xpb_backend **out, uint32_t device_index);
    void (*close)(xpb_backend *backend); /* NULL is a no-op */
    /* Message of the last failure on `backend`, or of the last failed open when NULL.
     * Owned by the backend (static for NULL), valid until the next call on it; never NULL. */
    const char *(*last_error)(const xpb_backend *backend);
    xpb_status (*device_info)(xpb_backend *backend, xpb_device_info *out);

    /* Compiles `program` for this device. The program (and every string in it) stays valid
     * and unchanged until destroy(*out). *out is released with destroy. */
    xpb_status (*compile)(xpb_executable **out, xpb_backend *backend, const xpb_program *program,
                          const xpb_compile_options *options);
    void (*destroy)(xpb_executable *exe); /* NULL is a no-op */
    /* Like last_error, for an executable. Never NULL. */
    const char *(*exe_last_error)(const xpb_executable *exe);

    /* Copy `bytes` (must equal xpb_tensor_bytes) between host memory in the canonical layout
     * and tensor `tensor`. write needs XPB_TENSOR_HOST_WRITE, read needs XPB_TENSOR_HOST_READ
     * (or keep_all). read waits for pending work that writes the tensor. */
    xpb_status (*write)(xpb_executable *exe, uint32_t tensor, const void *data, size_t bytes);
    xpb_status (*read)(xpb_executable *exe, uint32_t tensor, void *data, size_t bytes);

    /* Runs every op of phase `phase`. May return before the work is done: the host always
     * calls synchronize before it reads the clock or a tensor. */
    xpb_status (*run)(xpb_executable *exe, uint32_t phase);
    /* Waits until all work of previous runs is done; reports errors of asynchronous work. */
    xpb_status (*synchronize)(xpb_executable *exe);

    /* Optional: NULL (or beyond struct_size) means not supported; the host reads them with
     * XPB_MEMBER_OR. */

    /* Per-op times since compile (needs options.profiling). Writes at most `capacity` entries
     * to out and the number available to *count. */
    xpb_status (*profile_read)(xpb_executable *exe, xpb_op_profile *out, uint32_t capacity,
                               uint32_t *count);
    xpb_status (*memory_stats)(xpb_executable *exe, xpb_memory_stats *out);
    /* Cumulative energy of the device in joules since an arbitrary origin. */
    xpb_status (*energy_read)(xpb_backend *backend, double *joules);

    /* ---- ABI 1.1 (optional; read with XPB_MEMBER_OR) ---- */

    /* The number of devices open() accepts (indices 0 .. *count-1), found without opening one.
     * When there is none: *count = 0 and XPB_NO_DEVICE, with the reason in last_error(NULL)
     * ("no NVIDIA driver: libcuda.so.1 not found", "driver 12.2 older than the runtime 13.0").
     * Cheap enough for `xpubench list`. */
    xpb_status (*device_count)(uint32_t *count);
    /* Fills *out (the host sets struct_size; the backend writes only what it covers) for
     * device `index` without opening it: at least name, kind and memory_bytes; what needs an
     * opened device may stay zero. XPB_NO_DEVICE for an index out of range (last_error(NULL)
     * says why). */
    xpb_status (*describe_device)(uint32_t index, xpb_device_info *out);

    /* Starts copying `bytes` (= xpb_tensor_bytes) from host memory `data` into INPUT tensor
     * `tensor` and returns, possibly before the copy is done. The new value is what the next
     * run() reads; work already submitted by earlier run() calls still reads the old value (a
     * backend double-buffers when it overlaps copies with compute). `data` must stay valid and
     * unchanged until the next synchronize(). Needs XPB_TENSOR_HOST_WRITE. */
    xpb_status (*write_async)(xpb_executable *exe, uint32_t tensor, const void *data, size_t bytes);
    /* Host memory the device copies from fastest (page-locked), for the host's staging of
     * streamed batches: *out is owned by the backend and released with host_free before
     * close(backend). XPB_OUT_OF_MEMORY when there is none to give. */
    xpb_status (*host_alloc)(xpb_backend *backend, size_t bytes, void **out);
    void (*host_free)(xpb_backend *backend, void *ptr); /* NULL ptr is a no-op */
} xpb_backend_api;

#ifdef __cplusplus
}
#endif
#endif
