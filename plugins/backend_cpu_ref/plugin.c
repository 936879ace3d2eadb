/* The reference backend's ABI glue: the descriptor (XPB_DEFINE_PLUGIN), the device (one: the
 * host CPU, listed without opening it), compile (the SDK's program validation, then one zeroed
 * host buffer per tensor), write/read, run (every op of a phase through its kernel, in order),
 * optional profiling and memory statistics. Simple on purpose: this is the file a backend
 * author copies first. It runs single-threaded and fuses nothing, so it claims no capability
 * bit; profile_read and memory_stats say by being present what it can report. */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xpubench/xpubench.h>

#include "ref.h"

#define REF_ERR_SIZE 1024

struct xpb_backend {
    uint32_t device;
    char err[REF_ERR_SIZE];
};

struct xpb_executable {
    const xpb_program *prog;      /* borrowed: valid until destroy (backend.h) */
    const xpb_communicator *comm; /* borrowed (compile options, ABI 1.2); NULL: one process */
    uint32_t keep_all;
    uint32_t profiling;
    void **buf;      /* one buffer per tensor, xpb_tensor_bytes long */
    uint64_t *calls; /* per op: completed kernel calls (DROPOUT's call_index) */
    double *seconds; /* per op: kernel time, when profiling */
    uint64_t bytes;  /* sum of the tensor buffers */
    char err[REF_ERR_SIZE];
};

/* Message of the last failed open(); static storage (backend.h: last_error(NULL)). */
static char open_err[REF_ERR_SIZE];

static xpb_status set_err(char *buf, xpb_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Formats into `buf` (REF_ERR_SIZE bytes) and returns `st`. */
static xpb_status set_err(char *buf, xpb_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, REF_ERR_SIZE, fmt, ap);
    va_end(ap);
    return st;
}

/* Copies `src` into the fixed array `dst` of `size` bytes, truncating, always terminated. */
static void copy_str(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src);
}

/* ---- device ---- */

static xpb_status ref_open(xpb_backend **out, uint32_t device_index)
{
    if (!out)
        return set_err(open_err, XPB_INVALID_ARGUMENT, "out is NULL");
    *out = NULL;
    if (device_index != 0)
        return set_err(open_err, XPB_NO_DEVICE,
                       "no device %u: the reference backend has one device, 0 (the "
                       "host CPU)",
                       device_index);
    xpb_backend *be = calloc(1, sizeof *be);
    if (!be)
        return set_err(open_err, XPB_OUT_OF_MEMORY, "out of memory");
    be->device = device_index;
    open_err[0] = '\0';
    *out = be;
    return XPB_OK;
}

static void ref_close(xpb_backend *be)
{
    free(be);
}

/* The backend's message buffer (owned by `be`, valid until its next call), or the static
 * message of the last failed open when `be` is NULL. Never NULL. */
static const char *ref_last_error(const xpb_backend *be)
{
    return be ? be->err : open_err;
}

/* The CPU's model name from /proc/cpuinfo ("model name", or "Hardware"/"Model" on some ARM
 * kernels) into dst; "unknown CPU" when there is none. */
static void cpu_model_name(char *dst, size_t size)
{
    copy_str(dst, size, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0 && strncmp(line, "Hardware", 8) != 0 &&
            strncmp(line, "Model", 5) != 0)
            continue;
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        char *v = colon + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        v[strcspn(v, "\r\n")] = '\0';
        if (*v) {
            copy_str(dst, size, v);
            break;
        }
    }
    fclose(f);
}

/* What the one device is, for describe_device and device_info alike (nothing needs an opened
 * device): writes only the members out->struct_size covers (an older host's struct is
 * shorter). */
static void describe_cpu(xpb_device_info *out)
{
    if (XPB_HAS_MEMBER(out, xpb_device_info, name))
        cpu_model_name(out->name, sizeof out->name);
    if (XPB_HAS_MEMBER(out, xpb_device_info, driver))
        out->driver[0] = '\0';
    if (XPB_HAS_MEMBER(out, xpb_device_info, libraries))
        copy_str(out->libraries, sizeof out->libraries, "none (plain C reference)");
    if (XPB_HAS_MEMBER(out, xpb_device_info, precisions))
        out->precisions = XPB_PRECISION_BIT(XPB_PRECISION_FP32);
    if (XPB_HAS_MEMBER(out, xpb_device_info, threads))
        out->threads = 1;
    if (XPB_HAS_MEMBER(out, xpb_device_info, memory_bytes))
        out->memory_bytes = 0; /* host memory */
    if (XPB_HAS_MEMBER(out, xpb_device_info, peak_flops))
        for (int p = 0; p < XPB_PEAK_SLOTS; p++)
            out->peak_flops[p] = 0.0; /* unknown: a reference is not timed for its peak */
    /* ABI 1.1 */
    if (XPB_HAS_MEMBER(out, xpb_device_info, kind))
        out->kind = XPB_DEVICE_CPU;
    if (XPB_HAS_MEMBER(out, xpb_device_info, emulated_precisions))
        out->emulated_precisions = 0; /* fp32 is native everywhere */
}

