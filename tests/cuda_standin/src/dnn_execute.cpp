// cudnnBackendExecute (cuDNN 9 API Reference, cudnn_graph library: "executes the given engine
// configuration plan on the variant pack and the finalized execution plan on the data";
// CUDNN_STATUS_BAD_PARAM: "an incorrect or inconsistent value is encountered, for example a
// required data pointer is invalid"). The variant pack must hold exactly the graph's real
// (non-virtual) tensors, each with a non-NULL pointer aligned to its CUDNN_ATTR_TENSOR_BYTE_-
// ALIGNMENT, and the workspace the plan asks for (CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE).
// The computation is stream work on the handle's stream (cudnnSetStream): run at once, or
// recorded while the stream captures. A tensor or workspace that is not device memory large
// enough when the work runs is what a GPU kernel would fault on: the sticky
// cudaErrorIllegalAddress, reported by the next runtime call.
#include <cstdint>
#include <map>

#include "dnn_internal.hpp"
#include "rt_internal.hpp"

namespace xpbsi
{
namespace dnn
{

namespace
{

struct launch {
    std::shared_ptr<const engine_info> engine;
    std::map<int64_t, void *> ptrs;
    void *workspace;
};

size_t bytes_of(const tensor_info &t)
{
    return (size_t)t.span() * elem_size(t.type);
}

bool overlap(const void *a, size_t na, const void *b, size_t nb)
{
    auto x = (uintptr_t)a, y = (uintptr_t)b;
    return x < y + nb && y < x + na;
}

// Runs the plan: checks the memory, then every operation in graph order, virtual tensors in
// host buffers of their own type.
void run(const launch &l)
{
    const graph_info &g = *l.engine->graph;
    for (const tensor_ptr &t : g.tensors) {
        if (t->is_virtual)
            continue;
        void *p = l.ptrs.at(t->uid);
        if (!addressable(p, bytes_of(*t))) {
            make_sticky(cudaErrorIllegalAddress,
                        "cudnnBackendExecute: tensor %ld [%p, +%zu bytes) is not device memory: %s",
                        (long)t->uid, p, bytes_of(*t), describe(p).c_str());
            return;
        }
    }
    size_t ws = (size_t)l.engine->workspace;
    if (ws && !addressable(l.workspace, ws)) {
        make_sticky(cudaErrorIllegalAddress,
                    "cudnnBackendExecute: the workspace [%p, +%zu bytes) is not device memory: %s",
                    l.workspace, ws, describe(l.workspace).c_str());
        return;
    }
    std::map<int64_t, std::vector<unsigned char>> scratch;
    auto where = [&](const tensor_ptr &t) -> void * {
        if (!t->is_virtual)
            return l.ptrs.at(t->uid);
        std::vector<unsigned char> &b = scratch[t->uid];
        if (b.empty())
            b.assign(bytes_of(*t), 0xFF);
        return b.data();
    };
    for (const op_ptr &op : g.ops) {
        if (op->kind == op_kind::pointwise) {
            std::vector<const void *> in;
            for (const tensor_ptr &t : op->in)
                in.push_back(where(t));
            run_pointwise(*op, in, where(op->out));
            continue;
        }
        elem io = op->in[0]->type;
        conv_numerics num = {false, elem::f32, nullptr, 0};
        if (l.engine->index == ENGINE_TENSOR_CORE) {
            num.tf32_inputs = io == elem::f32;
            num.workspace = l.workspace;
            num.workspace_bytes = ws;
        } else if (l.engine->index == ENGINE_REDUCED) {
            num.reduce_in = io;
        }
        run_conv(*op, where(op->in[0]), where(op->in[1]), where(op->out), num);
    }
}

// The checks of the variant pack against the plan's graph, with the status each failure gets.
cudnnStatus_t check_pack(const engine_info &e, const varpack_info &vp, launch &l)
{
    for (size_t i = 0; i < vp.uids.size(); i++)
        l.ptrs[vp.uids[i]] = vp.ptrs[i];
    std::map<int64_t, const tensor_info *> in_graph;
    for (const tensor_ptr &t : e.graph->tensors) {
        in_graph[t->uid] = t.get();
        auto it = l.ptrs.find(t->uid);
        if (t->is_virtual) {
            if (it != l.ptrs.end())
                return fail(CUDNN_STATUS_BAD_PARAM,
                            "variant pack: tensor %ld is virtual; it has no data pointer",
                            (long)t->uid);
            continue;
        }
        if (it == l.ptrs.end())
            return fail(CUDNN_STATUS_BAD_PARAM, "variant pack: tensor %ld of the graph is missing",
                        (long)t->uid);
        if (!it->second)
            return fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER,
                        "variant pack: tensor %ld has a NULL data pointer", (long)t->uid);
        if ((uintptr_t)it->second % (uintptr_t)t->align)
            return fail(CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER,
                        "variant pack: tensor %ld at %p is not aligned to its %ld-byte alignment",
                        (long)t->uid, it->second, (long)t->align);
    }
    for (int64_t uid : vp.uids)
        if (!in_graph.count(uid))
            return fail(CUDNN_STATUS_BAD_PARAM, "variant pack: unique id %ld is not in the graph",
                        (long)uid);
    if (e.workspace > 0 && !vp.workspace)
        return fail(CUDNN_STATUS_BAD_PARAM,
                    "variant pack: the plan needs %ld bytes of workspace and none is given",
                    (long)e.workspace);
    // convolutions are not in place: their result must not share memory with an operand
    for (const op_ptr &op : e.graph->ops) {
        if (op->kind == op_kind::pointwise || op->out->is_virtual)
            continue;
        for (const tensor_ptr &t : op->in)
            if (!t->is_virtual &&
                overlap(l.ptrs[t->uid], bytes_of(*t), l.ptrs[op->out->uid], bytes_of(*op->out)))
                return fail(CUDNN_STATUS_BAD_PARAM,
                            "variant pack: convolution result %ld overlaps its operand %ld",
                            (long)op->out->uid, (long)t->uid);
    }
    l.workspace = vp.workspace;
    return CUDNN_STATUS_SUCCESS;
}

} // namespace

} // namespace dnn
} // namespace xpbsi

