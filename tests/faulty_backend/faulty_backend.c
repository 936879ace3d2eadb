/* "faulty_ref": the reference backend (loaded from WRAPPED_INNER) with wrong kernels, so that
 * tests can prove that the conformance suite and verification fail them. Every call goes to
 * cpu_ref. Faults are "OP:kind" pairs, comma-separated in $XPB_FAULTY (e.g.
 * "RELU_BWD:leaky,CONV2D:jitter"), or one pair in $XPB_FAULTY_OP (an xpb_op_name) and
 * $XPB_FAULTY_KIND. Without any it is exactly cpu_ref.
 *
 * Faults inside the computation (everything downstream sees them, as with a wrong kernel): the
 * program is rewritten at compile, the host's tensor ids kept, new tensors appended:
 *   leaky      every op OP (RELU_BWD) becomes LEAKY_RELU_BWD with slope 0.01: 1% of the
 *              gradient leaks where it should be zero
 *   nobias     every op OP (CONV2D, CONV_T2D, LINEAR) with a bias ignores the bias of its last
 *              output channel: the bias goes through RESHAPE, LINEAR by diag(1, .., 1, 0) and
 *              RESHAPE before the op reads it
 *   gradscale  the weight gradient of one op OP (CONV2D; the $XPB_FAULTY_NTH-th in program
 *              order, default 0: the first) is written times 1 + 1e-3 by the op that writes it
 *              (the backward-weights op, or the sum of a shared weight's gradients): through
 *              RESHAPE, LINEAR by [1.001] and RESHAPE before anything reads it
 *   jitter     the weights (input 1) of every op OP are written multiplied by 1 + 1e-6 u, u in
 *              [-1, 1): a correct backend that rounds differently, whose forward pass puts a
 *              few ReLU inputs near 0 on the other side (kink flips)
 * Faults at read() only (what the host reads of a tensor an op OP writes; nothing downstream):
 *   scale      every element times 1 + 1e-3 (a kernel that accumulates in too low a precision)
 *   element    one element, the middle one, plus 1 (an off-by-one at one position)
 *   nan        the first element NaN
 *   negate     every element negated */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "wrapped_backend.h"

#define MAX_FAULTS 4

struct fault {
    char op[32];
    char kind[16];
};

/* The faults of the environment into f (at most MAX_FAULTS); their number. */
static int faults(struct fault *f)
{
    char list[256];
    const char *env = getenv("XPB_FAULTY"), *op = getenv("XPB_FAULTY_OP"),
               *kind = getenv("XPB_FAULTY_KIND");
    if (env)
        snprintf(list, sizeof list, "%s", env);
    else if (op && kind)
        snprintf(list, sizeof list, "%s:%s", op, kind);
    else
        return 0;
    int n = 0;
    char *save = NULL;
    for (char *item = strtok_r(list, ",", &save); item && n < MAX_FAULTS;
         item = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(item, ':');
        if (!colon)
            continue;
        *colon = '\0';
        snprintf(f[n].op, sizeof f[n].op, "%s", item);
        snprintf(f[n].kind, sizeof f[n].kind, "%s", colon + 1);
        n++;
    }
    return n;
}

/* The op kind of fault `kind` on op `op_kind` when it is among the environment's faults. */
static int has_fault(const char *kind, uint32_t op_kind)
{
    struct fault f[MAX_FAULTS];
    int n = faults(f);
    for (int i = 0; i < n; i++)
        if (strcmp(f[i].kind, kind) == 0 && strcmp(f[i].op, xpb_op_name(op_kind)) == 0)
            return 1;
    return 0;
}

/* ---- faults at read() ---- */

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
    struct fault f[MAX_FAULTS];
    int nf = faults(f);
    if (t >= p->n_tensors || xpb_program_tensor(p, t)->dtype != XPB_DTYPE_F32)
        return;
    float *v = data;
    size_t n = bytes / sizeof *v;
    for (int i = 0; i < nf; i++) {
        if (!written_by(p, t, f[i].op))
            continue;
        if (strcmp(f[i].kind, "scale") == 0)
            for (size_t j = 0; j < n; j++)
                v[j] *= 1.001f;
        else if (strcmp(f[i].kind, "element") == 0)
            v[n / 2] += 1.0f;
        else if (strcmp(f[i].kind, "nan") == 0)
            v[0] = NAN;
        else if (strcmp(f[i].kind, "negate") == 0)
            for (size_t j = 0; j < n; j++)
                v[j] = -v[j];
    }
}

/* cpu_ref's read, then the perturbation. */
static xpb_status f_read(xpb_executable *exe, uint32_t t, void *data, size_t bytes)
{
    xpb_status st = inner->read(exe->inner, t, data, bytes);
    if (st == XPB_OK)
        perturb(exe->program, t, data, bytes);
    return st;
}