static xpb_status ref_device_count(uint32_t *count)
{
    if (!count)
        return set_err(open_err, XPB_INVALID_ARGUMENT, "count is NULL");
    *count = 1;
    return XPB_OK;
}

static xpb_status ref_describe_device(uint32_t index, xpb_device_info *out)
{
    if (!out || out->struct_size < sizeof(size_t))
        return set_err(open_err, XPB_INVALID_ARGUMENT, "out is NULL or its struct_size is 0");
    if (index != 0)
        return set_err(open_err, XPB_NO_DEVICE,
                       "no device %u: the reference backend has one device, 0 (the "
                       "host CPU)",
                       index);
    describe_cpu(out);
    return XPB_OK;
}

static xpb_status ref_device_info(xpb_backend *be, xpb_device_info *out)
{
    if (!be)
        return XPB_INVALID_ARGUMENT;
    if (!out || out->struct_size < sizeof(size_t))
        return set_err(be->err, XPB_INVALID_ARGUMENT, "out is NULL or its struct_size is 0");
    describe_cpu(out);
    return XPB_OK;
}

/* ---- compile ---- */

static void ref_destroy(xpb_executable *exe)
{
    if (!exe)
        return;
    if (exe->buf)
        for (uint32_t i = 0; i < exe->prog->n_tensors; i++)
            free(exe->buf[i]);
    free(exe->buf);
    free(exe->calls);
    free(exe->seconds);
    free(exe);
}

static xpb_status ref_compile(xpb_executable **out, xpb_backend *be, const xpb_program *prog,
                              const xpb_compile_options *opts)
{
    if (!be)
        return XPB_INVALID_ARGUMENT;
    if (!out || !prog)
        return set_err(be->err, XPB_INVALID_ARGUMENT, "out or program is NULL");
    *out = NULL;
    uint32_t precision = XPB_MEMBER_OR(opts, xpb_compile_options, precision, XPB_PRECISION_FP32);
    if (precision != XPB_PRECISION_FP32)
        return set_err(be->err, XPB_UNSUPPORTED,
                       "cpu_ref supports only fp32 (precision policy %u requested)", precision);
    /* Every rule of docs/ops.md, from the SDK (include/xpubench/shapes.h): the kernels trust
     * every shape they see. An op or attribute bit of a later op set is refused by name. */
    char msg[REF_ERR_SIZE];
    xpb_status st = xpb_program_validate(prog, msg, sizeof msg);
    if (st != XPB_OK)
        return set_err(be->err, st, "%s", msg);
    /* ALL_REDUCE averages over the host's communicator (ABI 1.2); a host that gives none runs
     * one process, where the mean over one rank is the identity. */
    const xpb_communicator *comm = XPB_MEMBER_OR(opts, xpb_compile_options, comm, NULL);
    if (comm &&
        (comm->struct_size < offsetof(xpb_communicator, last_error) + sizeof comm->last_error ||
         !comm->allreduce_sum_f32 || !comm->last_error || comm->size == 0))
        return set_err(be->err, XPB_INVALID_ARGUMENT,
                       "the communicator lacks allreduce_sum_f32 or "
                       "last_error, or has no rank");
    /* The SDK may know ops this file has no kernel for yet (headers of a later op set). */
    for (uint32_t i = 0; i < prog->n_ops; i++) {
        const xpb_op *op = xpb_program_op(prog, i);
        if (!ref_kernel_for(op->kind))
            return set_err(be->err, XPB_UNSUPPORTED,
                           "op %u %s (layer '%s'): not implemented by the reference "
                           "backend",
                           i, xpb_op_kind_name(prog, op), op->layer ? op->layer : "");
    }

    xpb_executable *exe = calloc(1, sizeof *exe);
    if (!exe)
        return set_err(be->err, XPB_OUT_OF_MEMORY, "out of memory");
    exe->prog = prog;
    exe->comm = comm;
    exe->keep_all = XPB_MEMBER_OR(opts, xpb_compile_options, keep_all, 0u);
    exe->profiling = XPB_MEMBER_OR(opts, xpb_compile_options, profiling, 0u);
    /* calloc(0) may return NULL: allocate at least one element so NULL always means failure. */
    exe->buf = calloc((size_t)prog->n_tensors + 1, sizeof *exe->buf);
    exe->calls = calloc((size_t)prog->n_ops + 1, sizeof *exe->calls);
    exe->seconds = calloc((size_t)prog->n_ops + 1, sizeof *exe->seconds);
    if (!exe->buf || !exe->calls || !exe->seconds)
        goto free_exe;
    for (uint32_t i = 0; i < prog->n_tensors; i++) {
        size_t bytes = xpb_tensor_bytes(xpb_program_tensor(prog, i));
        exe->buf[i] = calloc(1, bytes);
        if (!exe->buf[i])
            goto free_exe;
        exe->bytes += bytes;
    }
    *out = exe;
    return XPB_OK;

free_exe:
    ref_destroy(exe);
    return set_err(be->err, XPB_OUT_OF_MEMORY, "out of memory");
}

