/* A complete, tiny out-of-tree backend, built against the installed SDK of its time (the
 * descriptor records that ABI and op set: XPB_ABI_MINOR, XPB_OPSET_VERSION; an older host or a
 * newer program is handled by the rules of docs/plugin-abi.md): it runs FILL, COPY, ADD and RELU
 * on tensors
 * in host memory. It includes nothing but the installed SDK (<xpubench/xpubench.h>), links
 * nothing of xpubench and exports nothing but xpb_plugin_query. What it shows:
 *
 * - the descriptor and the query in one line (XPB_DEFINE_PLUGIN, at the end);
 * - its device listed without opening it (device_count, describe_device) and described with
 *   the ABI 1.1 members (kind, emulated_precisions), written only where the host's struct_size
 *   reaches;
 * - compile validating the whole program with the SDK's rules (xpb_program_validate), which
 *   refuses an op or attribute bit of a later op set by name, then refusing by name, with its
 *   layer, every op of op set 1 it does not implement;
 * - phases walked by the host's stride (xpb_program_phase), tensors and ops likewise;
 * - errors kept per handle, so that last_error / exe_last_error explain every failure, in the
 *   backend's own words without its name (the host puts "backend 'example': compile: " in
 *   front), and a log line through the host from anywhere in the file (xpb_plugin_log). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xpubench/xpubench.h>

#define EXAMPLE_ERR_SIZE 512

struct xpb_backend {
    char error[EXAMPLE_ERR_SIZE];
};

struct xpb_executable {
    const xpb_program *program; /* the host's; valid until destroy (backend.h) */
    void **data;                /* one host buffer per tensor, xpb_tensor_bytes long */
    uint32_t keep_all;          /* every tensor readable (compile option) */
    char error[EXAMPLE_ERR_SIZE];
};

/* Message of the last failed open / device_count / describe_device (last_error(NULL)). */
static char no_handle_error[EXAMPLE_ERR_SIZE] = "no error";

static xpb_status fail(char *buf, xpb_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Formats the message of a failure into `buf` (EXAMPLE_ERR_SIZE bytes) and returns `st`. */
static xpb_status fail(char *buf, xpb_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, EXAMPLE_ERR_SIZE, fmt, ap);
    va_end(ap);
    return st;
}

/* ---- the device: the host CPU, one of it ---- */

/* What device 0 is. Nothing needs an opened device, so describe_device and device_info share
 * it. Writes only the members the host's struct_size covers (an older host's is shorter). */
static void describe(xpb_device_info *out)
{
    if (XPB_HAS_MEMBER(out, xpb_device_info, name))
        snprintf(out->name, sizeof out->name, "example host CPU");
    if (XPB_HAS_MEMBER(out, xpb_device_info, precisions))
        out->precisions = XPB_PRECISION_BIT(XPB_PRECISION_FP32);
    if (XPB_HAS_MEMBER(out, xpb_device_info, threads))
        out->threads = 1;
    if (XPB_HAS_MEMBER(out, xpb_device_info, kind)) /* ABI 1.1 */
        out->kind = XPB_DEVICE_CPU;
    if (XPB_HAS_MEMBER(out, xpb_device_info, emulated_precisions)) /* ABI 1.1 */
        out->emulated_precisions = 0;
}

static xpb_status example_device_count(uint32_t *count)
{
    *count = 1;
    return XPB_OK;
}

static xpb_status example_describe_device(uint32_t index, xpb_device_info *out)
{
    if (index != 0)
        return fail(no_handle_error, XPB_NO_DEVICE, "device %u does not exist (only 0)", index);
    describe(out);
    return XPB_OK;
}

static xpb_status example_open(xpb_backend **out, uint32_t device_index)
{
    *out = NULL;
    if (device_index != 0)
        return fail(no_handle_error, XPB_NO_DEVICE, "device %u does not exist (only 0)",
                    device_index);
    *out = calloc(1, sizeof **out);
    if (!*out)
        return fail(no_handle_error, XPB_OUT_OF_MEMORY, "out of memory");
    return XPB_OK;
}

static void example_close(xpb_backend *be)
{
    free(be);
}