/* ---- jitter at write() ---- */

/* Whether tensor t is the weight (input 1) of an op with a jitter fault. */
static int jittered(const xpb_program *p, uint32_t t)
{
    for (uint32_t i = 0; i < p->n_ops; i++) {
        const xpb_op *op = xpb_program_op(p, i);
        if (op->n_inputs > 1 && op->inputs[1] == t && has_fault("jitter", op->kind))
            return 1;
    }
    return 0;
}

/* cpu_ref's write, of the weights of a jittered op multiplied by 1 + 1e-6 u. */
static xpb_status f_write(xpb_executable *exe, uint32_t t, const void *data, size_t bytes)
{
    if (t >= exe->program->n_tensors || !jittered(exe->program, t))
        return inner->write(exe->inner, t, data, bytes);
    float *v = malloc(bytes ? bytes : 1);
    if (!v)
        return XPB_OUT_OF_MEMORY;
    memcpy(v, data, bytes);
    uint64_t s = 0x9E3779B97F4A7C15ull * (t + 1u);
    for (size_t i = 0; i < bytes / sizeof *v; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        double u = (double)(s >> 11) * 0x1p-53 * 2.0 - 1.0;
        v[i] = (float)((double)v[i] * (1.0 + 1e-6 * u));
    }
    xpb_status st = inner->write(exe->inner, t, v, bytes);
    free(v);
    return st;
}

/* ---- faults inside the computation: the program rewritten at compile ---- */

/* A rewritten program and the constants the wrapper writes into it after compiling. */
struct rewrite {
    xpb_program program;
    xpb_tensor_desc *tensors;
    xpb_op *ops;
    xpb_phase *phases;
    char (*names)[96]; /* the new tensors' names */
    uint32_t n_tensors, n_ops, cap_tensors, cap_ops;
    /* constants: tensor, and its value (nobias: the diagonal mask; gradscale: 1.001) */
    struct constant {
        uint32_t tensor;
        int mask; /* 1: identity but the last element; 0: the scalar 1.001 */
    } * constants;
    uint32_t n_constants;
};

/* The executable of a rewritten program: the wrapper's, then the rewrite it compiled. */
struct faulty_executable {
    struct xpb_executable base; /* first: the wrapper's functions see this */
    struct rewrite *rw;
};

static void rewrite_free(struct rewrite *rw)
{
    if (!rw)
        return;
    free(rw->tensors);
    free(rw->ops);
    free(rw->phases);
    free(rw->names);
    free(rw->constants);
    free(rw);
}

/* Appends tensor `name` of `ndim` dims d0, d1 (others 1) like tensor `like` (dtype, layer). */
static uint32_t new_tensor(struct rewrite *rw, const xpb_tensor_desc *like, const char *suffix,
                           uint32_t ndim, const int64_t *dims, uint32_t role, uint32_t flags)
{
    uint32_t id = rw->n_tensors++;
    xpb_tensor_desc *t = &rw->tensors[id];
    memset(t, 0, sizeof *t);
    snprintf(rw->names[id], sizeof rw->names[id], "%s.%s", like->name ? like->name : "", suffix);
    t->name = rw->names[id];
    t->layer = like->layer;
    t->dtype = XPB_DTYPE_F32;
    t->role = role;
    t->flags = flags;
    t->ndim = ndim;
    for (uint32_t d = 0; d < XPB_MAX_DIMS; d++)
        t->dims[d] = d < ndim ? dims[d] : 1;
    return id;
}

/* Appends op `kind` reading in[0 .. n_in) and writing out, in the layer of `like`. */
static void new_op(struct rewrite *rw, uint32_t kind, const xpb_op *like, uint32_t n_in,
                   const uint32_t *in, uint32_t out)
{
    xpb_op *op = &rw->ops[rw->n_ops++];
    memset(op, 0, sizeof *op);
    op->kind = kind;
    op->n_inputs = n_in;
    op->n_outputs = 1;
    for (uint32_t k = 0; k < XPB_MAX_OP_INPUTS; k++)
        op->inputs[k] = k < n_in ? in[k] : XPB_NO_TENSOR;
    for (uint32_t k = 0; k < XPB_MAX_OP_OUTPUTS; k++)
        op->outputs[k] = k == 0 ? out : XPB_NO_TENSOR;
    op->layer = like->layer;
    op->opset = 1;
    op->kind_name = xpb_op_name(kind);
}

/* Appends ops that compute `to` = `from` times a constant matrix: RESHAPE to [rows, cols],
 * LINEAR by the constant [cols, cols] (diag mask, or the scalar 1.001 when cols is 1),
 * RESHAPE to `to`'s shape. */
