// The backend descriptor functions (cuDNN 9 API Reference, cudnn_graph library:
// cudnnBackendCreateDescriptor, cudnnBackendDestroyDescriptor, cudnnBackendSetAttribute,
// cudnnBackendGetAttribute, cudnnBackendFinalize). What each returns follows their "Returns"
// sections: setting an attribute of a finalized descriptor is CUDNN_STATUS_NOT_INITIALIZED, as
// is reading one of a descriptor not finalized; an attribute that is not the descriptor's, a
// wrong attribute type, an element count out of range or an invalid value is CUDNN_STATUS_BAD_PARAM
// (with the specific BAD_PARAM codes of cuDNN 9 where one names the problem); finalizing without
// a required attribute, or with values that are inconsistent, is CUDNN_STATUS_BAD_PARAM; what the
// stand-in's engines do not support is CUDNN_STATUS_NOT_SUPPORTED.
#include <unordered_set>

#include "dnn_internal.hpp"
#include "rt_internal.hpp"

namespace xpbsi
{
namespace dnn
{

namespace
{

constexpr unsigned k_desc_magic = 0x44455343u; // "DESC"

std::unordered_set<desc *> &descs()
{
    static std::unordered_set<desc *> &d =
        *new std::unordered_set<desc *>; // immortal: reachable at exit
    return d;
}

cudnnStatus_t build(cudnnBackendDescriptorType_t t, const attr_map &a,
                    std::shared_ptr<const void> &content)
{
    switch (t) {
    case CUDNN_BACKEND_TENSOR_DESCRIPTOR:
        return finalize_tensor(a, content);
    case CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR:
        return finalize_conv_desc(a, content);
    case CUDNN_BACKEND_POINTWISE_DESCRIPTOR:
        return finalize_pointwise_desc(a, content);
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR:
        return finalize_operation(t, a, content);
    case CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR:
        return finalize_graph(a, content);
    case CUDNN_BACKEND_ENGINE_DESCRIPTOR:
        return finalize_engine(a, content);
    case CUDNN_BACKEND_ENGINECFG_DESCRIPTOR:
        return finalize_engine_cfg(a, content);
    case CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR:
        return finalize_heuristics(a, content);
    case CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR:
        return finalize_plan(a, content);
    case CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR:
        return finalize_variant_pack(a, content);
    case CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR:
        return CUDNN_STATUS_SUCCESS; // checked where it is used (the engines have no knobs)
    default:
        return fail(CUDNN_STATUS_NOT_SUPPORTED, "%s", type_name(t));
    }
}

} // namespace

desc *desc_of(cudnnBackendDescriptor_t d)
{
    desc *p = static_cast<desc *>(d);
    XPBSI_LOCK;
    return p && descs().count(p) ? p : nullptr;
}

} // namespace dnn
} // namespace xpbsi

using namespace xpbsi::dnn;

extern "C" {

cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t descriptorType,
                                           cudnnBackendDescriptor_t *descriptor)
{
    XPBSI_LOCK;
    if (!descriptor)
        return fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "cudnnBackendCreateDescriptor: NULL");
    if (!specs_of(descriptorType))
        return fail(CUDNN_STATUS_NOT_SUPPORTED,
                    "descriptor type %d: the stand-in does not model it", (int)descriptorType);
    desc *d = new desc{k_desc_magic, descriptorType, {}, nullptr};
    descs().insert(d);
    *descriptor = d;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t descriptor)
{
    XPBSI_LOCK;
    desc *d = desc_of(descriptor);
    if (!d)
        return fail(CUDNN_STATUS_BAD_PARAM, "cudnnBackendDestroyDescriptor: not a live descriptor");
    descs().erase(d);
    d->magic = 0;
    delete d;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t descriptor,
                                       cudnnBackendAttributeName_t attributeName,
                                       cudnnBackendAttributeType_t attributeType,
                                       int64_t elementCount, const void *arrayOfElements)
{
    XPBSI_LOCK;
    desc *d = desc_of(descriptor);
    if (!d)
        return fail(CUDNN_STATUS_BAD_PARAM, "cudnnBackendSetAttribute(%s): not a live descriptor",
                    attr_name(attributeName));
    if (d->fin)
        return fail(CUDNN_STATUS_NOT_INITIALIZED, "%s: the %s is already finalized",
                    attr_name(attributeName), type_name(d->type));
    const attr_spec *s = find_spec(d->type, attributeName);
    if (!s)
        return fail(CUDNN_STATUS_BAD_PARAM,
                    "attribute %d is not an attribute of %s (or one the "
                    "stand-in does not model)",
                    (int)attributeName, type_name(d->type));
    if (s->flags & READ_ONLY)
        return fail(CUDNN_STATUS_BAD_PARAM, "%s is read-only", s->text);
    if (attributeType != s->type && attributeType != s->alt)
        return fail(CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE,
                    "%s is given as attribute type %d; its type is %d", s->text, (int)attributeType,
                    (int)s->type);
    if (elementCount < s->min || elementCount > s->max)
        return fail(CUDNN_STATUS_BAD_PARAM, "%s takes %ld to %ld elements, not %ld", s->text,
                    (long)s->min, (long)s->max, (long)elementCount);
    if (elementCount > 0 && !arrayOfElements)
        return fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "%s: arrayOfElements is NULL", s->text);
    value v;
    cudnnStatus_t st = read_value(*s, attributeType, elementCount, arrayOfElements, v);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    d->attrs[attributeName] = std::move(v);
    return CUDNN_STATUS_SUCCESS;
}

