/* NCCL loaded at first use (coll.h): dlopen of libnccl.so.2 (or $XPB_NCCL_LIBRARY) and dlsym of
 * the entry points the backend calls, so that the plugin has no link-time dependency on NCCL:
 * it loads, and runs everything but data-parallel programs, where NCCL is absent (as NVML,
 * energy.c). Also the version string, the sentences of NCCL failures and the wait limit. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/coll.h"

void cux_nccl_version_string(char *out, size_t size, int code)
{
    int major, minor, patch;
    if (code >= 10000) { /* NCCL_VERSION(X, Y, Z) = X*10000 + Y*100 + Z since 2.9 */
        major = code / 10000;
        minor = code / 100 % 100;
        patch = code % 100;
    } else { /* before: X*1000 + Y*100 + Z */
        major = code / 1000;
        minor = code / 100 % 10;
        patch = code % 100;
    }
    snprintf(out, size, "%d.%d.%d", major, minor, patch);
}

/* dlsym of `name` into *slot; 0 when present. */
static int resolve(void *handle, const char *name, void **slot)
{
    *slot = dlsym(handle, name);
    return *slot ? 0 : -1;
}

xpb_status cux_nccl_load_from(cux_nccl_lib *lib, const char *path, char *err, size_t size)
{
    memset(lib, 0, sizeof *lib);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        snprintf(err, size,
                 "NCCL cannot be loaded (%s); data-parallel runs on the cuda backend need it: "
                 "install NCCL 2.10 or newer (NVIDIA's libnccl2, or the CUDA toolkit's) or name "
                 "the library in XPB_NCCL_LIBRARY",
                 why ? why : path);
        return XPB_UNSUPPORTED;
    }
    /* function pointers through void *: POSIX guarantees the conversion for dlsym */
    struct {
        const char *name;
        void **slot;
        int optional;
    } syms[] = {
        {"ncclGetVersion", (void **)&lib->get_version, 0},
        {"ncclGetUniqueId", (void **)&lib->get_unique_id, 0},
        {"ncclCommInitRank", (void **)&lib->comm_init_rank, 0},
        {"ncclCommInitRankConfig", (void **)&lib->comm_init_rank_config, 1},
        {"ncclCommFinalize", (void **)&lib->comm_finalize, 1},
        {"ncclCommDestroy", (void **)&lib->comm_destroy, 0},
        {"ncclCommAbort", (void **)&lib->comm_abort, 0},
        {"ncclCommGetAsyncError", (void **)&lib->comm_get_async_error, 0},
        {"ncclGetErrorString", (void **)&lib->get_error_string, 0},
        {"ncclGetLastError", (void **)&lib->get_last_error, 1},
        {"ncclAllReduce", (void **)&lib->all_reduce, 0},
        {"ncclGroupStart", (void **)&lib->group_start, 0},
        {"ncclGroupEnd", (void **)&lib->group_end, 0},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++)
        if (resolve(h, syms[i].name, syms[i].slot) != 0 && !syms[i].optional) {
            snprintf(err, size, "NCCL (%s) has no %s: not an NCCL 2 library", path, syms[i].name);
            goto close_lib;
        }
    if (lib->get_version(&lib->version) != CUX_NCCL_SUCCESS) {
        snprintf(err, size, "NCCL (%s): ncclGetVersion failed", path);
        goto close_lib;
    }
    cux_nccl_version_string(lib->version_text, sizeof lib->version_text, lib->version);
    if (lib->version < CUX_NCCL_MIN_VERSION) {
        snprintf(err, size,
                 "NCCL %s (%s) is older than 2.10, which the cuda backend needs (ncclAvg, the "
                 "mean over the ranks in one call); install a newer NCCL",
                 lib->version_text, path);
        goto close_lib;
    }
    lib->handle = h;
    return XPB_OK;

close_lib:
    dlclose(h);
    memset(lib, 0, sizeof *lib);
    return XPB_UNSUPPORTED;
}

/* The process's NCCL, its status and message (loaded once). */
static cux_nccl_lib the_lib;
static xpb_status the_status;
static char the_err[768];
static pthread_once_t the_once = PTHREAD_ONCE_INIT;

static void load_once(void)
{
    const char *path = getenv("XPB_NCCL_LIBRARY");
    the_status = cux_nccl_load_from(&the_lib, path && path[0] ? path : "libnccl.so.2", the_err,
                                    sizeof the_err);
}

xpb_status cux_nccl_get(const cux_nccl_lib **out, char *err, size_t size)
{
    pthread_once(&the_once, load_once);
    *out = the_status == XPB_OK ? &the_lib : NULL;
    if (the_status != XPB_OK)
        snprintf(err, size, "%s", the_err);
    return the_status;
}

xpb_status cux_nccl_message(char *err, size_t size, const char *where, uint32_t rank,
                            uint32_t ranks, int device, const char *call, const char *text,
                            const char *last)
{
    const char *t = text && text[0] ? text : "unknown NCCL error";
    snprintf(err, size, "%s: rank %u of %u (device %d): %s: %s%s%s%s", where, rank, ranks, device,
             call, t, last && last[0] ? ": " : "", last && last[0] ? last : "",
             strstr(t, "NCCL_DEBUG") ? "" : " (run with NCCL_DEBUG=INFO for NCCL's own account)");
    return XPB_DEVICE_ERROR;
}

double cux_nccl_timeout(void)
{
    const char *v = getenv("XPB_DP_TIMEOUT");
    if (!v || !v[0])
        return 900.0;
    char *end = NULL;
    double s = strtod(v, &end);
    if (end == v || *end != '\0' || !(s >= 0.0))
        return 900.0;
    return s == 0.0 ? -1.0 : s;
}
