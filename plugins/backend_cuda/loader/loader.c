/* The cuda plugin the host loads: a loader in front of the backend proper (abi/, built as
 * cuda/backend_cuda_impl.so in the loader's folder). cuBLASLt costs about 150 MiB of resident
 * memory the moment it is loaded (its relocations and static tables), which every process
 * paid when the plugin linked it directly: `xpubench list` peaked at 219 MiB instead of 14, and
 * every run of another backend carried those pages in its peak memory. So the backend proper,
 * and with it the CUDA runtime, cuDNN and cuBLASLt, is loaded on the host's first call to this
 * plugin's function table; a process that never calls it (a run of cpu_onednn) never maps them.
 *
 * Every entry point forwards to the backend proper's. When it cannot be loaded (the file is
 * missing, a library it needs is not found, it is of another build), the answers are those of
 * a backend without a device: XPB_NO_DEVICE from device_count, describe_device and open, with
 * the reason in last_error(NULL); XPB_INVALID_ARGUMENT from calls on objects, which cannot
 * exist then. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <xpubench/xpubench.h>

#include "abi/identity.h"

static const xpb_host_services *host_services;
static uint32_t saved_major = XPB_ABI_MAJOR, saved_minor = XPB_ABI_MINOR;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const xpb_backend_api *proper_api; /* NULL until loaded, and when loading failed */
static char load_error[1536];

/* Whether every entry point of the loader's table is present in the backend proper's. */
static int complete(const xpb_backend_api *a)
{
    return a->struct_size >= sizeof(xpb_backend_api) && a->open && a->close && a->last_error &&
           a->device_info && a->compile && a->destroy && a->exe_last_error && a->write && a->read &&
           a->run && a->synchronize && a->profile_read && a->memory_stats && a->energy_read &&
           a->device_count && a->describe_device && a->write_async && a->host_alloc && a->host_free;
}

static void load_proper(void)
{
    Dl_info self;
    if (!dladdr((void *)&load_proper, &self) || !self.dli_fname) {
        snprintf(load_error, sizeof load_error,
                 "the cuda plugin cannot tell its own file, and so where its backend (%s) is",
                 CUX_PROPER_FILE);
        return;
    }
    const char *slash = strrchr(self.dli_fname, '/');
    char path[1024];
    if (slash)
        snprintf(path, sizeof path, "%.*s/%s", (int)(slash - self.dli_fname), self.dli_fname,
                 CUX_PROPER_FILE);
    else
        snprintf(path, sizeof path, "%s", CUX_PROPER_FILE);
    /* never closed: the CUDA runtime registers its teardown at exit (it is linked -z nodelete) */
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        snprintf(load_error, sizeof load_error, "the cuda backend %s did not load: %s", path,
                 why ? why : "unknown error");
        return;
    }
    xpb_plugin_query_fn query = (xpb_plugin_query_fn)dlsym(h, XPB_PLUGIN_QUERY_SYMBOL);
    const xpb_plugin_descriptor *d = NULL;
    xpb_status st = query ? query(&d, saved_major, saved_minor, host_services) : XPB_NOT_FOUND;
    if (st != XPB_OK || !d || d->kind != XPB_PLUGIN_BACKEND || !d->name ||
        strcmp(d->name, CUX_PLUGIN_NAME) != 0 || !d->version ||
        strcmp(d->version, CUX_PLUGIN_VERSION) != 0 || !d->api || !complete(d->api)) {
        snprintf(load_error, sizeof load_error,
                 "%s is not the backend of this cuda plugin (%s %s): a file of another build; "
                 "reinstall xpubench",
                 path, CUX_PLUGIN_NAME, CUX_PLUGIN_VERSION);
        return;
    }
    proper_api = d->api;
}

/* The backend proper's table, loaded on the first call; NULL when it cannot be loaded. */
static const xpb_backend_api *proper(void)
{
    pthread_once(&load_once, load_proper);
    return proper_api;
}

/* ---- devices: without the backend proper, no device ---- */

static xpb_status fwd_device_count(uint32_t *count)
{
    const xpb_backend_api *p = proper();
    if (p)
        return p->device_count(count);
    if (!count)
        return XPB_INVALID_ARGUMENT;
    *count = 0;
    return XPB_NO_DEVICE;
}

static xpb_status fwd_describe_device(uint32_t index, xpb_device_info *out)
{
    const xpb_backend_api *p = proper();
    return p ? p->describe_device(index, out) : out ? XPB_NO_DEVICE : XPB_INVALID_ARGUMENT;
}

static xpb_status fwd_open(xpb_backend **out, uint32_t device_index)
{
    const xpb_backend_api *p = proper();
    if (p)
        return p->open(out, device_index);
    if (!out)
        return XPB_INVALID_ARGUMENT;
    *out = NULL;
    return XPB_NO_DEVICE;
}

static const char *fwd_last_error(const xpb_backend *be)
{
    const xpb_backend_api *p = proper();
    return p ? p->last_error(be) : load_error;
}

/* ---- objects: they exist only where the backend proper made them ---- */

