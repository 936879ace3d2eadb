// The attributes of each descriptor type the stand-in models, as the cuDNN 9 API Reference lists
// them ("Backend Descriptor Types": for each type, its attributes with their attribute type,
// element count, and whether they are required or read-only), and the reading and writing of
// attribute values in the C types of cudnnBackendAttributeType_t's mapping table
// (CUDNN_TYPE_BOOLEAN is bool, CUDNN_TYPE_INT64 int64_t, every enumeration an int, ...).
#include <cstring>

#include "dnn_internal.hpp"

namespace xpbsi
{
namespace dnn
{

namespace
{

constexpr int64_t MANY = (int64_t)1 << 20;
constexpr int NONE = -2; // not a descriptor value

#define S(n, t, alt, mn, mx, fl, want)                                                             \
    {                                                                                              \
        n, #n, CUDNN_TYPE_##t, CUDNN_TYPE_##alt, mn, mx, fl, want                                  \
    }
#define TENSOR_D CUDNN_BACKEND_TENSOR_DESCRIPTOR
#define DESC(n, fl, want) S(n, BACKEND_DESCRIPTOR, BACKEND_DESCRIPTOR, 1, 1, fl, want)
#define SCALAR(n, fl) S(n, DOUBLE, FLOAT, 1, 1, fl, NONE)

const std::vector<attr_spec> k_pointwise = {
    S(CUDNN_ATTR_POINTWISE_MODE, POINTWISE_MODE, POINTWISE_MODE, 1, 1, REQUIRED, NONE),
    S(CUDNN_ATTR_POINTWISE_MATH_PREC, DATA_TYPE, DATA_TYPE, 1, 1, REQUIRED, NONE),
    S(CUDNN_ATTR_POINTWISE_NAN_PROPAGATION, NAN_PROPOGATION, NAN_PROPOGATION, 1, 1, 0, NONE),
    SCALAR(CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP, 0),
    SCALAR(CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP, 0),
    SCALAR(CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE, 0),
    SCALAR(CUDNN_ATTR_POINTWISE_ELU_ALPHA, 0),
    SCALAR(CUDNN_ATTR_POINTWISE_SOFTPLUS_BETA, 0),
    SCALAR(CUDNN_ATTR_POINTWISE_SWISH_BETA, 0),
    S(CUDNN_ATTR_POINTWISE_AXIS, INT64, INT64, 1, 1, 0, NONE),
};

const std::vector<attr_spec> k_convolution = {
    S(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, DATA_TYPE, DATA_TYPE, 1, 1, REQUIRED, NONE),
    S(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CONVOLUTION_MODE, CONVOLUTION_MODE, 1, 1, REQUIRED, NONE),
    S(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, INT64, INT64, 1, 1, REQUIRED, NONE),
    S(CUDNN_ATTR_CONVOLUTION_DILATIONS, INT64, INT64, 1, CUDNN_DIM_MAX, REQUIRED, NONE),
    S(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, INT64, INT64, 1, CUDNN_DIM_MAX, REQUIRED, NONE),
    S(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, INT64, INT64, 1, CUDNN_DIM_MAX, REQUIRED, NONE),
    S(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, INT64, INT64, 1, CUDNN_DIM_MAX, REQUIRED, NONE),
};

const std::vector<attr_spec> k_tensor = {
    S(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, INT64, INT64, 1, 1, REQUIRED, NONE),
    S(CUDNN_ATTR_TENSOR_DATA_TYPE, DATA_TYPE, DATA_TYPE, 1, 1, REQUIRED, NONE),
    S(CUDNN_ATTR_TENSOR_DIMENSIONS, INT64, INT64, 1, CUDNN_DIM_MAX, REQUIRED, NONE),
    S(CUDNN_ATTR_TENSOR_STRIDES, INT64, INT64, 1, CUDNN_DIM_MAX, REQUIRED, NONE),
    S(CUDNN_ATTR_TENSOR_UNIQUE_ID, INT64, INT64, 1, 1, REQUIRED, NONE),
    S(CUDNN_ATTR_TENSOR_IS_VIRTUAL, BOOLEAN, BOOLEAN, 1, 1, 0, NONE),
    S(CUDNN_ATTR_TENSOR_IS_BY_VALUE, BOOLEAN, BOOLEAN, 1, 1, 0, NONE),
    S(CUDNN_ATTR_TENSOR_VECTOR_COUNT, INT64, INT64, 1, 1, 0, NONE),
    S(CUDNN_ATTR_TENSOR_VECTORIZED_DIMENSION, INT64, INT64, 1, 1, 0, NONE),
    S(CUDNN_ATTR_TENSOR_REORDERING_MODE, TENSOR_REORDERING_MODE, TENSOR_REORDERING_MODE, 1, 1, 0,
      NONE),
};

// The three convolution operations have the same attributes under their own names: alpha and
// beta, the convolution descriptor, and three tensors.
#define CONV_OP(P, T1, T2, T3)                                                                     \
    {                                                                                              \
        SCALAR(P##ALPHA, REQUIRED), SCALAR(P##BETA, REQUIRED),                                     \
            DESC(P##CONV_DESC, REQUIRED, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR),                    \
            DESC(P##T1, REQUIRED, TENSOR_D), DESC(P##T2, REQUIRED, TENSOR_D),                      \
            DESC(P##T3, REQUIRED, TENSOR_D),                                                       \
    }
const std::vector<attr_spec> k_conv_fwd =
    CONV_OP(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_, W, X, Y);
const std::vector<attr_spec> k_conv_bwd_data =
    CONV_OP(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_, W, DX, DY);
const std::vector<attr_spec> k_conv_bwd_filter =
    CONV_OP(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_, DW, X, DY);
#undef CONV_OP

// Which of X, B, Y, dX, dY, T a mode needs is checked at finalization (dnn_ops.cpp).
const std::vector<attr_spec> k_op_pointwise = {
    DESC(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, REQUIRED,
         CUDNN_BACKEND_POINTWISE_DESCRIPTOR),
    DESC(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, REQUIRED, TENSOR_D),
    DESC(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, 0, TENSOR_D),
    DESC(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, 0, TENSOR_D),
    DESC(CUDNN_ATTR_OPERATION_POINTWISE_DXDESC, 0, TENSOR_D),
    DESC(CUDNN_ATTR_OPERATION_POINTWISE_DYDESC, 0, TENSOR_D),
    DESC(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, 0, TENSOR_D),
    SCALAR(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, 0),
    SCALAR(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, 0),
};

// CUDNN_ATTR_OPERATIONGRAPH_HANDLE and CUDNN_ATTR_EXECUTION_PLAN_HANDLE are deprecated in the
// cuDNN 9 headers the stand-in implements (cudnn_graph.h, CUDNN_DEPRECATED_ENUM): optional.
const std::vector<attr_spec> k_graph = {
    S(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, HANDLE, HANDLE, 1, 1, 0, NONE),
    S(CUDNN_ATTR_OPERATIONGRAPH_OPS, BACKEND_DESCRIPTOR, BACKEND_DESCRIPTOR, 1, MANY, REQUIRED,
      ANY_OPERATION),
    S(CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, INT64, INT64, 1, 1, READ_ONLY, NONE),
    S(CUDNN_ATTR_OPERATIONGRAPH_IS_DYNAMIC_SHAPE_ENABLED, BOOLEAN, BOOLEAN, 1, 1, 0, NONE),
};

const std::vector<attr_spec> k_heur = {
    S(CUDNN_ATTR_ENGINEHEUR_MODE, HEUR_MODE, HEUR_MODE, 1, 1, REQUIRED, NONE),
    DESC(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, REQUIRED, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR),
    S(CUDNN_ATTR_ENGINEHEUR_RESULTS, BACKEND_DESCRIPTOR, BACKEND_DESCRIPTOR, 0, MANY, READ_ONLY,
      CUDNN_BACKEND_ENGINECFG_DESCRIPTOR),
    S(CUDNN_ATTR_ENGINEHEUR_SM_COUNT_TARGET, INT32, INT32, 1, 1, 0, NONE),
};

const std::vector<attr_spec> k_engine = {
    DESC(CUDNN_ATTR_ENGINE_OPERATION_GRAPH, REQUIRED, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR),
    S(CUDNN_ATTR_ENGINE_GLOBAL_INDEX, INT64, INT64, 1, 1, REQUIRED, NONE),
    S(CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, NUMERICAL_NOTE, NUMERICAL_NOTE, 0, MANY, READ_ONLY, NONE),
    S(CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, BEHAVIOR_NOTE, BEHAVIOR_NOTE, 0, MANY, READ_ONLY, NONE),
    S(CUDNN_ATTR_ENGINE_SM_COUNT_TARGET, INT32, INT32, 1, 1, 0, NONE),
};

const std::vector<attr_spec> k_engine_cfg = {
    DESC(CUDNN_ATTR_ENGINECFG_ENGINE, REQUIRED, CUDNN_BACKEND_ENGINE_DESCRIPTOR),
    S(CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, BACKEND_DESCRIPTOR, BACKEND_DESCRIPTOR, 0, MANY, 0,
      CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR),
    S(CUDNN_ATTR_ENGINECFG_WORKSPACE_SIZE, INT64, INT64, 1, 1, READ_ONLY, NONE),
};

const std::vector<attr_spec> k_plan = {
    S(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, HANDLE, HANDLE, 1, 1, 0, NONE),
    DESC(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, REQUIRED, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR),
    S(CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, INT64, INT64, 1, 1, READ_ONLY, NONE),
    S(CUDNN_ATTR_EXECUTION_PLAN_COMPUTED_INTERMEDIATE_UIDS, INT64, INT64, 0, MANY, 0, NONE),
    S(CUDNN_ATTR_EXECUTION_PLAN_RUN_ONLY_INTERMEDIATE_UIDS, INT64, INT64, 0, MANY, 0, NONE),
};

const std::vector<attr_spec> k_variant_pack = {
    S(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, INT64, INT64, 0, MANY, REQUIRED, NONE),
    S(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, VOID_PTR, VOID_PTR, 0, MANY, REQUIRED, NONE),
    S(CUDNN_ATTR_VARIANT_PACK_INTERMEDIATES, VOID_PTR, VOID_PTR, 0, MANY, 0, NONE),
    S(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, VOID_PTR, VOID_PTR, 1, 1, 0, NONE),
};

const std::vector<attr_spec> k_knob_choice = {
    S(CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, KNOB_TYPE, KNOB_TYPE, 1, 1, REQUIRED, NONE),
    S(CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, INT64, INT64, 1, 1, REQUIRED, NONE),
};

#undef S
#undef DESC
#undef SCALAR
#undef TENSOR_D

struct type_entry {
    cudnnBackendDescriptorType_t type;
    const char *name;
    const std::vector<attr_spec> *specs;
};

#define T(t, s)                                                                                    \
    {                                                                                              \
        t, #t, s                                                                                   \
    }
const type_entry k_types[] = {
    T(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, &k_pointwise),
    T(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, &k_convolution),
    T(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &k_engine),
    T(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &k_engine_cfg),
    T(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &k_heur),
    T(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &k_plan),
    T(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, &k_knob_choice),
    T(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, &k_conv_fwd),
    T(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR, &k_conv_bwd_filter),
    T(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR, &k_conv_bwd_data),
    T(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, &k_op_pointwise),
    T(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &k_graph),
    T(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &k_variant_pack),
    T(CUDNN_BACKEND_TENSOR_DESCRIPTOR, &k_tensor),
};
#undef T

// The size of one element of each attribute type in the caller's array.
size_t elem_bytes(cudnnBackendAttributeType_t t)
{
    switch (t) {
    case CUDNN_TYPE_BOOLEAN:
    case CUDNN_TYPE_CHAR:
        return 1;
    case CUDNN_TYPE_INT64:
    case CUDNN_TYPE_DOUBLE:
        return 8;
    case CUDNN_TYPE_FLOAT:
    case CUDNN_TYPE_INT32:
        return 4;
    case CUDNN_TYPE_HANDLE:
    case CUDNN_TYPE_VOID_PTR:
    case CUDNN_TYPE_BACKEND_DESCRIPTOR:
        return sizeof(void *);
    case CUDNN_TYPE_FRACTION:
        return sizeof(cudnnFraction_t);
    default:
        return sizeof(int); // the enumerations
    }
}

bool is_real(cudnnBackendAttributeType_t t)
{
    return t == CUDNN_TYPE_FLOAT || t == CUDNN_TYPE_DOUBLE;
}

bool is_pointer(cudnnBackendAttributeType_t t)
{
    return t == CUDNN_TYPE_VOID_PTR || t == CUDNN_TYPE_HANDLE;
}

// Whether an enumeration value is one the headers define (values outside are BAD_PARAM:
// "arrayOfElements contains values invalid for the attributeType").
bool valid_enum(cudnnBackendAttributeType_t t, int64_t v)
{
    switch (t) {
    case CUDNN_TYPE_DATA_TYPE:
        return v >= CUDNN_DATA_FLOAT && v <= CUDNN_DATA_COMPLEX_FP64;
    case CUDNN_TYPE_CONVOLUTION_MODE:
        return v == CUDNN_CONVOLUTION || v == CUDNN_CROSS_CORRELATION;
    case CUDNN_TYPE_HEUR_MODE:
        return v >= CUDNN_HEUR_MODE_INSTANT && v < CUDNN_HEUR_MODES_COUNT;
    case CUDNN_TYPE_NUMERICAL_NOTE:
        return v >= 0 && v < CUDNN_NUMERICAL_NOTE_TYPE_COUNT;
    case CUDNN_TYPE_POINTWISE_MODE:
        return (v >= 0 && v <= 23) || (v >= 100 && v <= 107) || (v >= 200 && v <= 207) ||
               (v >= 300 && v <= 305) || (v >= 400 && v <= 402) || v == 501 || v == 601;
    default:
        return true;
    }
}

} // namespace

const std::vector<attr_spec> *specs_of(cudnnBackendDescriptorType_t t)
{
    for (const type_entry &e : k_types)
        if (e.type == t)
            return e.specs;
    return nullptr;
}

const attr_spec *find_spec(cudnnBackendDescriptorType_t t, int name)
{
    const std::vector<attr_spec> *s = specs_of(t);
    if (s)
        for (const attr_spec &a : *s)
            if (a.name == name)
                return &a;
    return nullptr;
}

const char *type_name(cudnnBackendDescriptorType_t t)
{
    for (const type_entry &e : k_types)
        if (e.type == t)
            return e.name;
    return "a descriptor type the stand-in does not model";
}

const char *attr_name(int name)
{
    for (const type_entry &e : k_types)
        for (const attr_spec &a : *e.specs)
            if (a.name == name)
                return a.text;
    return "an attribute the stand-in does not model";
}

bool is_operation(int t)
{
    return t == CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR ||
           t == CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR ||
           t == CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR ||
           t == CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR;
}

cudnnStatus_t read_value(const attr_spec &spec, cudnnBackendAttributeType_t type, int64_t count,
                         const void *array, value &v)
{
    v = value();
    v.type = type;
    v.count = count;
    const char *p = static_cast<const char *>(array);
    size_t sz = elem_bytes(type);
    for (int64_t i = 0; i < count; i++, p += sz) {
        if (type == CUDNN_TYPE_BACKEND_DESCRIPTOR) {
            cudnnBackendDescriptor_t d;
            memcpy(&d, p, sizeof d);
            desc *x = desc_of(d);
            if (!x)
                return fail(CUDNN_STATUS_BAD_PARAM, "%s[%ld]: not a live descriptor", spec.text,
                            (long)i);
            if (!x->fin)
                return fail(CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED,
                            "%s[%ld]: the %s given is not finalized", spec.text, (long)i,
                            type_name(x->type));
            bool ok = spec.want == ANY_OPERATION ? is_operation(x->type) : spec.want == x->type;
            if (!ok)
                return fail(CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE,
                            "%s[%ld]: a %s where %s is required", spec.text, (long)i,
                            type_name(x->type),
                            spec.want == ANY_OPERATION
                                ? "an operation descriptor"
                                : type_name((cudnnBackendDescriptorType_t)spec.want));
            v.descs.push_back(x->fin);
        } else if (is_real(type)) {
            double d;
            if (type == CUDNN_TYPE_FLOAT) {
                float f;
                memcpy(&f, p, sizeof f);
                d = f;
            } else {
                memcpy(&d, p, sizeof d);
            }
            v.reals.push_back(d);
        } else if (is_pointer(type)) {
            void *q;
            memcpy(&q, p, sizeof q);
            v.ptrs.push_back(q);
        } else {
            int64_t x = 0;
            if (type == CUDNN_TYPE_BOOLEAN) {
                bool b;
                memcpy(&b, p, 1);
                x = b;
            } else if (type == CUDNN_TYPE_CHAR) {
                x = *p;
            } else if (type == CUDNN_TYPE_INT64) {
                memcpy(&x, p, sizeof x);
            } else {
                int32_t y;
                memcpy(&y, p, sizeof y);
                x = y;
            }
            if (!valid_enum(type, x))
                return fail(CUDNN_STATUS_BAD_PARAM, "%s[%ld]: %ld is not a value of its type",
                            spec.text, (long)i, (long)x);
            v.ints.push_back(x);
        }
    }
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t write_value(const attr_spec &spec, const value &v, cudnnBackendAttributeType_t type,
                          int64_t requested, void *array)
{
    int64_t n = requested < v.count ? requested : v.count;
    char *p = static_cast<char *>(array);
    size_t sz = elem_bytes(type);
    if (n > 0 && !array)
        return fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "%s: arrayOfElements is NULL", spec.text);
    for (int64_t i = 0; i < n; i++, p += sz) {
        if (type == CUDNN_TYPE_FLOAT) {
            float f = (float)v.reals[(size_t)i];
            memcpy(p, &f, sizeof f);
        } else if (type == CUDNN_TYPE_DOUBLE) {
            memcpy(p, &v.reals[(size_t)i], sizeof(double));
        } else if (is_pointer(type)) {
            memcpy(p, &v.ptrs[(size_t)i], sizeof(void *));
        } else if (type == CUDNN_TYPE_BOOLEAN) {
            bool b = v.ints[(size_t)i] != 0;
            memcpy(p, &b, 1);
        } else if (type == CUDNN_TYPE_CHAR) {
            *p = (char)v.ints[(size_t)i];
        } else if (type == CUDNN_TYPE_INT64) {
            memcpy(p, &v.ints[(size_t)i], sizeof(int64_t));
        } else {
            int32_t y = (int32_t)v.ints[(size_t)i];
            memcpy(p, &y, sizeof y);
        }
    }
    return CUDNN_STATUS_SUCCESS;
}

const value *attr(const attr_map &a, int name)
{
    auto it = a.find(name);
    return it == a.end() ? nullptr : &it->second;
}

int64_t attr_int(const attr_map &a, int name, int64_t dflt)
{
    const value *v = attr(a, name);
    return v && !v->ints.empty() ? v->ints[0] : dflt;
}

double attr_real(const attr_map &a, int name, double dflt)
{
    const value *v = attr(a, name);
    return v && !v->reals.empty() ? v->reals[0] : dflt;
}

node_ptr attr_desc(const attr_map &a, int name)
{
    const value *v = attr(a, name);
    return v && !v->descs.empty() ? v->descs[0] : nullptr;
}

elem elem_of(cudnnDataType_t t)
{
    switch (t) {
    case CUDNN_DATA_FLOAT:
        return elem::f32;
    case CUDNN_DATA_HALF:
        return elem::f16;
    case CUDNN_DATA_BFLOAT16:
        return elem::bf16;
    case CUDNN_DATA_INT32:
        return elem::i32;
    case CUDNN_DATA_INT64:
        return elem::i64;
    case CUDNN_DATA_INT8:
        return elem::i8;
    case CUDNN_DATA_UINT8:
        return elem::u8;
    case CUDNN_DATA_DOUBLE:
        return elem::f64;
    default:
        return elem::none;
    }
}

} // namespace dnn
} // namespace xpbsi