/* Owned by `be` (or static for NULL), valid until the next call on it. */
static const char *example_last_error(const xpb_backend *be)
{
    return be ? be->error : no_handle_error;
}

static xpb_status example_device_info(xpb_backend *be, xpb_device_info *out)
{
    (void)be;
    describe(out);
    return XPB_OK;
}

/* ---- compile ---- */

/* The ops this backend implements. */
static int implemented(uint32_t kind)
{
    return kind == XPB_OP_FILL || kind == XPB_OP_COPY || kind == XPB_OP_ADD || kind == XPB_OP_RELU;
}

static void example_destroy(xpb_executable *exe)
{
    if (!exe)
        return;
    for (uint32_t t = 0; exe->data && t < exe->program->n_tensors; t++)
        free(exe->data[t]);
    free(exe->data);
    free(exe);
}

static xpb_status example_compile(xpb_executable **out, xpb_backend *be, const xpb_program *program,
                                  const xpb_compile_options *options)
{
    *out = NULL;
    uint32_t precision = XPB_MEMBER_OR(options, xpb_compile_options, precision, 1u);
    if (precision != XPB_PRECISION_FP32)
        return fail(be->error, XPB_UNSUPPORTED, "precision policy %u is not supported (only fp32)",
                    precision);
    /* Every rule of docs/ops.md: counts, dtypes, shapes, attributes; an op kind or attribute
     * bit of a later op set is XPB_UNSUPPORTED, named. After this the kernels trust shapes. */
    char msg[EXAMPLE_ERR_SIZE - 16];
    xpb_status st = xpb_program_validate(program, msg, sizeof msg);
    if (st != XPB_OK)
        return fail(be->error, st, "%s", msg);
    for (uint32_t i = 0; i < program->n_ops; i++) {
        const xpb_op *op = xpb_program_op(program, i);
        if (!implemented(op->kind))
            return fail(be->error, XPB_UNSUPPORTED,
                        "op %u %s (layer '%s'): not implemented by the example backend "
                        "(it runs FILL, COPY, ADD and RELU)",
                        i, xpb_op_kind_name(program, op), op->layer ? op->layer : "");
    }

    xpb_executable *exe = calloc(1, sizeof *exe);
    if (!exe)
        goto no_memory;
    exe->program = program;
    exe->keep_all = XPB_MEMBER_OR(options, xpb_compile_options, keep_all, 0u);
    exe->data = calloc(program->n_tensors ? program->n_tensors : 1, sizeof *exe->data);
    if (!exe->data)
        goto destroy_exe;
    for (uint32_t t = 0; t < program->n_tensors; t++)
        if (!(exe->data[t] = calloc(1, xpb_tensor_bytes(xpb_program_tensor(program, t)))))
            goto destroy_exe;
    xpb_plugin_log(XPB_LOG_INFO, "compiled %u ops over %u tensors", program->n_ops,
                   program->n_tensors);
    *out = exe;
    return XPB_OK;

destroy_exe:
    example_destroy(exe);
no_memory:
    return fail(be->error, XPB_OUT_OF_MEMORY, "out of memory");
}

/* Owned by `exe`, valid until the next call on it. */
static const char *example_exe_last_error(const xpb_executable *exe)
{
    return exe ? exe->error : "no executable";
}

/* ---- data ---- */

/* Checks a host transfer of `bytes` to or from `tensor`, which needs `flag` (or keep_all). */
static xpb_status check_transfer(xpb_executable *exe, const char *what, uint32_t tensor,
                                 size_t bytes, uint32_t flag)
{
    if (tensor >= exe->program->n_tensors)
        return fail(exe->error, XPB_INVALID_ARGUMENT,
                    "%s: tensor %u does not exist (the program has %u)", what, tensor,
                    exe->program->n_tensors);
    const xpb_tensor_desc *t = xpb_program_tensor(exe->program, tensor);
    if (bytes != xpb_tensor_bytes(t))
        return fail(exe->error, XPB_INVALID_ARGUMENT, "%s: tensor %u '%s' holds %zu bytes, not %zu",
                    what, tensor, t->name, xpb_tensor_bytes(t), bytes);
    if (!(t->flags & flag) && !exe->keep_all)
        return fail(exe->error, XPB_INVALID_ARGUMENT,
                    "%s: tensor %u '%s' is not host-%s (and keep_all is off)", what, tensor,
                    t->name, flag == XPB_TENSOR_HOST_WRITE ? "writable" : "readable");
    return XPB_OK;
}