// A descriptor value is returned by filling the descriptors the caller created (of the right
// type) in arrayOfElements: they become finalized copies.
cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const descriptor,
                                       cudnnBackendAttributeName_t attributeName,
                                       cudnnBackendAttributeType_t attributeType,
                                       int64_t requestedElementCount, int64_t *elementCount,
                                       void *arrayOfElements)
{
    XPBSI_LOCK;
    desc *d = desc_of(descriptor);
    if (!d)
        return fail(CUDNN_STATUS_BAD_PARAM, "cudnnBackendGetAttribute(%s): not a live descriptor",
                    attr_name(attributeName));
    if (!d->fin)
        return fail(CUDNN_STATUS_NOT_INITIALIZED, "%s: the %s is not finalized",
                    attr_name(attributeName), type_name(d->type));
    const attr_spec *s = find_spec(d->type, attributeName);
    if (!s)
        return fail(CUDNN_STATUS_BAD_PARAM, "attribute %d is not an attribute of %s",
                    (int)attributeName, type_name(d->type));
    if (attributeType != s->type && attributeType != s->alt)
        return fail(CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE,
                    "%s is read as attribute type %d; its type is %d", s->text, (int)attributeType,
                    (int)s->type);
    if (requestedElementCount < 0)
        return fail(CUDNN_STATUS_BAD_PARAM, "%s: requestedElementCount < 0", s->text);
    value v;
    if (!computed_attr(*d->fin, attributeName, v)) {
        const value *stored = attr(d->fin->attrs, attributeName);
        if (stored)
            v = *stored;
        v.type = attributeType;
    }
    int64_t n = requestedElementCount < v.count ? requestedElementCount : v.count;
    if (attributeType == CUDNN_TYPE_BACKEND_DESCRIPTOR) {
        if (n > 0 && !arrayOfElements)
            return fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "%s: arrayOfElements is NULL",
                        s->text);
        auto *out = static_cast<cudnnBackendDescriptor_t *>(arrayOfElements);
        for (int64_t i = 0; i < n; i++) {
            desc *o = desc_of(out[i]);
            const node_ptr &src = v.descs[(size_t)i];
            if (!o)
                return fail(CUDNN_STATUS_BAD_PARAM,
                            "%s[%ld]: not a descriptor made by cudnnBackendCreateDescriptor",
                            s->text, (long)i);
            if (o->type != src->type)
                return fail(CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE,
                            "%s[%ld]: a %s was given for a %s", s->text, (long)i,
                            type_name(o->type), type_name(src->type));
            o->attrs = src->attrs;
            o->fin = src;
        }
    } else {
        cudnnStatus_t st =
            write_value(*s, v, attributeType, requestedElementCount, arrayOfElements);
        if (st != CUDNN_STATUS_SUCCESS)
            return st;
    }
    if (elementCount)
        *elementCount = v.count;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t descriptor)
{
    XPBSI_LOCK;
    desc *d = desc_of(descriptor);
    if (!d)
        return fail(CUDNN_STATUS_BAD_PARAM, "cudnnBackendFinalize: not a live descriptor");
    if (d->fin)
        return CUDNN_STATUS_SUCCESS; // nothing changed since it was finalized
    for (const attr_spec &s : *specs_of(d->type))
        if ((s.flags & REQUIRED) && !attr(d->attrs, s.name))
            return fail(CUDNN_STATUS_BAD_PARAM, "%s: the required attribute %s is not set",
                        type_name(d->type), s.text);
    std::shared_ptr<const void> content;
    cudnnStatus_t st = build(d->type, d->attrs, content);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    auto n = std::make_shared<node>();
    n->type = d->type;
    n->attrs = d->attrs;
    n->content = std::move(content);
    d->fin = n;
    return CUDNN_STATUS_SUCCESS;
}

} // extern "C"
