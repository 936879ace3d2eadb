// Graphs (CUDA Runtime API, Graph Management: cudaGraphInstantiate, cudaGraphUpload,
// cudaGraphLaunch, cudaGraphExecDestroy, cudaGraphDestroy). A captured graph is the sequence of
// work its capture recorded, in the order it was issued (one valid order of the captured
// dependencies); an executable graph holds its own copy, so that the graph may be destroyed once
// instantiated, and a launch runs the whole sequence as one piece of stream work, which a
// capturing stream records like any other (a child graph).
#include <unordered_set>

#include "rt_internal.hpp"

namespace xpbsi
{

namespace
{

std::unordered_set<CUgraph_st *> &graphs()
{
    static std::unordered_set<CUgraph_st *> &g =
        *new std::unordered_set<CUgraph_st *>; // immortal: reachable at exit
    return g;
}

std::unordered_set<CUgraphExec_st *> &execs()
{
    static std::unordered_set<CUgraphExec_st *> &e =
        *new std::unordered_set<CUgraphExec_st *>; // immortal: reachable at exit
    return e;
}

CUgraph_st *graph_of(cudaGraph_t g)
{
    return g && graphs().count(g) ? g : nullptr;
}

} // namespace

CUgraph_st *make_graph(std::vector<work_ptr> nodes)
{
    CUgraph_st *g = new CUgraph_st{XPBSI_GRAPH_MAGIC, std::move(nodes)};
    graphs().insert(g);
    return g;
}

} // namespace xpbsi

extern "C" {

cudaError_t cudaGraphCreate(cudaGraph_t *pGraph, unsigned int flags)
{
    XPBSI_API_ENTER;
    if (!pGraph || flags != 0)
        return xpbsi::record(cudaErrorInvalidValue);
    *pGraph = xpbsi::make_graph({});
    return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
    XPBSI_API_ENTER;
    CUgraph_st *g = xpbsi::graph_of(graph);
    if (!g)
        return xpbsi::record(cudaErrorInvalidValue);
    xpbsi::graphs().erase(g);
    g->magic = 0;
    delete g;
    return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                 unsigned long long flags)
{
    XPBSI_API_ENTER;
    const unsigned long long known =
        cudaGraphInstantiateFlagAutoFreeOnLaunch | cudaGraphInstantiateFlagUpload |
        cudaGraphInstantiateFlagDeviceLaunch | cudaGraphInstantiateFlagUseNodePriority;
    CUgraph_st *g = xpbsi::graph_of(graph);
    if (!pGraphExec || !g || (flags & ~known))
        return xpbsi::record(cudaErrorInvalidValue);
    CUgraphExec_st *x = new CUgraphExec_st{XPBSI_EXEC_MAGIC, g->nodes};
    xpbsi::execs().insert(x);
    *pGraphExec = x;
    return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec)
{
    XPBSI_API_ENTER;
    if (!graphExec || !xpbsi::execs().count(graphExec))
        return xpbsi::record(cudaErrorInvalidValue);
    xpbsi::execs().erase(graphExec);
    graphExec->magic = 0;
    delete graphExec;
    return cudaSuccess;
}

// Nothing to upload: the executable graph is checked and the stream validated, in stream order.
cudaError_t cudaGraphUpload(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    XPBSI_API_ENTER;
    if (!graphExec || !xpbsi::execs().count(graphExec))
        return xpbsi::record(cudaErrorInvalidValue);
    if (!xpbsi::resolve(stream))
        return xpbsi::record(cudaErrorInvalidResourceHandle);
    return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    XPBSI_API_ENTER;
    if (!graphExec || !xpbsi::execs().count(graphExec))
        return xpbsi::record(cudaErrorInvalidValue);
    std::vector<xpbsi::work_ptr> nodes = graphExec->nodes;
    xpbsi::work_ptr w = xpbsi::make_work("graph launch", [nodes] {
        for (const xpbsi::work_ptr &n : nodes)
            xpbsi::execute(*n);
    });
    return xpbsi::record(xpbsi::enqueue(stream, w));
}

} // extern "C"
