/* What the cuDNN stand-in refuses, with the status the cuDNN 9 backend documentation gives:
 * attributes of the wrong type or count, on a finalized descriptor, or read from one that is not;
 * descriptors given as values before they are finalized or of the wrong type; finalization
 * without a required attribute or with inconsistent dimensions and strides; convolutions whose
 * tensors do not fit; graphs with a duplicate unique id or a virtual tensor at their edge;
 * engines out of range; variant packs that are not exactly the graph's real tensors; a
 * workspace too small; and memory that is not the device's (a sticky illegal address). The
 * engines' availability follows the reported compute capability (XPB_STANDIN_CC). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "standin_dnn_util.h"
#include "xpbsi/standin.h"

static cudnnHandle_t handle;
static const int64_t xd[4] = {1, 2, 5, 5}, wd[4] = {3, 2, 3, 3}, yd[4] = {1, 3, 5, 5};
static const struct conv_geom same = {{1, 1}, {1, 1}, {1, 1}, {1, 1}, CUDNN_CROSS_CORRELATION};

static int setup(void **state)
{
    (void)state;
    return cudnnCreate(&handle) == CUDNN_STATUS_SUCCESS ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return cudnnDestroy(handle) == CUDNN_STATUS_SUCCESS ? 0 : -1;
}

static desc_t packed(int64_t uid, const int64_t *dims, bool is_virtual)
{
    int64_t s[4];
    packed_strides(4, dims, s);
    return tensor(uid, CUDNN_DATA_FLOAT, 4, dims, s, is_virtual);
}

/* A finalized forward convolution X 'x' * W 'w' -> Y (uid y_uid, virtual or not). */
static desc_t fwd_op(int64_t y_uid, bool y_virtual)
{
    desc_t x = packed('x', xd, false), w = packed('w', wd, false), y = packed(y_uid, yd, y_virtual);
    desc_t op = conv_op_desc(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, x, w, y,
                             conv_desc(&same), 1.0f, 0.0f);
    DNN_OK(cudnnBackendFinalize(op));
    return op;
}

static void test_attribute_types_and_counts(void **state)
{
    (void)state;
    desc_t t = make_desc(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    int32_t dims32[4] = {1, 2, 3, 4};
    int64_t uid[2] = {1, 2}, align = 16;
    float f = 1.0f;
    assert_int_equal(
        cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT32, 4, dims32),
        CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE);
    assert_int_equal(
        cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 2, uid),
        CUDNN_STATUS_BAD_PARAM);
    assert_int_equal(
        cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 9, uid),
        CUDNN_STATUS_BAD_PARAM);
    assert_int_equal(
        cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, NULL),
        CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
    assert_int_equal(
        cudnnBackendSetAttribute(t, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f),
        CUDNN_STATUS_BAD_PARAM); /* not an attribute of a tensor */
    int bad_type = 99;
    assert_int_equal(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE,
                                              1, &bad_type),
                     CUDNN_STATUS_BAD_PARAM);
    /* missing strides */
    cudnnDataType_t dt = CUDNN_DATA_FLOAT;
    set_attr(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
    set_attr(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, xd);
    set_attr(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, uid);
    set_attr(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
    assert_int_equal(cudnnBackendFinalize(t), CUDNN_STATUS_BAD_PARAM);
    char msg[256];
    cudnnGetLastErrorString(msg, sizeof msg);
    assert_non_null(strstr(msg, "CUDNN_ATTR_TENSOR_STRIDES"));
    /* reading before finalization; writing after */
    int64_t got = 0, n = 0;
    assert_int_equal(
        cudnnBackendGetAttribute(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &n, &got),
        CUDNN_STATUS_NOT_INITIALIZED);
    int64_t s[4];
    packed_strides(4, xd, s);
    set_attr(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, s);
    DNN_OK(cudnnBackendFinalize(t));
    DNN_OK(cudnnBackendGetAttribute(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &n, &got));
    assert_int_equal(got, 1);
    assert_int_equal(n, 1);
    assert_int_equal(
        cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid[1]),
        CUDNN_STATUS_NOT_INITIALIZED);
    cudnnBackendDestroyDescriptor(t);
}

