/* The test backends that wrap the reference backend (tests/faulty_backend, tests/fake_meter,
 * tests/dp_fault_backend): each forwards every call to cpu_ref, loaded from WRAPPED_INNER (its
 * path, set by xpb_wrapped_backend in tests/CMakeLists.txt), and changes only what its test
 * needs. A file includes this header once, defines its `descriptor` with `.api = &wrapped_api`,
 * and its XPB_PLUGIN_QUERY returns wrapped_query(...) after replacing the members of
 * wrapped_api it changes (wrapped_query fills the others with the forwarding defaults first). */
#ifndef XPB_TESTS_WRAPPED_BACKEND_H
#define XPB_TESTS_WRAPPED_BACKEND_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <xpubench/backend.h>

#define WRAPPED_UNUSED __attribute__((unused))

/* The executable of a wrapping backend: cpu_ref's, plus what the wrappers keep. */
struct xpb_executable {
    xpb_executable *inner;      /* cpu_ref's executable */
    const xpb_program *program; /* the caller's, valid until destroy */
    int rank;                   /* the communicator's rank (compile options); -1: one process */
    uint64_t runs;              /* run() calls so far */
    char err[256];              /* an injected failure's message; empty: cpu_ref's */
};

static void *inner_handle;
/* cpu_ref's descriptor and functions once wrapped_query loaded it; static, valid while loaded. */
static const xpb_plugin_descriptor *inner_desc;
static const xpb_backend_api *inner;
/* The table the wrapper hands the host (its descriptor's api). */
static xpb_backend_api wrapped_api;

__attribute__((destructor)) static void unload_inner(void)
{
    if (inner_handle)
        dlclose(inner_handle);
}

static WRAPPED_UNUSED xpb_status wrapped_open(xpb_backend **out, uint32_t device)
{
    return inner->open(out, device);
}

static WRAPPED_UNUSED void wrapped_close(xpb_backend *be)
{
    inner->close(be);
}

static WRAPPED_UNUSED const char *wrapped_last_error(const xpb_backend *be)
{
    return inner->last_error(be);
}

static WRAPPED_UNUSED xpb_status wrapped_device_info(xpb_backend *be, xpb_device_info *out)
{
    return inner->device_info(be, out);
}

static WRAPPED_UNUSED xpb_status wrapped_compile(xpb_executable **out, xpb_backend *be,
                                                 const xpb_program *p, const xpb_compile_options *o)
{
    const xpb_communicator *comm = XPB_MEMBER_OR(o, xpb_compile_options, comm, NULL);
    *out = NULL;
    xpb_executable *exe = calloc(1, sizeof *exe);
    if (!exe)
        return XPB_OUT_OF_MEMORY;
    xpb_status st = inner->compile(&exe->inner, be, p, o);
    if (st != XPB_OK) {
        free(exe);
        return st;
    }
    exe->program = p;
    exe->rank = comm ? (int)comm->rank : -1;
    *out = exe;
    return XPB_OK;
}

static WRAPPED_UNUSED void wrapped_destroy(xpb_executable *exe)
{
    if (!exe)
        return;
    inner->destroy(exe->inner);
    free(exe);
}

static WRAPPED_UNUSED const char *wrapped_exe_last_error(const xpb_executable *exe)
{
    if (exe && exe->err[0])
        return exe->err;
    return inner->exe_last_error(exe ? exe->inner : NULL);
}

static WRAPPED_UNUSED xpb_status wrapped_write(xpb_executable *exe, uint32_t t, const void *data,
                                               size_t bytes)
{
    return inner->write(exe->inner, t, data, bytes);
}

static WRAPPED_UNUSED xpb_status wrapped_read(xpb_executable *exe, uint32_t t, void *data,
                                              size_t bytes)
{
    return inner->read(exe->inner, t, data, bytes);
}

static WRAPPED_UNUSED xpb_status wrapped_run(xpb_executable *exe, uint32_t phase)
{
    exe->runs++;
    exe->err[0] = '\0';
    return inner->run(exe->inner, phase);
}

static WRAPPED_UNUSED xpb_status wrapped_synchronize(xpb_executable *exe)
{
    return inner->synchronize(exe->inner);
}

/* Not a default (cpu_ref's optional entry point): a wrapper that offers it sets it. */
static WRAPPED_UNUSED xpb_status wrapped_memory_stats(xpb_executable *exe, xpb_memory_stats *out)
{
    return inner->memory_stats(exe->inner, out);
}

/* Loads cpu_ref (once), queries it as the host queried this plugin, fills the members of
 * wrapped_api the wrapper left NULL with the forwarding defaults and answers the host with
 * `descriptor`. The wrapper's own members must be set before. */
static WRAPPED_UNUSED xpb_status wrapped_query(const xpb_plugin_descriptor **out,
                                               const xpb_plugin_descriptor *descriptor,
                                               uint32_t host_major, uint32_t host_minor,
                                               const xpb_host_services *host)
{
    *out = descriptor;
    if (host_major != XPB_ABI_MAJOR)
        return XPB_INCOMPATIBLE;
    if (!inner) {
        inner_handle = dlopen(WRAPPED_INNER, RTLD_NOW | RTLD_LOCAL);
        xpb_plugin_query_fn query =
            inner_handle ? (xpb_plugin_query_fn)dlsym(inner_handle, XPB_PLUGIN_QUERY_SYMBOL) : NULL;
        const xpb_plugin_descriptor *d = NULL;
        if (!query || query(&d, host_major, host_minor, host) != XPB_OK || !d ||
            d->kind != XPB_PLUGIN_BACKEND)
            return XPB_INTERNAL;
        inner_desc = d;
        inner = d->api;
    }
    xpb_backend_api *a = &wrapped_api;
    a->struct_size = sizeof *a;
#define WRAPPED_DEFAULT_(member)                                                                   \
    if (!a->member)                                                                                \
        a->member = wrapped_##member;
    WRAPPED_DEFAULT_(open)
    WRAPPED_DEFAULT_(close)
    WRAPPED_DEFAULT_(last_error)
    WRAPPED_DEFAULT_(device_info)
    WRAPPED_DEFAULT_(compile)
    WRAPPED_DEFAULT_(destroy)
    WRAPPED_DEFAULT_(exe_last_error)
    WRAPPED_DEFAULT_(write)
    WRAPPED_DEFAULT_(read)
    WRAPPED_DEFAULT_(run)
    WRAPPED_DEFAULT_(synchronize)
#undef WRAPPED_DEFAULT_
    return XPB_OK;
}

#endif
