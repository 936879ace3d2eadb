/* `xpubench info MODEL --program` (see cli_info_program.h): what a backend's compile receives,
 * read through the public ABI's own accessors (xpb_program_op, xpb_program_tensor,
 * xpb_program_phase), so that the view shows the program as a plugin sees it. */
#include "cli/cli_info_program.h"

#include <stdlib.h>
#include <string.h>

#include "base/names.h"

/* ---- attributes: only those the op sets (attrs_set) ---- */

enum attr_type { ATTR_PAIR, ATTR_INT, ATTR_FLOAT, ATTR_U64, ATTR_PERM };

typedef struct attr {
    const char *name; /* the member's name in xpb_op_attrs / xpb_op: "stride" */
    enum attr_type type;
    int64_t i[4];
    float f;
    uint64_t u;
} attr;

#define MAX_ATTRS 64

static void set_pair(attr *a, const int32_t *v)
{
    a->type = ATTR_PAIR;
    a->i[0] = v[0];
    a->i[1] = v[1];
}

/* PERMUTE's perm: four dims. */
static void set_perm(attr *a, const uint8_t *v)
{
    a->type = ATTR_PERM;
    for (int k = 0; k < 4; k++)
        a->i[k] = v[k];
}

static void set_i32(attr *a, int32_t v)
{
    a->type = ATTR_INT;
    a->i[0] = v;
}

static void set_u32(attr *a, uint32_t v)
{
    a->type = ATTR_INT;
    a->i[0] = v;
}

static void set_float(attr *a, float v)
{
    a->type = ATTR_FLOAT;
    a->f = v;
}

static void set_u64(attr *a, uint64_t v)
{
    a->type = ATTR_U64;
    a->u = v;
}

#define ATTR_SET_(a, v)                                                                            \
    _Generic((v),                                                                                  \
        const int32_t *: set_pair,                                                                 \
        int32_t *: set_pair,                                                                       \
        const uint8_t *: set_perm,                                                                 \
        uint8_t *: set_perm,                                                                       \
        int32_t: set_i32,                                                                          \
        uint32_t: set_u32,                                                                         \
        float: set_float,                                                                          \
        uint64_t: set_u64)(a, v)

/* The attributes op `op` of `p` sets, in bit order, into out[MAX_ATTRS]; their number. */
static size_t op_attrs(attr *out, const xpb_program *p, const xpb_op *op)
{
    size_t n = 0;
    uint64_t set = XPB_OP_HAS(p, attrs_set) ? op->attrs_set : 0;
#define ATTR_OF_(id, bit, member)                                                                  \
    if ((set & XPB_ATTR(id)) && n < MAX_ATTRS) {                                                   \
        out[n].name = #member;                                                                     \
        ATTR_SET_(&out[n], op->attrs.member);                                                      \
        n++;                                                                                       \
    }
    XPB_ATTR_MAP(ATTR_OF_)
#undef ATTR_OF_
#define OP_ATTR_OF_(id, bit, member, opset)                                                        \
    if ((set & XPB_ATTR(id)) && XPB_OP_HAS(p, member) && n < MAX_ATTRS) {                          \
        out[n].name = #member;                                                                     \
        ATTR_SET_(&out[n], op->member);                                                            \
        n++;                                                                                       \
    }
    XPB_OP_ATTR_MAP(OP_ATTR_OF_)
#undef OP_ATTR_OF_
    return n;
}

/* The shortest decimal that reads back as the same float ("0.01", not "0.0099999998"). */
static void float_text(char *buf, size_t size, float f)
{
    for (int digits = 6; digits <= 9; digits++) {
        snprintf(buf, size, "%.*g", digits, (double)f);
        if ((float)strtod(buf, NULL) == f)
            return;
    }
}

/* "stride 1,1" into buf. */
static void attr_text(char *buf, size_t size, const attr *a)
{
    char f[32];
    switch (a->type) {
    case ATTR_PAIR:
        snprintf(buf, size, "%s %lld,%lld", a->name, (long long)a->i[0], (long long)a->i[1]);
        break;
    case ATTR_INT:
        snprintf(buf, size, "%s %lld", a->name, (long long)a->i[0]);
        break;
    case ATTR_FLOAT:
        float_text(f, sizeof f, a->f);
        snprintf(buf, size, "%s %s", a->name, f);
        break;
    case ATTR_U64:
        snprintf(buf, size, "%s %llu", a->name, (unsigned long long)a->u);
        break;
    case ATTR_PERM:
        snprintf(buf, size, "%s %lld,%lld,%lld,%lld", a->name, (long long)a->i[0],
                 (long long)a->i[1], (long long)a->i[2], (long long)a->i[3]);
        break;
    }
}