static void test_tensor_consistency(void **state)
{
    (void)state;
    int64_t s4[4], s3[3] = {50, 25, 5}, zero[4] = {1, 2, 0, 5}, overlap[4] = {50, 1, 5, 1};
    packed_strides(4, xd, s4);
    desc_t t = tensor_desc(1, CUDNN_DATA_FLOAT, 4, xd, s4, false);
    set_attr(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 3, s3); /* 4 dims, 3 strides */
    assert_int_equal(cudnnBackendFinalize(t), CUDNN_STATUS_BAD_PARAM);
    cudnnBackendDestroyDescriptor(t);
    t = tensor_desc(1, CUDNN_DATA_FLOAT, 4, zero, s4, false);
    assert_int_equal(cudnnBackendFinalize(t), CUDNN_STATUS_BAD_PARAM);
    cudnnBackendDestroyDescriptor(t);
    t = tensor_desc(1, CUDNN_DATA_FLOAT, 4, xd, overlap, false); /* W and C share addresses */
    assert_int_equal(cudnnBackendFinalize(t), CUDNN_STATUS_BAD_PARAM);
    cudnnBackendDestroyDescriptor(t);
    int64_t align = 12;
    t = tensor_desc(1, CUDNN_DATA_FLOAT, 4, xd, s4, false);
    set_attr(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
    assert_int_equal(cudnnBackendFinalize(t), CUDNN_STATUS_BAD_PARAM);
    cudnnBackendDestroyDescriptor(t);
}

static void test_descriptor_values(void **state)
{
    (void)state;
    desc_t op = make_desc(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
    int64_t s[4];
    packed_strides(4, xd, s);
    desc_t unfinished = tensor_desc('x', CUDNN_DATA_FLOAT, 4, xd, s, false);
    assert_int_equal(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
                                              CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &unfinished),
                     CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED);
    DNN_OK(cudnnBackendFinalize(unfinished));
    assert_int_equal(cudnnBackendSetAttribute(op,
                                              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
                                              CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &unfinished),
                     CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE);
    /* a convolution without alpha and beta */
    desc_t w = packed('w', wd, false), y = packed('y', yd, false), c = conv_desc(&same);
    set_attr(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
             &unfinished);
    set_attr(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w);
    set_attr(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
    set_attr(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR,
             1, &c);
    assert_int_equal(cudnnBackendFinalize(op), CUDNN_STATUS_BAD_PARAM);
    double one = 1.0, zero = 0.0; /* CUDNN_TYPE_DOUBLE is the documented alternative */
    set_attr(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_DOUBLE, 1, &one);
    set_attr(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_DOUBLE, 1, &zero);
    DNN_OK(cudnnBackendFinalize(op));
}

static void test_convolution_shapes(void **state)
{
    (void)state;
    /* padding arrays must have SPATIAL_DIMS elements */
    desc_t c = make_desc(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    int64_t two = 2, ones[2] = {1, 1};
    set_attr(c, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
    set_attr(c, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
    set_attr(c, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &two);
    set_attr(c, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, ones);
    set_attr(c, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, ones);
    set_attr(c, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 1, ones);
    set_attr(c, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, ones);
    assert_int_equal(cudnnBackendFinalize(c), CUDNN_STATUS_BAD_PARAM);
    /* Y of the wrong size for the padding (5x5 -> 3x3 without it) */
    const struct conv_geom none = {{0, 0}, {0, 0}, {1, 1}, {1, 1}, CUDNN_CROSS_CORRELATION};
    desc_t x = packed('x', xd, false), w = packed('w', wd, false), y = packed('y', yd, false);
    desc_t op = conv_op_desc(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, x, w, y,
                             conv_desc(&none), 1.0f, 0.0f);
    assert_int_equal(cudnnBackendFinalize(op), CUDNN_STATUS_BAD_PARAM);
    /* K of W and C of Y disagree */
    int64_t yd4[4] = {1, 4, 5, 5};
    desc_t y4 = packed('y', yd4, false);
    op = conv_op_desc(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, x, w, y4,
                      conv_desc(&same), 1.0f, 0.0f);
    assert_int_equal(cudnnBackendFinalize(op), CUDNN_STATUS_BAD_PARAM);
    /* two operands with one unique id */
    desc_t wx = packed('x', wd, false);
    op = conv_op_desc(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, x, wx, y,
                      conv_desc(&same), 1.0f, 0.0f);
    assert_int_equal(cudnnBackendFinalize(op), CUDNN_STATUS_BAD_PARAM);
}

static void test_graph_rules(void **state)
{
    (void)state;
    desc_t conv = fwd_op('y', true);
    /* the virtual conv output read by a ReLU: a valid graph */
    desc_t yv = packed('y', yd, true), r = packed('r', yd, false), r2 = packed('r', yd, true);
    desc_t relu = pointwise_op(CUDNN_POINTWISE_RELU_FWD, yv, NULL, r, 0.0);
    desc_t ops[2] = {conv, relu};
    desc_t g = op_graph(2, ops);
    int64_t count = 0, n = 0;
    DNN_OK(cudnnBackendGetAttribute(g, CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT,
                                    CUDNN_TYPE_INT64, 1, &n, &count));
    assert_true(count >= 1);
    /* the virtual output alone: nothing reads it */
    desc_t bad = make_desc(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    set_attr(bad, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv);
    assert_int_equal(cudnnBackendFinalize(bad), CUDNN_STATUS_BAD_PARAM);
    /* a virtual tensor no operation writes */
    desc_t lone = pointwise_op(CUDNN_POINTWISE_RELU_FWD, r2, NULL, packed('z', yd, false), 0.0);
    bad = make_desc(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    set_attr(bad, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &lone);
    assert_int_equal(cudnnBackendFinalize(bad), CUDNN_STATUS_BAD_PARAM);
    /* two different tensors with the unique id 'y' (one 5x5, one 4x4) */
    int64_t other[4] = {1, 3, 4, 4};
    desc_t relu2 = pointwise_op(CUDNN_POINTWISE_RELU_FWD, packed('y', other, true), NULL,
                                packed('q', other, false), 0.0);
    desc_t dup[3] = {conv, relu, relu2};
    bad = make_desc(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    set_attr(bad, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 3, dup);
    assert_int_equal(cudnnBackendFinalize(bad), CUDNN_STATUS_BAD_PARAM_DUPLICATED_ENTRIES);
    /* the same operation twice */
    desc_t twice[2] = {relu, relu};
    bad = make_desc(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    set_attr(bad, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 2, twice);
    assert_int_equal(cudnnBackendFinalize(bad), CUDNN_STATUS_BAD_PARAM_DUPLICATED_ENTRIES);
    /* engines: out of range, and the heuristics' results by architecture */
    desc_t plan = NULL;
    int64_t ws = 0;
    assert_int_equal(plan_on(g, 3, &plan, &ws), CUDNN_STATUS_NOT_SUPPORTED);
    desc_t h = make_desc(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    set_attr(h, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g);
    set_attr(h, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    DNN_OK(cudnnBackendFinalize(h));
    desc_t cfgs[3] = {make_desc(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR),
                      make_desc(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR),
                      make_desc(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)};
    DNN_OK(cudnnBackendGetAttribute(h, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                    3, &n, cfgs));
    /* fp32: the TF32 tensor-core engine from sm_80, then the fallback */
    assert_int_equal(n, xpbsi_compute_capability() >= 80 ? 2 : 1);
    desc_t wrong[1] = {make_desc(CUDNN_BACKEND_ENGINE_DESCRIPTOR)};
    assert_int_equal(cudnnBackendGetAttribute(h, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                              CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, wrong),
                     CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE);
    desc_t engine = wrong[0];
    DNN_OK(cudnnBackendGetAttribute(cfgs[0], CUDNN_ATTR_ENGINECFG_ENGINE,
                                    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &engine));
    cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
    DNN_OK(cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                                    CUDNN_TYPE_NUMERICAL_NOTE, CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &n,
                                    notes));
    if (xpbsi_compute_capability() >= 80) {
        assert_int_equal(n, 2);
        assert_int_equal(notes[0], CUDNN_NUMERICAL_NOTE_TENSOR_CORE);
        assert_int_equal(notes[1], CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS);
    } else {
        assert_int_equal(n, 0);
    }
    mode = CUDNN_HEUR_MODE_FALLBACK;
    desc_t hf = make_desc(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    set_attr(hf, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g);
    set_attr(hf, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    DNN_OK(cudnnBackendFinalize(hf));
    DNN_OK(cudnnBackendGetAttribute(hf, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                    CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &n, NULL));
    assert_int_equal(n, 1);
}

/* The plan of conv('x' * 'w') -> virtual 'y' -> ReLU -> 'r' on engine e. */
static desc_t relu_plan(int64_t e, int64_t *ws)
{
    desc_t ops[2] = {fwd_op('y', true),
                     pointwise_op(CUDNN_POINTWISE_RELU_FWD, packed('y', yd, true), NULL,
                                  packed('r', yd, false), 0.0)};
    desc_t plan = NULL;
    DNN_OK(plan_on(op_graph(2, ops), e, &plan, ws));
    return plan;
}

static void test_variant_packs(void **state)
{
    (void)state;
    int64_t ws = -1;
    desc_t plan = relu_plan(0, &ws);
    float *x = NULL, *w = NULL, *r = NULL;
    cudaMalloc((void **)&x, 50 * sizeof(float));
    cudaMalloc((void **)&w, 54 * sizeof(float));
    cudaMalloc((void **)&r, 75 * sizeof(float));
    int64_t uids[4] = {'x', 'w', 'r', 'y'};
    void *ptrs[4] = {x, w, r, r};
    DNN_OK(run_pack(handle, plan, 3, uids, ptrs, NULL));
    /* missing 'r' */
    assert_int_equal(run_pack(handle, plan, 2, uids, ptrs, NULL), CUDNN_STATUS_BAD_PARAM);
    /* the virtual 'y' given a pointer */
    assert_int_equal(run_pack(handle, plan, 4, uids, ptrs, NULL), CUDNN_STATUS_BAD_PARAM);
    /* a unique id that is not in the graph */
    int64_t extra[4] = {'x', 'w', 'r', 'k'};
    assert_int_equal(run_pack(handle, plan, 4, extra, ptrs, NULL), CUDNN_STATUS_BAD_PARAM);
    /* NULL and misaligned pointers */
    void *null_ptrs[3] = {x, NULL, r}, *odd_ptrs[3] = {x, (char *)w + 4, r};
    assert_int_equal(run_pack(handle, plan, 3, uids, null_ptrs, NULL),
                     CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
    assert_int_equal(run_pack(handle, plan, 3, uids, odd_ptrs, NULL),
                     CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER);
    /* ids and pointers must pair up, each id once */
    desc_t vp = make_desc(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    set_attr(vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids);
    set_attr(vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 2, ptrs);
    assert_int_equal(cudnnBackendFinalize(vp), CUDNN_STATUS_BAD_PARAM);
    int64_t twice[3] = {'x', 'x', 'r'};
    assert_int_equal(run_pack(handle, plan, 3, twice, ptrs, NULL),
                     CUDNN_STATUS_BAD_PARAM_DUPLICATED_ENTRIES);
    /* executing an unfinalized variant pack */
    assert_int_equal(cudnnBackendExecute(handle, plan, vp), CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED);
    if (xpbsi_compute_capability() >= 80) { /* the TF32 engine needs a workspace */
        desc_t tc = relu_plan(1, &ws);
        assert_true(ws > 0);
        assert_int_equal(run_pack(handle, tc, 3, uids, ptrs, NULL), CUDNN_STATUS_BAD_PARAM);
        void *space = NULL;
        cudaMalloc(&space, (size_t)ws);
        DNN_OK(run_pack(handle, tc, 3, uids, ptrs, space));
        assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
        cudaFree(space);
    }
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    cudaFree(x);
    cudaFree(w);
    cudaFree(r);
}

/* A host (pageable) pointer in the variant pack: the GPU would fault on it. */
static void test_host_memory_faults(void **state)
{
    (void)state;
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        int64_t ws = 0;
        desc_t plan = relu_plan(0, &ws);
        static float host_x[50];
        float *w = NULL, *r = NULL;
        cudaMalloc((void **)&w, 54 * sizeof(float));
        cudaMalloc((void **)&r, 75 * sizeof(float));
        int64_t uids[3] = {'x', 'w', 'r'};
        void *ptrs[3] = {host_x, w, r};
        cudnnStatus_t s = run_pack(handle, plan, 3, uids, ptrs, NULL);
        _exit(s == CUDNN_STATUS_SUCCESS && cudaDeviceSynchronize() == cudaErrorIllegalAddress ? 0
                                                                                              : 1);
    }
    int status = 1;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attribute_types_and_counts),
        cmocka_unit_test(test_tensor_consistency),
        cmocka_unit_test(test_descriptor_values),
        cmocka_unit_test(test_convolution_shapes),
        cmocka_unit_test(test_graph_rules),
        cmocka_unit_test(test_variant_packs),
        cmocka_unit_test(test_host_memory_faults),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