static void linear_map(struct rewrite *rw, const xpb_op *like, uint32_t from, uint32_t to,
                       int64_t rows, int64_t cols)
{
    const xpb_tensor_desc *src = &rw->tensors[from];
    int64_t flat[2] = {rows, cols}, square[2] = {cols, cols};
    uint32_t a = new_tensor(rw, src, "fault_in", 2, flat, XPB_ROLE_ACTIVATION, 0);
    uint32_t m = new_tensor(rw, src, "fault_map", 2, square, XPB_ROLE_STATE,
                            XPB_TENSOR_PERSISTENT | XPB_TENSOR_HOST_WRITE);
    uint32_t b = new_tensor(rw, src, "fault_out", 2, flat, XPB_ROLE_ACTIVATION, 0);
    rw->constants[rw->n_constants++] = (struct constant){m, cols > 1};
    new_op(rw, XPB_OP_RESHAPE, like, 1, &from, a);
    new_op(rw, XPB_OP_LINEAR, like, 2, (const uint32_t[]){a, m}, b);
    new_op(rw, XPB_OP_RESHAPE, like, 1, &b, to);
}

/* The gradient (role GRAD) of the weight (input 1) of the nth op of p with a gradscale fault,
 * counting each weight once in program order; XPB_NO_TENSOR when there is none. */
static uint32_t scaled_gradient(const xpb_program *p, uint32_t nth)
{
    uint32_t seen = 0;
    for (uint32_t i = 0; i < p->n_ops; i++) {
        const xpb_op *op = xpb_program_op(p, i);
        if (op->n_inputs < 2 || !has_fault("gradscale", op->kind))
            continue;
        int again = 0;
        for (uint32_t j = 0; j < i && !again; j++)
            again = xpb_program_op(p, j)->kind == op->kind && xpb_program_op(p, j)->n_inputs > 1 &&
                    xpb_program_op(p, j)->inputs[1] == op->inputs[1];
        if (again)
            continue;
        for (uint32_t t = 0; t < p->n_tensors; t++) {
            const xpb_tensor_desc *d = xpb_program_tensor(p, t);
            if (d->role == XPB_ROLE_GRAD && d->grad_of == op->inputs[1] && seen++ == nth)
                return t;
        }
    }
    return XPB_NO_TENSOR;
}

/* Copies op `op` of the host's program into rw, rewritten as the faults say; `scaled` is the
 * gradient to write 1e-3 off (XPB_NO_TENSOR: none). */
static void rewrite_op(struct rewrite *rw, const xpb_op *op, uint32_t scaled)
{
    xpb_op copy = *op;
    if (op->kind == XPB_OP_RELU_BWD && has_fault("leaky", op->kind)) {
        copy.kind = XPB_OP_LEAKY_RELU_BWD;
        copy.kind_name = xpb_op_name(copy.kind);
        copy.attrs.negative_slope = 0.01f;
        copy.attrs_set |= XPB_ATTR(NEGATIVE_SLOPE);
    }
    if (op->n_inputs > 2 && op->inputs[2] != XPB_NO_TENSOR && has_fault("nobias", op->kind)) {
        const xpb_tensor_desc *bias = &rw->tensors[op->inputs[2]];
        int64_t k = bias->dims[0];
        uint32_t masked = new_tensor(rw, bias, "fault_bias", 1, &k, XPB_ROLE_ACTIVATION, 0);
        linear_map(rw, op, op->inputs[2], masked, 1, k);
        copy.inputs[2] = masked;
    }
    uint32_t k = 0;
    while (k < op->n_outputs && k < XPB_MAX_OP_OUTPUTS && op->outputs[k] != scaled)
        k++;
    int scale = scaled != XPB_NO_TENSOR && k < op->n_outputs && k < XPB_MAX_OP_OUTPUTS;
    if (scale) {
        const xpb_tensor_desc *g = &rw->tensors[scaled];
        copy.outputs[k] = new_tensor(rw, g, "fault_raw", g->ndim, g->dims, XPB_ROLE_ACTIVATION, 0);
    }
    rw->ops[rw->n_ops++] = copy;
    if (scale)
        linear_map(rw, op, copy.outputs[k], scaled, xpb_tensor_numel(&rw->tensors[scaled]), 1);
}

/* Whether any fault rewrites the program. */
static int rewrites(void)
{
    struct fault f[MAX_FAULTS];
    int n = faults(f);
    for (int i = 0; i < n; i++)
        if (!strcmp(f[i].kind, "leaky") || !strcmp(f[i].kind, "nobias") ||
            !strcmp(f[i].kind, "gradscale"))
            return 1;
    return 0;
}

/* The host's program p rewritten as the faults say; NULL when out of memory. Lifetimes are
 * not kept (cpu_ref allocates every tensor for the whole program). */