static json_t *attr_json(const attr *a)
{
    char f[32];
    switch (a->type) {
    case ATTR_PAIR:
        return json_pack("[II]", (json_int_t)a->i[0], (json_int_t)a->i[1]);
    case ATTR_PERM:
        return json_pack("[IIII]", (json_int_t)a->i[0], (json_int_t)a->i[1], (json_int_t)a->i[2],
                         (json_int_t)a->i[3]);
    case ATTR_INT:
        return json_integer((json_int_t)a->i[0]);
    case ATTR_FLOAT:
        float_text(f, sizeof f, a->f);
        return json_real(strtod(f, NULL));
    case ATTR_U64:
        return json_integer((json_int_t)a->u); /* seeds are below 2^63 */
    }
    return json_null();
}

/* ---- pieces shared by the JSON and the text ---- */

/* The variant the program was built for; "" for a model without variants. */
static const char *variant_of(const xpb_program_view *v)
{
    return v->variant ? v->variant : "";
}

static const char *dtype_name(uint32_t dtype)
{
    return dtype == XPB_DTYPE_I32 ? "int32" : "float32";
}

/* "persistent,host_write" (empty when no flag) into buf. */
static void flags_text(char *buf, size_t size, uint32_t flags)
{
    snprintf(buf, size, "%s%s%s%s%s", flags & XPB_TENSOR_PERSISTENT ? "persistent" : "",
             (flags & XPB_TENSOR_PERSISTENT) && (flags & ~XPB_TENSOR_PERSISTENT) ? "," : "",
             flags & XPB_TENSOR_HOST_WRITE ? "host_write" : "",
             (flags & XPB_TENSOR_HOST_WRITE) && (flags & XPB_TENSOR_HOST_READ) ? "," : "",
             flags & XPB_TENSOR_HOST_READ ? "host_read" : "");
}

/* The phase op i belongs to. */
static uint32_t phase_of(const xpb_program *p, uint32_t i)
{
    for (uint32_t k = 0; k < p->n_phases; k++) {
        const xpb_phase *ph = xpb_program_phase(p, k);
        if (i >= ph->first_op && i < ph->first_op + ph->n_ops)
            return k;
    }
    return 0;
}

/* How many ops of each kind the program holds, indexed by kind (XPB_OP_KIND_END_ slots). */
static void count_kinds(uint32_t *count, const xpb_program *p)
{
    memset(count, 0, XPB_OP_KIND_END_ * sizeof *count);
    for (uint32_t i = 0; i < p->n_ops; i++) {
        uint32_t k = xpb_program_op(p, i)->kind;
        if (k < XPB_OP_KIND_END_)
            count[k]++;
    }
}

/* ---- JSON ---- */

static json_t *shape_json(const xpb_tensor_desc *t)
{
    json_t *a = json_array();
    for (uint32_t d = 0; d < t->ndim; d++)
        json_array_append_new(a, json_integer(t->dims[d]));
    return a;
}

static json_t *tensor_ref_json(const xpb_program *p, uint32_t id)
{
    if (id == XPB_NO_TENSOR || id >= p->n_tensors)
        return json_null();
    const xpb_tensor_desc *t = xpb_program_tensor(p, id);
    json_t *e = json_pack("{s:i, s:s, s:s}", "tensor", (int)id, "name", t->name, "role",
                          xpb_role_name(t->role));
    json_object_set_new(e, "shape", shape_json(t));
    return e;
}