/* The executable's message buffer (owned by `exe`, valid until its next call); a static
 * string for NULL. Never NULL. */
static const char *ref_exe_last_error(const xpb_executable *exe)
{
    return exe ? exe->err : "no executable (NULL handle)";
}

/* ---- data ---- */

/* Checks a write/read of `bytes` to tensor `tensor` that needs `flag`. */
static xpb_status check_transfer(xpb_executable *exe, const char *what, uint32_t tensor,
                                 const void *data, size_t bytes, uint32_t flag)
{
    const xpb_program *p = exe->prog;
    if (tensor >= p->n_tensors)
        return set_err(exe->err, XPB_INVALID_ARGUMENT,
                       "%s: tensor %u does not exist (the program has %u tensors)", what, tensor,
                       p->n_tensors);
    const xpb_tensor_desc *t = xpb_program_tensor(p, tensor);
    const char *name = t->name ? t->name : "(unnamed)";
    if (!data)
        return set_err(exe->err, XPB_INVALID_ARGUMENT, "%s: tensor %u '%s': data is NULL", what,
                       tensor, name);
    if (bytes != xpb_tensor_bytes(t))
        return set_err(exe->err, XPB_INVALID_ARGUMENT,
                       "%s: tensor %u '%s' holds %zu bytes, the call gave %zu", what, tensor, name,
                       xpb_tensor_bytes(t), bytes);
    if (!exe->keep_all && !(t->flags & flag))
        return set_err(exe->err, XPB_INVALID_ARGUMENT,
                       "%s: tensor %u '%s' lacks XPB_TENSOR_HOST_%s (and keep_all is "
                       "off)",
                       what, tensor, name, flag == XPB_TENSOR_HOST_WRITE ? "WRITE" : "READ");
    return XPB_OK;
}

static xpb_status ref_write(xpb_executable *exe, uint32_t tensor, const void *data, size_t bytes)
{
    if (!exe)
        return XPB_INVALID_ARGUMENT;
    xpb_status st = check_transfer(exe, "write", tensor, data, bytes, XPB_TENSOR_HOST_WRITE);
    if (st != XPB_OK)
        return st;
    memcpy(exe->buf[tensor], data, bytes);
    return XPB_OK;
}

static xpb_status ref_read(xpb_executable *exe, uint32_t tensor, void *data, size_t bytes)
{
    if (!exe)
        return XPB_INVALID_ARGUMENT;
    xpb_status st = check_transfer(exe, "read", tensor, data, bytes, XPB_TENSOR_HOST_READ);
    if (st != XPB_OK)
        return st;
    memcpy(data, exe->buf[tensor], bytes);
    return XPB_OK;
}

