// Engines, heuristics, engine configurations, execution plans and variant packs (cuDNN 9 API
// Reference, Backend Descriptor Types: CUDNN_BACKEND_ENGINE_DESCRIPTOR
// ("CUDNN_STATUS_NOT_SUPPORTED: the descriptor attribute set is not supported by the current
// version of cuDNN, for example the value of CUDNN_ATTR_ENGINE_GLOBAL_INDEX is not in a valid
// range"), CUDNN_BACKEND_ENGINEHEUR_- DESCRIPTOR (its results are engine configurations,
// "finalized" and ready for a plan), CUDNN_BACKEND_ENGINECFG_DESCRIPTOR,
// CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR;
// cudnnBackendNumericalNote_t).
//
// The stand-in has three engines, each a faithful kind of cuDNN engine:
//   0  the fallback: fp32 accumulation of exact inputs; no numerical note, no workspace;
//   1  a tensor-core engine (CUDNN_NUMERICAL_NOTE_TENSOR_CORE): fp16 from sm_70, bf16 and fp32
//      from sm_80, where fp32 inputs are rounded to TF32 (CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_-
//      INPUTS), as cuDNN's default fp32 engines on Ampere do; it needs a workspace;
//   2  a reduced-precision-reduction engine (CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION)
//      for fp16 and bf16: partial sums are rounded to the I/O type.
// Heuristics rank them 2, 1, 0 (the fastest kinds first, as cuDNN's do); CUDNN_HEUR_MODE_FALLBACK
// returns the fallback engine only. Graphs: one convolution (forward or backward data) with a
// pointwise epilogue, a lone backward-filter convolution, or pointwise operations alone.
#include <string>

#include "dnn_internal.hpp"
#include "rt_internal.hpp"

