/* A complete, tiny out-of-tree backend: it executes FILL, COPY, ADD and RELU on fp32 tensors
 * in host memory and refuses every other op with XPB_UNSUPPORTED. It includes nothing but the
 * installed SDK (<xpubench/xpubench.h>) and exports nothing but xpb_plugin_query. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xpubench/xpubench.h>

struct xpb_backend {
    char error[256];
};

struct xpb_executable {
    const xpb_program *program; /* the host's; valid until destroy */
    float **data;               /* one host buffer per tensor */
    char error[256];
};

static char open_error[256] = "no error";

static xpb_status example_open(xpb_backend **out, uint32_t device_index)
{
    if (device_index != 0) {
        snprintf(open_error, sizeof open_error, "device %u does not exist (only 0)", device_index);
        return XPB_NO_DEVICE;
    }
    *out = calloc(1, sizeof **out);
    return *out ? XPB_OK : XPB_OUT_OF_MEMORY;
}

static void example_close(xpb_backend *be)
{
    free(be);
}

static const char *example_last_error(const xpb_backend *be)
{
    return be ? be->error : open_error;
}

static xpb_status example_device_info(xpb_backend *be, xpb_device_info *out)
{
    (void)be;
    /* Write only what the host's struct_size covers. */
    if (XPB_HAS_MEMBER(out, xpb_device_info, name))
        snprintf(out->name, sizeof out->name, "example host CPU");
    if (XPB_HAS_MEMBER(out, xpb_device_info, precisions))
        out->precisions = XPB_PRECISION_BIT(XPB_PRECISION_FP32);
    return XPB_OK;
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
    uint32_t precision = XPB_MEMBER_OR(options, xpb_compile_options, precision, 1);
    if (precision != XPB_PRECISION_FP32) {
        snprintf(be->error, sizeof be->error, "precision policy %u is not supported", precision);
        return XPB_UNSUPPORTED;
    }
    for (uint32_t i = 0; i < program->n_ops; i++) {
        const xpb_op *op = xpb_program_op(program, i);
        if (op->kind != XPB_OP_FILL && op->kind != XPB_OP_COPY && op->kind != XPB_OP_ADD &&
            op->kind != XPB_OP_RELU) {
            snprintf(be->error, sizeof be->error, "op %s (layer %s) is not supported",
                     xpb_op_name(op->kind), op->layer);
            return XPB_UNSUPPORTED;
        }
    }
    xpb_executable *exe = calloc(1, sizeof *exe);
    if (!exe)
        return XPB_OUT_OF_MEMORY;
    exe->program = program;
    exe->data = calloc(program->n_tensors ? program->n_tensors : 1, sizeof *exe->data);
    if (!exe->data)
        goto no_memory;
    for (uint32_t t = 0; t < program->n_tensors; t++) {
        size_t bytes = xpb_tensor_bytes(xpb_program_tensor(program, t));
        if (!(exe->data[t] = calloc(1, bytes ? bytes : 1)))
            goto no_memory;
    }
    *out = exe;
    return XPB_OK;

no_memory:
    example_destroy(exe);
    snprintf(be->error, sizeof be->error, "out of memory");
    return XPB_OUT_OF_MEMORY;
}

static const char *example_exe_last_error(const xpb_executable *exe)
{
    return exe->error;
}

/* Checks a host transfer; 1 when it may proceed. */
static int transfer_ok(xpb_executable *exe, uint32_t tensor, size_t bytes)
{
    if (tensor >= exe->program->n_tensors) {
        snprintf(exe->error, sizeof exe->error, "tensor %u does not exist", tensor);
        return 0;
    }
    size_t need = xpb_tensor_bytes(xpb_program_tensor(exe->program, tensor));
    if (bytes != need) {
        snprintf(exe->error, sizeof exe->error, "tensor %u holds %zu bytes, not %zu", tensor, need,
                 bytes);
        return 0;
    }
    return 1;
}

static xpb_status example_write(xpb_executable *exe, uint32_t tensor, const void *data,
                                size_t bytes)
{
    if (!transfer_ok(exe, tensor, bytes))
        return XPB_INVALID_ARGUMENT;
    memcpy(exe->data[tensor], data, bytes);
    return XPB_OK;
}

static xpb_status example_read(xpb_executable *exe, uint32_t tensor, void *data, size_t bytes)
{
    if (!transfer_ok(exe, tensor, bytes))
        return XPB_INVALID_ARGUMENT;
    memcpy(data, exe->data[tensor], bytes);
    return XPB_OK;
}

static xpb_status example_run(xpb_executable *exe, uint32_t phase)
{
    const xpb_program *p = exe->program;
    if (phase >= p->n_phases) {
        snprintf(exe->error, sizeof exe->error, "phase %u does not exist", phase);
        return XPB_INVALID_ARGUMENT;
    }
    for (uint32_t i = 0; i < p->phases[phase].n_ops; i++) {
        const xpb_op *op = xpb_program_op(p, p->phases[phase].first_op + i);
        float *y = exe->data[op->outputs[0]];
        int64_t n = xpb_tensor_numel(xpb_program_tensor(p, op->outputs[0]));
        const float *a = op->n_inputs > 0 ? exe->data[op->inputs[0]] : NULL;
        const float *b = op->n_inputs > 1 ? exe->data[op->inputs[1]] : NULL;
        for (int64_t k = 0; k < n; k++) {
            switch (op->kind) {
            case XPB_OP_FILL:
                y[k] = op->attrs.value;
                break;
            case XPB_OP_COPY:
                y[k] = a[k];
                break;
            case XPB_OP_ADD:
                y[k] = a[k] + b[k];
                break;
            default: /* RELU; compile refused everything else */
                y[k] = a[k] > 0.0f ? a[k] : 0.0f;
                break;
            }
        }
    }
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
};

static const xpb_plugin_descriptor descriptor = {
    .struct_size = sizeof(xpb_plugin_descriptor),
    .abi_major = XPB_ABI_MAJOR,
    .abi_minor = XPB_ABI_MINOR,
    .kind = XPB_PLUGIN_BACKEND,
    .name = "example",
    .version = "0.1.0",
    .description = "out-of-tree example: FILL, COPY, ADD, RELU in host memory",
    .caps = 0,
    .api = &api,
};

XPB_PLUGIN_QUERY
{
    if (host_major != XPB_ABI_MAJOR) {
        *out = &descriptor; /* so the host can name us in its message */
        return XPB_INCOMPATIBLE;
    }
    (void)host_minor;
    if (XPB_HAS_MEMBER(host, xpb_host_services, log))
        host->log(host->ctx, XPB_LOG_DEBUG, "example", "ready");
    *out = &descriptor;
    return XPB_OK;
}