static json_t *tensors_json(const xpb_program *p)
{
    json_t *list = json_array();
    for (uint32_t i = 0; i < p->n_tensors; i++) {
        const xpb_tensor_desc *t = xpb_program_tensor(p, i);
        char flags[64];
        flags_text(flags, sizeof flags, t->flags);
        json_t *e = json_pack("{s:i, s:s, s:s, s:s, s:s}", "id", (int)i, "name", t->name, "layer",
                              t->layer ? t->layer : "", "role", xpb_role_name(t->role), "dtype",
                              dtype_name(t->dtype));
        json_object_set_new(e, "shape", shape_json(t));
        json_object_set_new(e, "flags", json_string(flags));
        if ((t->role == XPB_ROLE_GRAD || t->role == XPB_ROLE_ACTIVATION_GRAD) &&
            t->grad_of < p->n_tensors)
            json_object_set_new(e, "grad_of", json_string(xpb_program_tensor(p, t->grad_of)->name));
        json_object_set_new(e, "first_op", json_integer(t->first_op));
        json_object_set_new(e, "last_op", json_integer(t->last_op));
        json_array_append_new(list, e);
    }
    return list;
}

static json_t *op_json(const xpb_program *p, uint32_t i)
{
    const xpb_op *op = xpb_program_op(p, i);
    json_t *e = json_pack("{s:i, s:i, s:s, s:i, s:s}", "index", (int)i, "phase",
                          (int)phase_of(p, i), "kind", xpb_op_kind_name(p, op), "opset",
                          (int)(XPB_OP_HAS(p, opset) ? op->opset : xpb_op_opset(op->kind)), "layer",
                          op->layer ? op->layer : "");
    attr attrs[MAX_ATTRS];
    size_t n = op_attrs(attrs, p, op);
    json_t *a = json_object(), *in = json_array(), *out = json_array();
    for (size_t k = 0; k < n; k++)
        json_object_set_new(a, attrs[k].name, attr_json(&attrs[k]));
    for (uint32_t k = 0; k < op->n_inputs && k < XPB_MAX_OP_INPUTS; k++)
        json_array_append_new(in, tensor_ref_json(p, op->inputs[k]));
    for (uint32_t k = 0; k < op->n_outputs && k < XPB_MAX_OP_OUTPUTS; k++)
        json_array_append_new(out, tensor_ref_json(p, op->outputs[k]));
    json_object_set_new(e, "attributes", a);
    json_object_set_new(e, "inputs", in);
    json_object_set_new(e, "outputs", out);
    return e;
}

json_t *xpb_program_view_json(const xpb_program_view *v, const xpb_model_program *mp)
{
    const xpb_program *p = &mp->program;
    json_t *doc = json_object(), *kinds = json_array(), *phases = json_array(), *ops = json_array();
    if (!doc || !kinds || !phases || !ops) {
        json_decref(doc);
        json_decref(kinds);
        json_decref(phases);
        json_decref(ops);
        return NULL;
    }
    json_object_set_new(doc, "model", json_string(v->model));
    json_object_set_new(doc, "variant", json_string(variant_of(v)));
    json_object_set_new(
        doc, "mode", json_string(xpb_mode_name(p->training ? XPB_MODE_TRAIN : XPB_MODE_INFERENCE)));
    json_object_set_new(doc, "batch", json_integer(mp->graph->batch));
    json_object_set_new(doc, "precision", json_string(xpb_precision_name(v->precision)));
    json_object_set_new(doc, "opset", json_integer(p->opset));
    uint32_t count[XPB_OP_KIND_END_];
    count_kinds(count, p);
    for (uint32_t k = 0; k < XPB_OP_KIND_END_; k++)
        if (count[k])
            json_array_append_new(kinds,
                                  json_pack("{s:s, s:i, s:i}", "kind", xpb_op_name(k), "opset",
                                            (int)xpb_op_opset(k), "count", (int)count[k]));
    json_object_set_new(doc, "op_kinds", kinds);
    for (uint32_t k = 0; k < p->n_phases; k++) {
        const xpb_phase *ph = xpb_program_phase(p, k);
        json_array_append_new(phases, json_pack("{s:s, s:i, s:i}", "name", ph->name, "first_op",
                                                (int)ph->first_op, "n_ops", (int)ph->n_ops));
    }
    json_object_set_new(doc, "phases", phases);
    json_object_set_new(doc, "tensors", tensors_json(p));
    for (uint32_t i = 0; i < p->n_ops; i++)
        json_array_append_new(ops, op_json(p, i));
    json_object_set_new(doc, "ops", ops);
    return doc;
}

/* ---- text ---- */