static xpb_status example_write(xpb_executable *exe, uint32_t tensor, const void *data,
                                size_t bytes)
{
    xpb_status st = check_transfer(exe, "write", tensor, bytes, XPB_TENSOR_HOST_WRITE);
    if (st == XPB_OK)
        memcpy(exe->data[tensor], data, bytes);
    return st;
}

static xpb_status example_read(xpb_executable *exe, uint32_t tensor, void *data, size_t bytes)
{
    xpb_status st = check_transfer(exe, "read", tensor, bytes, XPB_TENSOR_HOST_READ);
    if (st == XPB_OK)
        memcpy(data, exe->data[tensor], bytes);
    return st;
}

/* ---- run ---- */

/* Runs one op; compile checked that it is implemented and well-formed (y has the shape of
 * every input; COPY and FILL may be I32). */
static void run_op(xpb_executable *exe, const xpb_op *op)
{
    const xpb_tensor_desc *yd = xpb_program_tensor(exe->program, op->outputs[0]);
    int64_t n = xpb_tensor_numel(yd);
    void *y = exe->data[op->outputs[0]];
    const float *a = op->n_inputs > 0 ? exe->data[op->inputs[0]] : NULL;
    const float *b = op->n_inputs > 1 ? exe->data[op->inputs[1]] : NULL;
    float *yf = y;
    switch (op->kind) {
    case XPB_OP_FILL:
        for (int64_t k = 0; k < n; k++) {
            if (yd->dtype == XPB_DTYPE_I32)
                ((int32_t *)y)[k] = (int32_t)op->attrs.value;
            else
                yf[k] = op->attrs.value;
        }
        break;
    case XPB_OP_COPY:
        memcpy(y, a, xpb_tensor_bytes(yd));
        break;
    case XPB_OP_ADD:
        for (int64_t k = 0; k < n; k++)
            yf[k] = a[k] + b[k];
        break;
    default: /* RELU */
        for (int64_t k = 0; k < n; k++)
            yf[k] = a[k] > 0.0f ? a[k] : 0.0f;
        break;
    }
}

static xpb_status example_run(xpb_executable *exe, uint32_t phase)
{
    const xpb_program *p = exe->program;
    if (phase >= p->n_phases)
        return fail(exe->error, XPB_INVALID_ARGUMENT,
                    "run: phase %u does not exist (the program has %u)", phase, p->n_phases);
    const xpb_phase *ph = xpb_program_phase(p, phase);
    for (uint32_t i = ph->first_op; i < ph->first_op + ph->n_ops; i++)
        run_op(exe, xpb_program_op(p, i));
    return XPB_OK;
}

static xpb_status example_synchronize(xpb_executable *exe)
{
    (void)exe; /* run() is synchronous */
    return XPB_OK;
}

static const xpb_backend_api api = {
    .struct_size = sizeof(xpb_backend_api),
    .open = example_open,
    .close = example_close,
    .last_error = example_last_error,
    .device_info = example_device_info,
    .compile = example_compile,
    .destroy = example_destroy,
    .exe_last_error = example_exe_last_error,
    .write = example_write,
    .read = example_read,
    .run = example_run,
    .synchronize = example_synchronize,
    /* profile_read, memory_stats, energy_read: NULL = not supported */
    .device_count = example_device_count,
    .describe_device = example_describe_device,
    /* write_async, host_alloc, host_free: NULL; the host then writes streamed inputs with
     * write() inside the timed step */
};

/* One thread, no fusion: no capability bit. */
XPB_DEFINE_PLUGIN(XPB_PLUGIN_BACKEND, "example", "0.2.0",
                  "out-of-tree example: FILL, COPY, ADD, RELU in host memory", 0, &api)