namespace xpbsi
{
namespace dnn
{

namespace
{

constexpr int64_t k_tensor_core_workspace = 64 << 10;

struct heur_info {
    std::vector<node_ptr> results; // engine configuration snapshots
};

bool pointwise_modelled(cudnnPointwiseMode_t m)
{
    switch (m) {
    case CUDNN_POINTWISE_ADD:
    case CUDNN_POINTWISE_SUB:
    case CUDNN_POINTWISE_MUL:
    case CUDNN_POINTWISE_DIV:
    case CUDNN_POINTWISE_MAX:
    case CUDNN_POINTWISE_MIN:
    case CUDNN_POINTWISE_ADD_SQUARE:
    case CUDNN_POINTWISE_IDENTITY:
    case CUDNN_POINTWISE_NEG:
    case CUDNN_POINTWISE_ABS:
    case CUDNN_POINTWISE_EXP:
    case CUDNN_POINTWISE_LOG:
    case CUDNN_POINTWISE_SQRT:
    case CUDNN_POINTWISE_RSQRT:
    case CUDNN_POINTWISE_RECIPROCAL:
    case CUDNN_POINTWISE_RELU_FWD:
    case CUDNN_POINTWISE_TANH_FWD:
    case CUDNN_POINTWISE_SIGMOID_FWD:
    case CUDNN_POINTWISE_ELU_FWD:
    case CUDNN_POINTWISE_GELU_FWD:
    case CUDNN_POINTWISE_GELU_APPROX_TANH_FWD:
    case CUDNN_POINTWISE_RELU_BWD:
    case CUDNN_POINTWISE_TANH_BWD:
    case CUDNN_POINTWISE_SIGMOID_BWD:
    case CUDNN_POINTWISE_ELU_BWD:
    case CUDNN_POINTWISE_GELU_BWD:
        return true;
    default:
        return false;
    }
}

bool float_type(elem e)
{
    return e == elem::f32 || e == elem::f16 || e == elem::bf16;
}

// Whether engine `id` runs graph g on this device; why not, with the status cuDNN uses.
cudnnStatus_t supports(const graph_info &g, int64_t id, std::string &why)
{
    int cc = device().major * 10 + device().minor;
    const op_info *conv = nullptr;
    for (const op_ptr &o : g.ops) {
        if (o->kind == op_kind::pointwise) {
            if (!pointwise_modelled(o->pw.mode)) {
                why = "pointwise mode " + std::to_string((int)o->pw.mode) + " is not modelled";
                return CUDNN_STATUS_NOT_SUPPORTED;
            }
            if (o->pw.prec != CUDNN_DATA_FLOAT) {
                why = "pointwise math precision other than CUDNN_DATA_FLOAT is not modelled";
                return CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE;
            }
            continue;
        }
        if (conv) {
            why = "more than one convolution in a graph";
            return CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN;
        }
        conv = o.get();
    }
    if (!conv) {
        why = "pointwise-only graphs run on the fallback engine only";
        return id == ENGINE_FALLBACK ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_NOT_SUPPORTED;
    }
    if (conv->kind == op_kind::conv_bwd_filter && g.ops.size() > 1) {
        why = "backward filter does not fuse with pointwise operations";
        return CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN;
    }
    // every pointwise operation must be an epilogue: one of its inputs comes from the
    // convolution or from an earlier epilogue operation
    std::vector<int64_t> chain = {conv->out->uid};
    for (const op_ptr &o : g.ops) {
        if (o.get() == conv)
            continue;
        bool fed = false;
        for (const tensor_ptr &t : o->in)
            for (int64_t u : chain)
                fed = fed || t->uid == u;
        if (!fed) {
            why = "a pointwise operation that does not follow the convolution (only epilogues "
                  "fuse)";
            return CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN;
        }
        chain.push_back(o->out->uid);
    }
    elem t = conv->in[0]->type;
    if (!float_type(t) || conv->in[1]->type != t || conv->out->type != t) {
        why = "convolution operands of different or non-floating types";
        return CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE;
    }
    if (conv->conv.comp != CUDNN_DATA_FLOAT) {
        why = "a compute type other than CUDNN_DATA_FLOAT is not modelled";
        return CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE;
    }
    if (t == elem::bf16 && cc < 80) {
        why = "bf16 convolutions need sm_80";
        return CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH;
    }
    if (id == ENGINE_TENSOR_CORE && ((t == elem::f32 && cc < 80) || cc < 70)) {
        why = "the tensor-core engine needs sm_70 (fp16) or sm_80 (bf16, TF32)";
        return CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH;
    }
    if (id == ENGINE_REDUCED && (t == elem::f32 || cc < 70)) {
        why = "the reduced-precision-reduction engine takes fp16 and bf16 only";
        return CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE;
    }
    return CUDNN_STATUS_SUCCESS;
}

std::shared_ptr<engine_info> make_engine(const node_ptr &graph, int64_t id)
{
    auto e = std::make_shared<engine_info>();
    e->graph = graph->get<graph_info>();
    e->index = id;
    e->workspace = 0;
    const op_info *conv = e->graph->conv();
    if (id == ENGINE_TENSOR_CORE) {
        e->notes.push_back(CUDNN_NUMERICAL_NOTE_TENSOR_CORE);
        if (conv && conv->in[0]->type == elem::f32)
            e->notes.push_back(CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS);
        e->workspace = k_tensor_core_workspace;
    } else if (id == ENGINE_REDUCED) {
        e->notes.push_back(CUDNN_NUMERICAL_NOTE_TENSOR_CORE);
        e->notes.push_back(CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION);
    }
    return e;
}

value desc_value(const node_ptr &n)
{
    value v;
    v.type = CUDNN_TYPE_BACKEND_DESCRIPTOR;
    v.count = 1;
    v.descs = {n};
    return v;
}

value int_value(cudnnBackendAttributeType_t type, std::vector<int64_t> ints)
{
    value v;
    v.type = type;
    v.count = (int64_t)ints.size();
    v.ints = std::move(ints);
    return v;
}

// The snapshot of an engine configuration of engine `id` for graph `graph`, as the heuristics
// return it: the configuration names its engine, which names the graph.
node_ptr make_cfg_node(const node_ptr &graph, int64_t id)
{
    auto eng = std::make_shared<node>();
    eng->type = CUDNN_BACKEND_ENGINE_DESCRIPTOR;
    eng->attrs[CUDNN_ATTR_ENGINE_OPERATION_GRAPH] = desc_value(graph);
    eng->attrs[CUDNN_ATTR_ENGINE_GLOBAL_INDEX] = int_value(CUDNN_TYPE_INT64, {id});
    eng->content = make_engine(graph, id);
    auto cfg = std::make_shared<node>();
    cfg->type = CUDNN_BACKEND_ENGINECFG_DESCRIPTOR;
    cfg->attrs[CUDNN_ATTR_ENGINECFG_ENGINE] = desc_value(eng);
    cfg->content = eng->content;
    return cfg;
}

} // namespace

cudnnStatus_t finalize_engine(const attr_map &a, std::shared_ptr<const void> &out)
{
    node_ptr graph = attr_desc(a, CUDNN_ATTR_ENGINE_OPERATION_GRAPH);
    int64_t id = attr_int(a, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, -1);
    if (id < 0 || id >= ENGINE_COUNT)
        return fail(CUDNN_STATUS_NOT_SUPPORTED,
                    "engine: global index %ld is not in [0, %ld) (the stand-in has %ld engines)",
                    (long)id, (long)ENGINE_COUNT, (long)ENGINE_COUNT);
    std::string why;
    cudnnStatus_t s = supports(*graph->get<graph_info>(), id, why);
    if (s != CUDNN_STATUS_SUCCESS)
        return fail(s, "engine %ld: %s", (long)id, why.c_str());
    out = make_engine(graph, id);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t finalize_engine_cfg(const attr_map &a, std::shared_ptr<const void> &out)
{
    const value *knobs = attr(a, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES);
    if (knobs && knobs->count > 0)
        return fail(CUDNN_STATUS_NOT_SUPPORTED, "engine configuration: the stand-in's engines "
                                                "have no knobs");
    out = attr_desc(a, CUDNN_ATTR_ENGINECFG_ENGINE)->content;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t finalize_heuristics(const attr_map &a, std::shared_ptr<const void> &out)
{
    node_ptr graph = attr_desc(a, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH);
    auto mode = (cudnnBackendHeurMode_t)attr_int(a, CUDNN_ATTR_ENGINEHEUR_MODE, 0);
    std::vector<int64_t> order = {ENGINE_REDUCED, ENGINE_TENSOR_CORE, ENGINE_FALLBACK};
    if (mode == CUDNN_HEUR_MODE_FALLBACK)
        order = {ENGINE_FALLBACK};
    auto h = std::make_shared<heur_info>();
    std::string why, all;
    for (int64_t id : order) {
        if (supports(*graph->get<graph_info>(), id, why) == CUDNN_STATUS_SUCCESS)
            h->results.push_back(make_cfg_node(graph, id));
        else
            all += (all.empty() ? "" : "; ") + ("engine " + std::to_string(id) + ": " + why);
    }
    if (h->results.empty()) // success with no result: say why in the last error string
        fail(CUDNN_STATUS_NOT_SUPPORTED, "heuristics: no engine runs this graph (%s)", all.c_str());
    out = h;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t finalize_plan(const attr_map &a, std::shared_ptr<const void> &out)
{
    out = attr_desc(a, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG)->content;
    const value *c = attr(a, CUDNN_ATTR_EXECUTION_PLAN_COMPUTED_INTERMEDIATE_UIDS);
    const value *r = attr(a, CUDNN_ATTR_EXECUTION_PLAN_RUN_ONLY_INTERMEDIATE_UIDS);
    if ((c && c->count) || (r && r->count))
        return fail(CUDNN_STATUS_NOT_SUPPORTED, "execution plan: intermediates are not modelled");
    return CUDNN_STATUS_SUCCESS;
}

// "CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS: a unique identifier of tensor for each data pointer":
// as many ids as pointers, each id once.
cudnnStatus_t finalize_variant_pack(const attr_map &a, std::shared_ptr<const void> &out)
{
    auto vp = std::make_shared<varpack_info>();
    vp->uids = attr(a, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS)->ints;
    vp->ptrs = attr(a, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS)->ptrs;
    const value *ws = attr(a, CUDNN_ATTR_VARIANT_PACK_WORKSPACE);
    vp->workspace = ws ? ws->ptrs[0] : nullptr;
    if (vp->uids.size() != vp->ptrs.size())
        return fail(CUDNN_STATUS_BAD_PARAM, "variant pack: %zu unique ids but %zu data pointers",
                    vp->uids.size(), vp->ptrs.size());
    for (size_t i = 0; i < vp->uids.size(); i++)
        for (size_t j = 0; j < i; j++)
            if (vp->uids[i] == vp->uids[j])
                return fail(CUDNN_STATUS_BAD_PARAM_DUPLICATED_ENTRIES,
                            "variant pack: unique id %ld is given twice", (long)vp->uids[i]);
    const value *im = attr(a, CUDNN_ATTR_VARIANT_PACK_INTERMEDIATES);
    if (im && im->count)
        return fail(CUDNN_STATUS_NOT_SUPPORTED, "variant pack: intermediates are not modelled");
    out = vp;
    return CUDNN_STATUS_SUCCESS;
}

bool computed_attr(const node &n, int name, value &v)
{
    switch (name) {
    case CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT:
        v = int_value(CUDNN_TYPE_INT64, {ENGINE_COUNT});
        return true;
    case CUDNN_ATTR_ENGINEHEUR_RESULTS:
        v = value();
        v.type = CUDNN_TYPE_BACKEND_DESCRIPTOR;
        v.descs = n.get<heur_info>()->results;
        v.count = (int64_t)v.descs.size();
        return true;
    case CUDNN_ATTR_ENGINE_NUMERICAL_NOTE:
        v = int_value(CUDNN_TYPE_NUMERICAL_NOTE, n.get<engine_info>()->notes);
        return true;
    case CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE:
        v = int_value(CUDNN_TYPE_BEHAVIOR_NOTE, {});
        return true;
    case CUDNN_ATTR_ENGINECFG_WORKSPACE_SIZE:
    case CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE:
        v = int_value(CUDNN_TYPE_INT64, {n.get<engine_info>()->workspace});
        return true;
    default:
        return false;
    }
}

} // namespace dnn
} // namespace xpbsi