using namespace xpbsi::dnn;

extern "C" cudnnStatus_t cudnnBackendExecute(cudnnHandle_t handle,
                                             cudnnBackendDescriptor_t executionPlan,
                                             cudnnBackendDescriptor_t variantPack)
{
    XPBSI_LOCK;
    xpbsi::dnn::handle *h = handle_of(handle);
    desc *p = desc_of(executionPlan), *v = desc_of(variantPack);
    if (!h)
        return fail(CUDNN_STATUS_BAD_PARAM, "cudnnBackendExecute: not a live handle");
    if (!p || p->type != CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR || !v ||
        v->type != CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR)
        return fail(CUDNN_STATUS_BAD_PARAM,
                    "cudnnBackendExecute: needs an execution plan and a variant pack");
    if (!p->fin || !v->fin)
        return fail(CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED,
                    "cudnnBackendExecute: the %s is not finalized",
                    p->fin ? "variant pack" : "execution plan");
    if (xpbsi::sticky_error() != cudaSuccess)
        return fail(CUDNN_STATUS_EXECUTION_FAILED_CUDART, "cudnnBackendExecute: %s",
                    cudaGetErrorString(xpbsi::sticky_error()));
    launch l;
    l.engine = p->fin->get<engine_info>();
    cudnnStatus_t s = check_pack(*l.engine, *v->fin->get<varpack_info>(), l);
    if (s != CUDNN_STATUS_SUCCESS)
        return s;
    xpbsi::work_ptr w = xpbsi::make_work("cudnnBackendExecute", [l] { run(l); });
    cudaError_t e = xpbsi::enqueue(h->stream, w);
    if (e != cudaSuccess && e != xpbsi::sticky_error())
        return fail(CUDNN_STATUS_EXECUTION_FAILED_CUDART, "cudnnBackendExecute: %s",
                    cudaGetErrorString(xpbsi::record(e)));
    return CUDNN_STATUS_SUCCESS;
}
