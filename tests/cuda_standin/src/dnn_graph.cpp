// Finalization of an operation graph (cuDNN 9 API Reference, Backend Descriptor Types:
// CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR; cuDNN Developer Guide, Graph API: tensors are
// identified by their unique ids, virtual tensors are intermediates that are never read from or
// written to memory). The graph's operations are connected through the unique ids of their
// tensors; the stand-in refuses with CUDNN_STATUS_BAD_PARAM what cannot be such a graph: two
// different tensors with one unique id, a tensor written by two operations, a virtual tensor that
// no operation writes (a graph input must be a real tensor) or that no operation reads (a graph
// output must be a real tensor), the same operation twice, or a cycle.
#include <map>

#include "dnn_internal.hpp"

namespace xpbsi
{
namespace dnn
{

const op_info *graph_info::conv() const
{
    for (const op_ptr &o : ops)
        if (o->kind != op_kind::pointwise)
            return o.get();
    return nullptr;
}

cudnnStatus_t finalize_graph(const attr_map &a, std::shared_ptr<const void> &out)
{
    const std::vector<node_ptr> &given = attr(a, CUDNN_ATTR_OPERATIONGRAPH_OPS)->descs;
    std::vector<op_ptr> ops;
    for (size_t i = 0; i < given.size(); i++) {
        for (size_t j = 0; j < i; j++)
            if (given[j] == given[i])
                return fail(CUDNN_STATUS_BAD_PARAM_DUPLICATED_ENTRIES,
                            "operation graph: operation %zu is operation %zu again", i, j);
        ops.push_back(given[i]->get<op_info>());
    }
    std::map<int64_t, tensor_ptr> by_uid;
    std::map<int64_t, size_t> producer;
    std::map<int64_t, int> readers;
    auto meet = [&](const tensor_ptr &t) -> cudnnStatus_t {
        auto it = by_uid.find(t->uid);
        if (it == by_uid.end())
            by_uid[t->uid] = t;
        else if (!it->second->same_as(*t))
            return fail(CUDNN_STATUS_BAD_PARAM_DUPLICATED_ENTRIES,
                        "operation graph: two different tensors have the unique id %ld",
                        (long)t->uid);
        return CUDNN_STATUS_SUCCESS;
    };
    for (size_t i = 0; i < ops.size(); i++) {
        for (const tensor_ptr &t : ops[i]->in) {
            if (cudnnStatus_t s = meet(t))
                return s;
            readers[t->uid]++;
        }
        if (cudnnStatus_t s = meet(ops[i]->out))
            return s;
        if (producer.count(ops[i]->out->uid))
            return fail(CUDNN_STATUS_BAD_PARAM,
                        "operation graph: tensor %ld is written by operations %zu and %zu",
                        (long)ops[i]->out->uid, producer[ops[i]->out->uid], i);
        producer[ops[i]->out->uid] = i;
    }
    for (auto &kv : by_uid) {
        if (!kv.second->is_virtual)
            continue;
        if (!producer.count(kv.first))
            return fail(CUDNN_STATUS_BAD_PARAM,
                        "operation graph: virtual tensor %ld is an input of the graph (no "
                        "operation writes it): a real tensor is needed",
                        (long)kv.first);
        if (!readers[kv.first])
            return fail(CUDNN_STATUS_BAD_PARAM,
                        "operation graph: virtual tensor %ld is an output of the graph (no "
                        "operation reads it): a real tensor is needed",
                        (long)kv.first);
    }
    // Kahn's algorithm: an operation runs once the operations writing its inputs have run.
    std::vector<int> waiting(ops.size(), 0);
    for (size_t i = 0; i < ops.size(); i++)
        for (const tensor_ptr &t : ops[i]->in)
            if (producer.count(t->uid))
                waiting[i]++;
    auto g = std::make_shared<graph_info>();
    std::vector<bool> done(ops.size(), false);
    for (bool progress = true; progress;) {
        progress = false;
        for (size_t i = 0; i < ops.size(); i++) {
            if (done[i] || waiting[i])
                continue;
            done[i] = progress = true;
            g->ops.push_back(ops[i]);
            for (size_t j = 0; j < ops.size(); j++)
                for (const tensor_ptr &t : ops[j]->in)
                    if (t->uid == ops[i]->out->uid)
                        waiting[j]--;
        }
    }
    if (g->ops.size() != ops.size())
        return fail(CUDNN_STATUS_BAD_PARAM, "operation graph: the operations form a cycle");
    for (auto &kv : by_uid)
        g->tensors.push_back(kv.second);
    out = g;
    return CUDNN_STATUS_SUCCESS;
}

} // namespace dnn
} // namespace xpbsi