/* ---- run ---- */

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Runs op `i` through its kernel. Descriptors and operand counts were checked by compile. */
static xpb_status run_op(xpb_executable *exe, uint32_t i)
{
    const xpb_program *p = exe->prog;
    const xpb_op *op = xpb_program_op(p, i);
    /* The kernels read a complete xpb_op: an older host's op is shorter (op_stride), the
     * members it lacks are zero, which keeps every op's earlier meaning. */
    xpb_op full;
    memset(&full, 0, sizeof full);
    memcpy(&full, op, p->op_stride < sizeof full ? p->op_stride : sizeof full);
    ref_op_args a = {.op = &full, .call_index = exe->calls[i], .comm = exe->comm};
    char msg[REF_ERR_SIZE] = "";
    a.err = msg;
    a.err_size = sizeof msg;
    for (uint32_t k = 0; k < op->n_inputs; k++) {
        uint32_t t = xpb_op_input(p, op, k);
        if (t != XPB_NO_TENSOR) {
            a.in_desc[k] = xpb_program_tensor(p, t);
            a.in[k] = exe->buf[t];
        }
    }
    for (uint32_t k = 0; k < op->n_outputs; k++) {
        uint32_t t = xpb_op_output(p, op, k);
        if (t != XPB_NO_TENSOR) {
            a.out_desc[k] = xpb_program_tensor(p, t);
            a.out[k] = exe->buf[t];
        }
    }
    ref_kernel_fn kernel = ref_kernel_for(op->kind);
    double t0 = exe->profiling ? now_seconds() : 0.0;
    xpb_status st = kernel(&a);
    if (exe->profiling)
        exe->seconds[i] += now_seconds() - t0;
    exe->calls[i]++;
    if (st != XPB_OK && msg[0]) /* kernel messages name the op and its layer */
        return set_err(exe->err, st, "op %u: %s", i, msg);
    if (st != XPB_OK)
        return set_err(exe->err, st, "op %u %s (layer '%s'): %s", i, xpb_op_name(op->kind),
                       op->layer ? op->layer : "", xpb_strerror(st));
    return XPB_OK;
}

static xpb_status ref_run(xpb_executable *exe, uint32_t phase)
{
    if (!exe)
        return XPB_INVALID_ARGUMENT;
    const xpb_program *p = exe->prog;
    if (phase >= p->n_phases)
        return set_err(exe->err, XPB_INVALID_ARGUMENT,
                       "run: phase %u does not exist (the program has %u phases)", phase,
                       p->n_phases);
    const xpb_phase *ph = xpb_program_phase(p, phase); /* by stride: phases may grow */
    for (uint32_t i = ph->first_op; i < ph->first_op + ph->n_ops; i++) {
        xpb_status st = run_op(exe, i);
        if (st != XPB_OK)
            return st;
    }
    return XPB_OK;
}

static xpb_status ref_synchronize(xpb_executable *exe)
{
    (void)exe; /* run() is synchronous */
    return XPB_OK;
}

/* ---- optional ---- */

static xpb_status ref_profile_read(xpb_executable *exe, xpb_op_profile *out, uint32_t capacity,
                                   uint32_t *count)
{
    if (!exe)
        return XPB_INVALID_ARGUMENT;
    if (!count || (capacity && !out))
        return set_err(exe->err, XPB_INVALID_ARGUMENT,
                       "profile_read: count is NULL, or out is NULL with capacity %u", capacity);
    if (!exe->profiling)
        return set_err(exe->err, XPB_INVALID_ARGUMENT,
                       "profile_read: the executable was compiled without profiling");
    uint32_t n = exe->prog->n_ops;
    for (uint32_t i = 0; i < n && i < capacity; i++) {
        out[i].op = i;
        out[i].fused_into = XPB_NO_TENSOR;
        out[i].calls = exe->calls[i];
        out[i].seconds = exe->seconds[i];
    }
    *count = n;
    return XPB_OK;
}

static xpb_status ref_memory_stats(xpb_executable *exe, xpb_memory_stats *out)
{
    if (!exe)
        return XPB_INVALID_ARGUMENT;
    if (!out)
        return set_err(exe->err, XPB_INVALID_ARGUMENT, "memory_stats: out is NULL");
    /* Every buffer lives from compile to destroy: in use = peak. */
    if (XPB_HAS_MEMBER(out, xpb_memory_stats, bytes_in_use))
        out->bytes_in_use = exe->bytes;
    if (XPB_HAS_MEMBER(out, xpb_memory_stats, peak_bytes))
        out->peak_bytes = exe->bytes;
    return XPB_OK;
}

/* ---- descriptor ---- */

static const xpb_backend_api ref_api = {
    .struct_size = sizeof(xpb_backend_api),
    .open = ref_open,
    .close = ref_close,
    .last_error = ref_last_error,
    .device_info = ref_device_info,
    .compile = ref_compile,
    .destroy = ref_destroy,
    .exe_last_error = ref_exe_last_error,
    .write = ref_write,
    .read = ref_read,
    .run = ref_run,
    .synchronize = ref_synchronize,
    .profile_read = ref_profile_read,
    .memory_stats = ref_memory_stats,
    .energy_read = NULL, /* no energy meter */
    .device_count = ref_device_count,
    .describe_device = ref_describe_device,
    /* write_async, host_alloc, host_free: NULL. Streamed batches go through write(), which is a
     * memcpy into host memory anyway. */
};

XPB_DEFINE_PLUGIN(XPB_PLUGIN_BACKEND, "cpu_ref", "1.2.0",
                  "plain C reference backend: the numerical oracle (fp32, one thread)", 0, &ref_api)
