// What the parts of the cuDNN stand-in share (cuDNN 9 API Reference, cudnn_graph library:
// "Backend Descriptor Types", "Backend Descriptor Types > Attributes" and the functions
// cudnnBackendCreateDescriptor, cudnnBackendSetAttribute, cudnnBackendGetAttribute,
// cudnnBackendFinalize, cudnnBackendExecute).
//
// A descriptor collects attributes until it is finalized; finalizing checks them and freezes
// them into a `node`, an immutable snapshot. A descriptor given as the value of another
// descriptor's attribute must be finalized and is held by its snapshot, so that the operations,
// graphs, engines and plans built from it keep what it was when it was given.
#ifndef XPBSI_DNN_INTERNAL_HPP
#define XPBSI_DNN_INTERNAL_HPP

#include <cudnn.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "numerics.hpp"

namespace xpbsi
{
namespace dnn
{

// ---- dnn_handle.cpp -------------------------------------------------------------------------
// Records "<status name>: <message>" as the calling thread's last error (cudnnGetLastErrorString)
// and returns s.
cudnnStatus_t fail(cudnnStatus_t s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
struct handle {
    unsigned magic;
    cudaStream_t stream;
};
// The handle behind h, NULL when h is not a live handle; owned by the caller of cudnnCreate
// until cudnnDestroy.
handle *handle_of(cudnnHandle_t h);

// ---- attribute values (dnn_attr.cpp) --------------------------------------------------------
struct node;
using node_ptr = std::shared_ptr<const node>;

struct value {
    cudnnBackendAttributeType_t type;
    int64_t count = 0;
    std::vector<int64_t> ints;   // INT64, INT32, BOOLEAN, CHAR and every enumeration type
    std::vector<double> reals;   // FLOAT, DOUBLE
    std::vector<void *> ptrs;    // VOID_PTR, HANDLE
    std::vector<node_ptr> descs; // BACKEND_DESCRIPTOR: the given descriptors' snapshots
};
using attr_map = std::map<int, value>;

enum attr_flags : unsigned { REQUIRED = 1u, READ_ONLY = 2u };
constexpr int ANY_OPERATION = -1; // a descriptor value of any operation descriptor type

// One attribute of one descriptor type, as the documentation lists it: its type (and the
// alternative type it may be given in, e.g. CUDNN_TYPE_DOUBLE for CUDNN_TYPE_FLOAT), how many
// elements it takes, whether it is required or read-only, and for a descriptor value which
// descriptor type it must be.
struct attr_spec {
    int name;
    const char *text;
    cudnnBackendAttributeType_t type, alt;
    int64_t min, max;
    unsigned flags;
    int want;
};
const attr_spec *find_spec(cudnnBackendDescriptorType_t t, int name);
const std::vector<attr_spec> *specs_of(cudnnBackendDescriptorType_t t);
const char *type_name(cudnnBackendDescriptorType_t t);
const char *attr_name(int name);
// Reads `count` elements of `type` from `array` into v; checks descriptor values against spec.
cudnnStatus_t read_value(const attr_spec &spec, cudnnBackendAttributeType_t type, int64_t count,
                         const void *array, value &v);
// Writes min(requested, v.count) elements of v as `type` to array (descriptor values excepted).
cudnnStatus_t write_value(const attr_spec &spec, const value &v, cudnnBackendAttributeType_t type,
                          int64_t requested, void *array);
bool is_operation(int descriptor_type);

// ---- finalized content ----------------------------------------------------------------------
struct tensor_info {
    int64_t uid;
    cudnnDataType_t dtype;
    elem type;
    std::vector<int64_t> dims, strides;
    int64_t align;
    bool is_virtual;
    int64_t span() const; // elements from the first to one past the last (max offset + 1)
    bool same_as(const tensor_info &o) const;
};
using tensor_ptr = std::shared_ptr<const tensor_info>;

struct conv_info {
    cudnnDataType_t comp;
    cudnnConvolutionMode_t mode;
    int spatial;
    std::vector<int64_t> dil, str, pre, post;
};

struct pw_info {
    cudnnPointwiseMode_t mode;
    cudnnDataType_t prec;
    double lower_clip, upper_clip, slope, elu_alpha, softplus_beta, swish_beta;
};

enum class op_kind { conv_fwd, conv_bwd_data, conv_bwd_filter, pointwise };

// One operation. Convolutions: in[0] is the image operand (X, or dY for backward data), in[1]
// the second (W, or dY for backward filter), out the result (Y, dX or dW). Pointwise: in holds
// X, then B (binary and backward modes take dY as B), then T (ternary); out is Y or dX.
struct op_info {
    op_kind kind;
    cudnnBackendDescriptorType_t dtype;
    conv_info conv;
    pw_info pw;
    double alpha, beta; // convolution; pointwise: alpha1 and alpha2
    std::vector<tensor_ptr> in;
    tensor_ptr out;
};
using op_ptr = std::shared_ptr<const op_info>;

struct graph_info {
    std::vector<op_ptr> ops;         // in an order that computes every input before its use
    std::vector<tensor_ptr> tensors; // each tensor once
    const op_info *conv() const;     // the graph's convolution, or NULL
};

struct engine_info {
    std::shared_ptr<const graph_info> graph;
    int64_t index;
    std::vector<int64_t> notes; // cudnnBackendNumericalNote_t
    int64_t workspace;
};

struct varpack_info {
    std::vector<int64_t> uids;
    std::vector<void *> ptrs;
    void *workspace;
};

struct node {
    cudnnBackendDescriptorType_t type;
    attr_map attrs;
    std::shared_ptr<const void> content; // tensor_info, conv_info, ... by type
    template <typename T> std::shared_ptr<const T> get() const
    {
        return std::static_pointer_cast<const T>(content);
    }
};

// The descriptor behind a cudnnBackendDescriptor_t (desc_of: NULL when d is not a live one; owned
// by the caller of cudnnBackendCreateDescriptor until cudnnBackendDestroyDescriptor).
struct desc {
    unsigned magic;
    cudnnBackendDescriptorType_t type;
    attr_map attrs;
    node_ptr fin; // set by cudnnBackendFinalize
};
desc *desc_of(cudnnBackendDescriptor_t d);

// ---- finalize (dnn_tensor.cpp, dnn_ops.cpp, dnn_graph.cpp, dnn_engine.cpp) -------------------
// Each builds the content of a finalized descriptor of its type from checked attributes, or
// fails with the documented status and a message.
cudnnStatus_t finalize_tensor(const attr_map &a, std::shared_ptr<const void> &out);
cudnnStatus_t finalize_conv_desc(const attr_map &a, std::shared_ptr<const void> &out);
cudnnStatus_t finalize_pointwise_desc(const attr_map &a, std::shared_ptr<const void> &out);
cudnnStatus_t finalize_operation(cudnnBackendDescriptorType_t t, const attr_map &a,
                                 std::shared_ptr<const void> &out);
cudnnStatus_t finalize_graph(const attr_map &a, std::shared_ptr<const void> &out);
cudnnStatus_t finalize_engine(const attr_map &a, std::shared_ptr<const void> &out);
cudnnStatus_t finalize_engine_cfg(const attr_map &a, std::shared_ptr<const void> &out);
cudnnStatus_t finalize_heuristics(const attr_map &a, std::shared_ptr<const void> &out);
cudnnStatus_t finalize_plan(const attr_map &a, std::shared_ptr<const void> &out);
cudnnStatus_t finalize_variant_pack(const attr_map &a, std::shared_ptr<const void> &out);
// Read-only attributes computed from a finalized descriptor (results, notes, workspace sizes).
bool computed_attr(const node &n, int name, value &v);

// Helpers over attribute maps.
const value *attr(const attr_map &a, int name);
int64_t attr_int(const attr_map &a, int name, int64_t dflt);
double attr_real(const attr_map &a, int name, double dflt);
node_ptr attr_desc(const attr_map &a, int name);
elem elem_of(cudnnDataType_t t);

// ---- engines (dnn_engine.cpp) ---------------------------------------------------------------
constexpr int64_t ENGINE_COUNT = 3;
enum engine_id : int64_t { ENGINE_FALLBACK = 0, ENGINE_TENSOR_CORE = 1, ENGINE_REDUCED = 2 };

// ---- computation (dnn_conv.cpp, dnn_pointwise.cpp) ------------------------------------------
struct conv_numerics {
    bool tf32_inputs; // round fp32 inputs to TF32 (engine with DOWN_CONVERT_INPUTS)
    elem reduce_in;   // elem::f32, or the I/O type for a reduced-precision reduction
    void *workspace;  // scratch the engine uses (may be NULL when it needs none)
    size_t workspace_bytes;
};
// Runs one convolution operation on the tensors at the given addresses.
void run_conv(const op_info &op, const void *a, const void *w, void *y, const conv_numerics &num);
// Runs one pointwise operation.
void run_pointwise(const op_info &op, const std::vector<const void *> &in, void *y);

} // namespace dnn
} // namespace xpbsi

#endif
