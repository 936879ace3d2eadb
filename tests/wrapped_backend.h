/* The test backends that wrap the reference backend (tests/faulty_backend, tests/fake_meter,
 * tests/dp_fault_backend): each forwards every call to cpu_ref, loaded from WRAPPED_INNER (its
 * path, set by xpb_wrapped_backend in tests/CMakeLists.txt), and changes what its test needs.
 * A file includes this header once, defines its `descriptor`, and its XPB_PLUGIN_QUERY calls
 * wrapped_load_inner. */
#ifndef XPB_TESTS_WRAPPED_BACKEND_H
#define XPB_TESTS_WRAPPED_BACKEND_H

#include <dlfcn.h>

#include <xpubench/backend.h>

static void *inner_handle;
/* cpu_ref's functions once wrapped_load_inner succeeded; static, valid while loaded. */
static const xpb_backend_api *inner;

__attribute__((destructor)) static void unload_inner(void)
{
    if (inner_handle)
        dlclose(inner_handle);
}

/* Loads cpu_ref (once) and queries it as the host queried this plugin; its descriptor into
 * *inner_desc (static in cpu_ref, valid while loaded). XPB_INTERNAL when it cannot. */
static xpb_status wrapped_load_inner(const xpb_plugin_descriptor **inner_desc, uint32_t host_major,
                                     uint32_t host_minor, const xpb_host_services *host)
{
    static const xpb_plugin_descriptor *loaded;
    if (!loaded) {
        inner_handle = dlopen(WRAPPED_INNER, RTLD_NOW | RTLD_LOCAL);
        xpb_plugin_query_fn query =
            inner_handle ? (xpb_plugin_query_fn)dlsym(inner_handle, XPB_PLUGIN_QUERY_SYMBOL) : NULL;
        const xpb_plugin_descriptor *d = NULL;
        if (!query || query(&d, host_major, host_minor, host) != XPB_OK || !d ||
            d->kind != XPB_PLUGIN_BACKEND)
            return XPB_INTERNAL;
        loaded = d;
        inner = d->api;
    }
    *inner_desc = loaded;
    return XPB_OK;
}

#endif
