/* "faulty_ref": the reference backend (loaded from WRAPPED_INNER) with a wrong kernel, so that
 * tests can prove the conformance suite and verification fail one. Every call goes to cpu_ref;
 * read() then perturbs a tensor written by an op of kind $XPB_FAULTY_OP (its xpb_op_name, e.g.
 * "CONV2D") as $XPB_FAULTY_KIND says:
 *   scale    every element times 1 + 1e-3 (a kernel that accumulates in too low a precision)
 *   element  one element, the middle one, plus 1 (an off-by-one at one position)
 *   nan      the first element NaN
 *   negate   every element negated (a ReLU that lets the wrong side through)
 * Without XPB_FAULTY_OP it is exactly cpu_ref. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wrapped_backend.h"

/* Whether tensor t of p is an output of an op of kind `kind`. */
static int written_by(const xpb_program *p, uint32_t t, const char *kind)
{
    for (uint32_t i = 0; i < p->n_ops; i++) {
        const xpb_op *op = xpb_program_op(p, i);
        if (strcmp(xpb_op_name(op->kind), kind) != 0)
            continue;
        for (uint32_t k = 0; k < op->n_outputs; k++) /* LSTM_BWD has seven */
            if (xpb_op_output(p, op, k) == t)
                return 1;
    }
    return 0;
}

static void perturb(const xpb_program *p, uint32_t t, void *data, size_t bytes)
{
    const char *op = getenv("XPB_FAULTY_OP"), *kind = getenv("XPB_FAULTY_KIND");
    if (!op || !kind || t >= p->n_tensors || xpb_program_tensor(p, t)->dtype != XPB_DTYPE_F32 ||
        !written_by(p, t, op))
        return;
    float *v = data;
    size_t n = bytes / sizeof *v;
    if (strcmp(kind, "scale") == 0)
        for (size_t i = 0; i < n; i++)
            v[i] *= 1.001f;
    else if (strcmp(kind, "element") == 0)
        v[n / 2] += 1.0f;
    else if (strcmp(kind, "nan") == 0)
        v[0] = NAN;
    else if (strcmp(kind, "negate") == 0)
        for (size_t i = 0; i < n; i++)
            v[i] = -v[i];
}

/* cpu_ref's read, then the perturbation. */
static xpb_status f_read(xpb_executable *exe, uint32_t t, void *data, size_t bytes)
{
    xpb_status st = inner->read(exe->inner, t, data, bytes);
    if (st == XPB_OK)
        perturb(exe->program, t, data, bytes);
    return st;
}

static const xpb_plugin_descriptor descriptor = {
    .struct_size = sizeof(xpb_plugin_descriptor),
    .abi_major = XPB_ABI_MAJOR,
    .abi_minor = XPB_ABI_MINOR,
    .kind = XPB_PLUGIN_BACKEND,
    .name = "faulty_ref",
    .version = "1.0.0",
    .description = "cpu_ref with a wrong kernel on demand (tests only)",
    .api = &wrapped_api,
    .opset = XPB_OPSET_VERSION,
};

XPB_PLUGIN_QUERY
{
    wrapped_api.read = f_read;
    return wrapped_query(out, &descriptor, host_major, host_minor, host);
}
