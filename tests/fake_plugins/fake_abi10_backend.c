/* A complete little backend compiled against the FROZEN ABI 1.0 headers (tests/abi/1.0, the
 * only SDK on its include path): FILL, COPY, ADD, RELU and LINEAR on fp32 host memory. It knows
 * nothing of ABI 1.1 (no op set in its descriptor, no device_count, no device kind, no op
 * names or attribute bits, no phase stride), which is the point: tests/test_loader.c loads it
 * on this 1.1 host and runs a sealed program through it, proving that a 1.0 backend still
 * loads and computes the right numbers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xpubench/xpubench.h>

#if XPB_ABI_MAJOR != 1 || XPB_ABI_MINOR != 0
#error "fake_abi10_backend must be compiled against the ABI 1.0 headers of tests/abi/1.0"
#endif

#define ERR_SIZE 256

struct xpb_backend {
    char error[ERR_SIZE];
};

struct xpb_executable {
    const xpb_program *program; /* the host's; valid until destroy */
    float **data;               /* one buffer per tensor */
    char error[ERR_SIZE];
};

static char open_error[ERR_SIZE] = "no error";

static xpb_status abi10_open(xpb_backend **out, uint32_t device_index)
{
    *out = NULL;
    if (device_index != 0) {
        snprintf(open_error, sizeof open_error, "fake_abi10: no device %u (only 0)", device_index);
        return XPB_NO_DEVICE;
    }
    *out = calloc(1, sizeof **out);
    return *out ? XPB_OK : XPB_OUT_OF_MEMORY;
}

static void abi10_close(xpb_backend *be)
{
    free(be);
}

static const char *abi10_last_error(const xpb_backend *be)
{
    return be ? be->error : open_error;
}

static xpb_status abi10_device_info(xpb_backend *be, xpb_device_info *out)
{
    (void)be;
    /* This header's struct ends at peak_flops: a 1.1 host's kind is never touched. */
    if (XPB_HAS_MEMBER(out, xpb_device_info, name))
        snprintf(out->name, sizeof out->name, "fake 1.0 CPU");
    if (XPB_HAS_MEMBER(out, xpb_device_info, precisions))
        out->precisions = XPB_PRECISION_BIT(XPB_PRECISION_FP32);
    if (XPB_HAS_MEMBER(out, xpb_device_info, threads))
        out->threads = 1;
    return XPB_OK;
}

static int implemented(uint32_t kind)
{
    return kind == XPB_OP_FILL || kind == XPB_OP_COPY || kind == XPB_OP_ADD ||
           kind == XPB_OP_RELU || kind == XPB_OP_LINEAR;
}

static void abi10_destroy(xpb_executable *exe)
{
    if (!exe)
        return;
    for (uint32_t t = 0; exe->data && t < exe->program->n_tensors; t++)
        free(exe->data[t]);
    free(exe->data);
    free(exe);
}

static xpb_status abi10_compile(xpb_executable **out, xpb_backend *be, const xpb_program *p,
                                const xpb_compile_options *options)
{
    *out = NULL;
    if (XPB_MEMBER_OR(options, xpb_compile_options, precision, 1u) != XPB_PRECISION_FP32) {
        snprintf(be->error, sizeof be->error, "fake_abi10: only fp32");
        return XPB_UNSUPPORTED;
    }
    for (uint32_t i = 0; i < p->n_ops; i++) {
        const xpb_op *op = xpb_program_op(p, i);
        if (!implemented(op->kind) || op->n_outputs != 1) {
            snprintf(be->error, sizeof be->error,
                     "fake_abi10: op %u %s (layer '%s') is not supported", i, xpb_op_name(op->kind),
                     op->layer);
            return XPB_UNSUPPORTED;
        }
        for (uint32_t k = 0; k < op->n_inputs; k++)
            if (op->inputs[k] >= p->n_tensors) {
                snprintf(be->error, sizeof be->error, "fake_abi10: op %u: bad input %u", i, k);
                return XPB_INVALID_ARGUMENT;
            }
        if (op->outputs[0] >= p->n_tensors) {
            snprintf(be->error, sizeof be->error, "fake_abi10: op %u: bad output", i);
            return XPB_INVALID_ARGUMENT;
        }
    }
    xpb_executable *exe = calloc(1, sizeof *exe);
    if (!exe)
        return XPB_OUT_OF_MEMORY;
    exe->program = p;
    exe->data = calloc(p->n_tensors + 1, sizeof *exe->data);
    if (!exe->data)
        goto no_memory;
    for (uint32_t t = 0; t < p->n_tensors; t++)
        if (!(exe->data[t] = calloc(1, xpb_tensor_bytes(xpb_program_tensor(p, t)))))
            goto no_memory;
    *out = exe;
    return XPB_OK;
no_memory:
    abi10_destroy(exe);
    return XPB_OUT_OF_MEMORY;
}