static void print_tensor_ref(FILE *f, const char *dir, const xpb_program *p, uint32_t id)
{
    char s[96];
    if (id == XPB_NO_TENSOR || id >= p->n_tensors) {
        fprintf(f, "          %-4s (none: XPB_NO_TENSOR)\n", dir);
        return;
    }
    const xpb_tensor_desc *t = xpb_program_tensor(p, id);
    fprintf(f, "          %-4s #%-5u %-36s %-16s %s\n", dir, id, t->name, xpb_role_name(t->role),
            xpb_shape_str(s, sizeof s, t->ndim, t->dims));
}

static void print_op(FILE *f, const xpb_program *p, uint32_t i)
{
    const xpb_op *op = xpb_program_op(p, i);
    attr attrs[MAX_ATTRS];
    size_t n = op_attrs(attrs, p, op);
    fprintf(f, "  %5u  %-20s %-28s", i, xpb_op_kind_name(p, op), op->layer ? op->layer : "");
    for (size_t k = 0; k < n; k++) {
        char text[96];
        attr_text(text, sizeof text, &attrs[k]);
        fprintf(f, "%s%s", k ? ", " : " ", text);
    }
    fprintf(f, "\n");
    for (uint32_t k = 0; k < op->n_inputs && k < XPB_MAX_OP_INPUTS; k++)
        print_tensor_ref(f, "in", p, op->inputs[k]);
    for (uint32_t k = 0; k < op->n_outputs && k < XPB_MAX_OP_OUTPUTS; k++)
        print_tensor_ref(f, "out", p, op->outputs[k]);
}

static void print_tensors(FILE *f, const xpb_program *p)
{
    fprintf(f, "\ntensors (%u):\n  %5s  %-36s %-16s %-8s %-20s %-32s %s\n", p->n_tensors, "id",
            "name", "role", "dtype", "shape", "flags", "ops (first-last)");
    for (uint32_t i = 0; i < p->n_tensors; i++) {
        const xpb_tensor_desc *t = xpb_program_tensor(p, i);
        char s[96], flags[64];
        flags_text(flags, sizeof flags, t->flags);
        fprintf(f, "  %5u  %-36s %-16s %-8s %-20s %-32s %u-%u", i, t->name, xpb_role_name(t->role),
                dtype_name(t->dtype), xpb_shape_str(s, sizeof s, t->ndim, t->dims),
                flags[0] ? flags : "-", t->first_op, t->last_op);
        if ((t->role == XPB_ROLE_GRAD || t->role == XPB_ROLE_ACTIVATION_GRAD) &&
            t->grad_of < p->n_tensors)
            fprintf(f, "  grad of #%u", t->grad_of);
        fprintf(f, "\n");
    }
}

void xpb_program_view_print(FILE *f, const xpb_program_view *v, const xpb_model_program *mp)
{
    const xpb_program *p = &mp->program;
    fprintf(f, "program of %s%s%s: %s, batch %u, op set %u; %u phase%s, %u ops, %u tensors\n",
            v->model, v->variant ? ", variant " : "", variant_of(v),
            p->training ? "training" : "inference", mp->graph->batch, p->opset, p->n_phases,
            p->n_phases == 1 ? "" : "s", p->n_ops, p->n_tensors);
    fprintf(f,
            "precision %s: a compile option (xpb_compile_options.precision); the program itself "
            "is written once in fp32 semantics\n",
            xpb_precision_name(v->precision));
    uint32_t count[XPB_OP_KIND_END_], kinds = 0;
    count_kinds(count, p);
    for (uint32_t k = 0; k < XPB_OP_KIND_END_; k++)
        kinds += count[k] != 0;
    fprintf(f, "\nop kinds (%u):", kinds);
    for (uint32_t k = 0, shown = 0; k < XPB_OP_KIND_END_; k++)
        if (count[k])
            fprintf(f, "%s%s x%u", shown++ ? ", " : " ", xpb_op_name(k), count[k]);
    fprintf(f, "\n");
    print_tensors(f, p);
    for (uint32_t k = 0; k < p->n_phases; k++) {
        const xpb_phase *ph = xpb_program_phase(p, k);
        fprintf(f, "\nphase %u '%s': ops %u-%u\n  %5s  %-20s %-28s %s\n", k, ph->name, ph->first_op,
                ph->first_op + ph->n_ops - (ph->n_ops ? 1 : 0), "op", "kind", "layer",
                "attributes set; then inputs and outputs: #tensor name role shape");
        for (uint32_t i = ph->first_op; i < ph->first_op + ph->n_ops && i < p->n_ops; i++)
            print_op(f, p, i);
    }
}