static struct rewrite *rewrite_program(const xpb_program *p)
{
    struct rewrite *rw = calloc(1, sizeof *rw);
    if (!rw)
        return NULL;
    rw->cap_tensors = p->n_tensors + 5 * p->n_ops + 1;
    rw->cap_ops = 4 * p->n_ops + 1;
    rw->tensors = calloc(rw->cap_tensors, sizeof *rw->tensors);
    rw->names = calloc(rw->cap_tensors, sizeof *rw->names);
    rw->ops = calloc(rw->cap_ops, sizeof *rw->ops);
    rw->phases = calloc(p->n_phases + 1u, sizeof *rw->phases);
    rw->constants = calloc(p->n_ops + 1u, sizeof *rw->constants);
    if (!rw->tensors || !rw->names || !rw->ops || !rw->phases || !rw->constants) {
        rewrite_free(rw);
        return NULL;
    }
    for (uint32_t t = 0; t < p->n_tensors; t++)
        rw->tensors[t] = *xpb_program_tensor(p, t);
    rw->n_tensors = p->n_tensors;
    const char *env = getenv("XPB_FAULTY_NTH");
    uint32_t scaled = scaled_gradient(p, env ? (uint32_t)strtoul(env, NULL, 10) : 0);
    for (uint32_t k = 0; k < p->n_phases; k++) {
        const xpb_phase *ph = xpb_program_phase(p, k);
        rw->phases[k] = *ph;
        rw->phases[k].first_op = rw->n_ops;
        for (uint32_t i = ph->first_op; i < ph->first_op + ph->n_ops; i++)
            rewrite_op(rw, xpb_program_op(p, i), scaled);
        rw->phases[k].n_ops = rw->n_ops - rw->phases[k].first_op;
    }
    rw->program = *p;
    rw->program.struct_size = sizeof rw->program;
    rw->program.n_tensors = rw->n_tensors;
    rw->program.n_ops = rw->n_ops;
    rw->program.tensor_stride = sizeof(xpb_tensor_desc);
    rw->program.op_stride = sizeof(xpb_op);
    rw->program.phase_stride = sizeof(xpb_phase);
    rw->program.tensors = rw->tensors;
    rw->program.ops = rw->ops;
    rw->program.phases = rw->phases;
    return rw;
}

/* Writes the rewrite's constants into the compiled executable. */
static xpb_status write_constants(xpb_executable *inner_exe, const struct rewrite *rw)
{
    for (uint32_t i = 0; i < rw->n_constants; i++) {
        const xpb_tensor_desc *t = &rw->tensors[rw->constants[i].tensor];
        int64_t n = t->dims[0];
        float *m = calloc((size_t)(n * n), sizeof *m);
        if (!m)
            return XPB_OUT_OF_MEMORY;
        for (int64_t j = 0; j < n; j++)
            m[j * n + j] = rw->constants[i].mask ? (j + 1 < n ? 1.0f : 0.0f) : 1.001f;
        xpb_status st =
            inner->write(inner_exe, rw->constants[i].tensor, m, (size_t)(n * n) * sizeof *m);
        free(m);
        if (st != XPB_OK)
            return st;
    }
    return XPB_OK;
}

/* cpu_ref's compile of the program as the faults rewrite it, or as given (rw NULL). */
static xpb_status f_compile(xpb_executable **out, xpb_backend *be, const xpb_program *p,
                            const xpb_compile_options *o)
{
    *out = NULL;
    const xpb_communicator *comm = XPB_MEMBER_OR(o, xpb_compile_options, comm, NULL);
    struct faulty_executable *exe = calloc(1, sizeof *exe);
    if (!exe)
        return XPB_OUT_OF_MEMORY;
    xpb_status st = XPB_OUT_OF_MEMORY;
    if (rewrites() && !(exe->rw = rewrite_program(p)))
        goto free_exe;
    if ((st = inner->compile(&exe->base.inner, be, exe->rw ? &exe->rw->program : p, o)) != XPB_OK)
        goto free_exe;
    if (exe->rw && (st = write_constants(exe->base.inner, exe->rw)) != XPB_OK) {
        inner->destroy(exe->base.inner);
        goto free_exe;
    }
    exe->base.program = p;
    exe->base.rank = comm ? (int)comm->rank : -1;
    *out = &exe->base;
    return XPB_OK;
free_exe:
    rewrite_free(exe->rw);
    free(exe);
    return st;
}

/* Every executable of this backend is a faulty_executable (f_compile). */
static void f_destroy(xpb_executable *exe)
{
    if (!exe)
        return;
    inner->destroy(exe->inner);
    rewrite_free(((struct faulty_executable *)(void *)exe)->rw);
    free(exe);
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
    wrapped_api.write = f_write;
    wrapped_api.compile = f_compile;
    wrapped_api.destroy = f_destroy;
    return wrapped_query(out, &descriptor, host_major, host_minor, host);
}
