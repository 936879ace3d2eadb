/* The MPI module, found and loaded at run time (see parallel.h). Where the host looks, in
 * order: the file $XPB_MPI_MODULE names; <folder of the executable>/modules (the build tree);
 * <install prefix>/XPB_MPI_MODULE_INSTALL_REL (the executable's folder with XPB_BINDIR_REL
 * taken off). */
#include "parallel/parallel.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MODULE_FILE "xpubench_mpi.so"
#define HOW_TO_GET_MPI                                                                             \
    "install Open MPI (Debian: apt-get install libopenmpi-dev openmpi-bin) and build xpubench "    \
    "again (cmake -DXPB_WITH_MPI=ON)"

/* The folder of the running executable into `dir` (size bytes); 0 when unknown. */
static int exe_folder(char *dir, size_t size)
{
    char path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0)
        return 0;
    path[n] = '\0';
    char *slash = strrchr(path, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    snprintf(dir, size, "%s", path);
    return 1;
}

/* The two places a build puts the module, into `build` and `installed` (size bytes each). */
static void module_candidates(char *build, char *installed, size_t size)
{
    char exe[PATH_MAX];
    build[0] = installed[0] = '\0';
    if (!exe_folder(exe, sizeof exe))
        return;
    snprintf(build, size, "%.3900s/modules/" MODULE_FILE, exe);
    size_t len = strlen(exe), bin = strlen(XPB_BINDIR_REL);
    if (len > bin && strcmp(exe + len - bin, XPB_BINDIR_REL) == 0 && exe[len - bin - 1] == '/') {
        exe[len - bin - 1] = '\0';
        snprintf(installed, size, "%.3800s/%s/" MODULE_FILE, exe, XPB_MPI_MODULE_INSTALL_REL);
    }
}

/* The module's path into `path` (size bytes), or XPB_UNSUPPORTED saying why there is none. */
static xpb_status find_module(char *path, size_t size, xpb_err *err)
{
    const char *named = getenv("XPB_MPI_MODULE");
    if (named && *named) {
        snprintf(path, size, "%s", named);
        if (access(path, R_OK) == 0)
            return XPB_OK;
        return xpb_err_set(err, XPB_UNSUPPORTED,
                           "data-parallel runs need the MPI module, and XPB_MPI_MODULE names "
                           "'%s', which cannot be read",
                           named);
    }
    if (!XPB_HAVE_MPI_MODULE)
        return xpb_err_set(err, XPB_UNSUPPORTED,
                           "data-parallel runs need MPI, and this xpubench was built without it: "
                           "%s",
                           HOW_TO_GET_MPI);
    char build[PATH_MAX], installed[PATH_MAX];
    module_candidates(build, installed, sizeof build);
    if (build[0] && access(build, R_OK) == 0) {
        snprintf(path, size, "%s", build);
        return XPB_OK;
    }
    if (installed[0] && access(installed, R_OK) == 0) {
        snprintf(path, size, "%s", installed);
        return XPB_OK;
    }
    return xpb_err_set(err, XPB_UNSUPPORTED,
                       "data-parallel runs need the MPI module " MODULE_FILE
                       ", which is neither at '%s' nor at '%s': install xpubench again (or set "
                       "XPB_MPI_MODULE to the file)",
                       build[0] ? build : "<exe dir>/modules",
                       installed[0] ? installed : "<prefix>/" XPB_MPI_MODULE_INSTALL_REL);
}

xpb_status xpb_parallel_available(xpb_err *err)
{
    char path[PATH_MAX];
    return find_module(path, sizeof path, err);
}

/* Loads the module at p->module_path into p->mod. The module stays mapped for good: MPI keeps
 * threads and handlers once initialised. Loaded with RTLD_GLOBAL because MPI libraries open
 * their own components, which look for the library's symbols globally. */
static xpb_status load_module(xpb_parallel *p, xpb_err *err)
{
    void *dl = dlopen(p->module_path, RTLD_NOW | RTLD_GLOBAL);
    if (!dl)
        return xpb_err_set(err, XPB_UNSUPPORTED,
                           "cannot load the MPI module %s: %s (is Open MPI's library installed? "
                           "Debian: apt-get install openmpi-bin)",
                           p->module_path, dlerror());
    xpb_mpi_module_query_fn query = (xpb_mpi_module_query_fn)dlsym(dl, XPB_MPI_MODULE_SYMBOL);
    const xpb_mpi_module *mod = query ? query() : NULL;
    if (!mod || mod->version != XPB_MPI_MODULE_VERSION)
        return xpb_err_set(err, XPB_UNSUPPORTED,
                           "%s is not an MPI module of this xpubench (version %u expected): "
                           "install xpubench again",
                           p->module_path, (unsigned)XPB_MPI_MODULE_VERSION);
    p->mod = mod;
    return XPB_OK;
}

/* XPB_DP_TIMEOUT, seconds (default 900; 0: wait forever). */
static double agreement_timeout(void)
{
    const char *text = getenv("XPB_DP_TIMEOUT");
    char *end;
    double v = text && *text ? strtod(text, &end) : 900.0;
    return text && *text && (*end || v < 0) ? 900.0 : v;
}

xpb_status xpb_parallel_open(xpb_parallel **out, xpb_err *err)
{
    xpb_launch launch;
    *out = NULL;
    xpb_launch_detect(&launch);
    if (!xpb_launch_is_parallel(&launch))
        return XPB_OK;
    xpb_parallel *p = calloc(1, sizeof *p);
    if (!p)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    p->launch = launch;
    p->timeout_s = agreement_timeout();
    xpb_status st = find_module(p->module_path, sizeof p->module_path, err);
    if (st == XPB_OK)
        st = load_module(p, err);
    char msg[512] = "";
    if (st == XPB_OK && (st = p->mod->init(&p->comm, msg, sizeof msg)) != XPB_OK)
        xpb_err_set(err, st, "MPI did not start: %s", msg);
    if (st != XPB_OK) {
        xpb_err_prefix(err, "launched as rank %u of %u by %s", launch.rank, launch.size,
                       launch.launcher);
        free(p);
        return st;
    }
    if (gethostname(p->host, sizeof p->host - 1) != 0)
        snprintf(p->host, sizeof p->host, "unknown");
    *out = p;
    return XPB_OK;
}

void xpb_parallel_close(xpb_parallel *p)
{
    if (!p)
        return;
    /* One last exchange with the deadline of every other: a rank that stopped answering before
     * the end is named here, instead of leaving MPI_Finalize waiting for it (which the module's
     * watchdog would end without a name). */
    uint8_t mine = 1, *all = calloc(p->comm.size, 1);
    if (all)
        p->mod->allgather(p->comm.ctx, &mine, all, 1, p->timeout_s, "the end of the job", 0);
    free(all);
    p->mod->finalize(p->comm.ctx);
    free(p);
}

const char *xpb_parallel_library(const xpb_parallel *p)
{
    return p && p->mod ? p->mod->library() : "";
}