static void fwd_close(xpb_backend *be)
{
    const xpb_backend_api *p = proper();
    if (p)
        p->close(be);
}

static xpb_status fwd_device_info(xpb_backend *be, xpb_device_info *out)
{
    const xpb_backend_api *p = proper();
    return p ? p->device_info(be, out) : XPB_INVALID_ARGUMENT;
}

static xpb_status fwd_compile(xpb_executable **out, xpb_backend *be, const xpb_program *program,
                              const xpb_compile_options *options)
{
    const xpb_backend_api *p = proper();
    return p ? p->compile(out, be, program, options) : XPB_INVALID_ARGUMENT;
}

static void fwd_destroy(xpb_executable *exe)
{
    const xpb_backend_api *p = proper();
    if (p)
        p->destroy(exe);
}

static const char *fwd_exe_last_error(const xpb_executable *exe)
{
    const xpb_backend_api *p = proper();
    return p ? p->exe_last_error(exe) : load_error;
}

static xpb_status fwd_write(xpb_executable *exe, uint32_t tensor, const void *data, size_t bytes)
{
    const xpb_backend_api *p = proper();
    return p ? p->write(exe, tensor, data, bytes) : XPB_INVALID_ARGUMENT;
}

static xpb_status fwd_read(xpb_executable *exe, uint32_t tensor, void *data, size_t bytes)
{
    const xpb_backend_api *p = proper();
    return p ? p->read(exe, tensor, data, bytes) : XPB_INVALID_ARGUMENT;
}

static xpb_status fwd_run(xpb_executable *exe, uint32_t phase)
{
    const xpb_backend_api *p = proper();
    return p ? p->run(exe, phase) : XPB_INVALID_ARGUMENT;
}

static xpb_status fwd_synchronize(xpb_executable *exe)
{
    const xpb_backend_api *p = proper();
    return p ? p->synchronize(exe) : XPB_INVALID_ARGUMENT;
}

static xpb_status fwd_profile_read(xpb_executable *exe, xpb_op_profile *out, uint32_t capacity,
                                   uint32_t *count)
{
    const xpb_backend_api *p = proper();
    return p ? p->profile_read(exe, out, capacity, count) : XPB_INVALID_ARGUMENT;
}

static xpb_status fwd_memory_stats(xpb_executable *exe, xpb_memory_stats *out)
{
    const xpb_backend_api *p = proper();
    return p ? p->memory_stats(exe, out) : XPB_INVALID_ARGUMENT;
}

static xpb_status fwd_energy_read(xpb_backend *be, double *joules)
{
    const xpb_backend_api *p = proper();
    return p ? p->energy_read(be, joules) : XPB_INVALID_ARGUMENT;
}

static xpb_status fwd_write_async(xpb_executable *exe, uint32_t tensor, const void *data,
                                  size_t bytes)
{
    const xpb_backend_api *p = proper();
    return p ? p->write_async(exe, tensor, data, bytes) : XPB_INVALID_ARGUMENT;
}

static xpb_status fwd_host_alloc(xpb_backend *be, size_t bytes, void **out)
{
    const xpb_backend_api *p = proper();
    return p ? p->host_alloc(be, bytes, out) : XPB_INVALID_ARGUMENT;
}

static void fwd_host_free(xpb_backend *be, void *ptr)
{
    const xpb_backend_api *p = proper();
    if (p)
        p->host_free(be, ptr);
}

static const xpb_backend_api loader_api = {
    .struct_size = sizeof(xpb_backend_api),
    .open = fwd_open,
    .close = fwd_close,
    .last_error = fwd_last_error,
    .device_info = fwd_device_info,
    .compile = fwd_compile,
    .destroy = fwd_destroy,
    .exe_last_error = fwd_exe_last_error,
    .write = fwd_write,
    .read = fwd_read,
    .run = fwd_run,
    .synchronize = fwd_synchronize,
    .profile_read = fwd_profile_read,
    .memory_stats = fwd_memory_stats,
    .energy_read = fwd_energy_read,
    .device_count = fwd_device_count,
    .describe_device = fwd_describe_device,
    .write_async = fwd_write_async,
    .host_alloc = fwd_host_alloc,
    .host_free = fwd_host_free,
};

static const xpb_plugin_descriptor loader_descriptor = {
    sizeof(xpb_plugin_descriptor),
    XPB_ABI_MAJOR,
    XPB_ABI_MINOR,
    XPB_PLUGIN_BACKEND,
    CUX_PLUGIN_NAME,
    CUX_PLUGIN_VERSION,
    CUX_PLUGIN_DESCRIPTION,
    CUX_PLUGIN_CAPS,
    &loader_api,
    XPB_OPSET_VERSION,
};

/* The host's version and services are kept for the backend proper's own query. */
XPB_PLUGIN_QUERY
{
    *out = &loader_descriptor;
    if (host_major != XPB_ABI_MAJOR)
        return XPB_INCOMPATIBLE;
    saved_major = host_major;
    saved_minor = host_minor;
    host_services = host;
    return XPB_OK;
}