static const char *abi10_exe_last_error(const xpb_executable *exe)
{
    return exe ? exe->error : "fake_abi10: no executable";
}

static xpb_status transfer(xpb_executable *exe, uint32_t tensor, size_t bytes)
{
    if (tensor >= exe->program->n_tensors ||
        bytes != xpb_tensor_bytes(xpb_program_tensor(exe->program, tensor))) {
        snprintf(exe->error, sizeof exe->error, "fake_abi10: bad transfer of tensor %u", tensor);
        return XPB_INVALID_ARGUMENT;
    }
    return XPB_OK;
}

static xpb_status abi10_write(xpb_executable *exe, uint32_t tensor, const void *data, size_t bytes)
{
    xpb_status st = transfer(exe, tensor, bytes);
    if (st == XPB_OK)
        memcpy(exe->data[tensor], data, bytes);
    return st;
}

static xpb_status abi10_read(xpb_executable *exe, uint32_t tensor, void *data, size_t bytes)
{
    xpb_status st = transfer(exe, tensor, bytes);
    if (st == XPB_OK)
        memcpy(data, exe->data[tensor], bytes);
    return st;
}

/* y[N,O] = x[N,I] w[O,I]^T + b[O] */
static void linear(float *y, const float *x, const float *w, const float *b, int64_t n, int64_t o,
                   int64_t in)
{
    for (int64_t r = 0; r < n; r++)
        for (int64_t c = 0; c < o; c++) {
            float acc = b ? b[c] : 0.0f;
            for (int64_t k = 0; k < in; k++)
                acc += x[r * in + k] * w[c * in + k];
            y[r * o + c] = acc;
        }
}

static xpb_status abi10_run(xpb_executable *exe, uint32_t phase)
{
    const xpb_program *p = exe->program;
    if (phase >= p->n_phases) {
        snprintf(exe->error, sizeof exe->error, "fake_abi10: no phase %u", phase);
        return XPB_INVALID_ARGUMENT;
    }
    /* ABI 1.0 has no phase stride: phases are an array of this header's xpb_phase */
    const xpb_phase *ph = &p->phases[phase];
    for (uint32_t i = ph->first_op; i < ph->first_op + ph->n_ops; i++) {
        const xpb_op *op = xpb_program_op(p, i);
        const xpb_tensor_desc *yd = xpb_program_tensor(p, op->outputs[0]);
        float *y = exe->data[op->outputs[0]];
        const float *a = op->n_inputs > 0 ? exe->data[op->inputs[0]] : NULL;
        const float *b = op->n_inputs > 1 ? exe->data[op->inputs[1]] : NULL;
        int64_t n = xpb_tensor_numel(yd);
        switch (op->kind) {
        case XPB_OP_FILL:
            for (int64_t k = 0; k < n; k++)
                y[k] = op->attrs.value;
            break;
        case XPB_OP_COPY:
            memcpy(y, a, xpb_tensor_bytes(yd));
            break;
        case XPB_OP_ADD:
            for (int64_t k = 0; k < n; k++)
                y[k] = a[k] + b[k];
            break;
        case XPB_OP_RELU:
            for (int64_t k = 0; k < n; k++)
                y[k] = a[k] > 0.0f ? a[k] : 0.0f;
            break;
        default: { /* LINEAR */
            const xpb_tensor_desc *xd = xpb_program_tensor(p, op->inputs[0]);
            const float *bias = op->n_inputs > 2 ? exe->data[op->inputs[2]] : NULL;
            linear(y, a, b, bias, yd->dims[0], yd->dims[1], xd->dims[1]);
            break;
        }
        }
    }
    return XPB_OK;
}

static xpb_status abi10_synchronize(xpb_executable *exe)
{
    (void)exe;
    return XPB_OK;
}

static const xpb_backend_api api = {
    .struct_size = sizeof(xpb_backend_api), /* 1.0's: ends at energy_read */
    .open = abi10_open,
    .close = abi10_close,
    .last_error = abi10_last_error,
    .device_info = abi10_device_info,
    .compile = abi10_compile,
    .destroy = abi10_destroy,
    .exe_last_error = abi10_exe_last_error,
    .write = abi10_write,
    .read = abi10_read,
    .run = abi10_run,
    .synchronize = abi10_synchronize,
};

static const xpb_plugin_descriptor descriptor = {
    .struct_size = sizeof(xpb_plugin_descriptor), /* 1.0's: ends at api, no op set */
    .abi_major = XPB_ABI_MAJOR,
    .abi_minor = XPB_ABI_MINOR,
    .kind = XPB_PLUGIN_BACKEND,
    .name = "fake_abi10",
    .version = "1.0.0",
    .description = "fake backend built against the frozen ABI 1.0 headers",
    .caps = 0,
    .api = &api,
};

XPB_PLUGIN_QUERY
{
    (void)host_minor, (void)host;
    *out = &descriptor;
    return host_major == XPB_ABI_MAJOR ? XPB_OK : XPB_INCOMPATIBLE;
}
