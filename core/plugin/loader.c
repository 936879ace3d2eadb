/* The plugin loader (see loader.h and docs/plugin-abi.md, "Loading"). */
#include "plugin/loader.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin/guard.h"
#include "plugin/log.h"

/* Normally set by core/CMakeLists.txt from GNUInstallDirs. */
#ifndef XPB_PLUGIN_INSTALL_REL
#define XPB_PLUGIN_INSTALL_REL "lib/xpubench/plugins"
#endif
#ifndef XPB_BINDIR_REL
#define XPB_BINDIR_REL "bin"
#endif

#define PLUGIN_SUFFIX ".so"

struct plugin_entry {
    char *path;                        /* as found: "<dir>/<file>.so" */
    void *handle;                      /* from dlopen */
    const xpb_plugin_descriptor *desc; /* owned by the plugin */
};

struct xpb_registry {
    struct plugin_entry *plugins;
    size_t n_plugins, cap_plugins;
    char **problems;
    size_t n_problems, cap_problems;
};

/* ---- small helpers ---- */

/* `array` (of `elem` bytes per item, `*cap` items) grown to hold at least `need` items: the
 * same pointer when it already does, a reallocated one (and *cap updated), or NULL when out
 * of memory (then `array` is untouched and still owned by the caller). */
static void *grow(void *array, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return array;
    size_t n = *cap ? *cap * 2 : 8;
    while (n < need)
        n *= 2;
    void *p = realloc(array, n * elem);
    if (p)
        *cap = n;
    return p;
}

/* A malloc'ed printf; NULL when out of memory. The caller frees it. */
static char *vformat(const char *fmt, va_list ap)
{
    va_list copy;
    va_copy(copy, ap);
    int len = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (len < 0)
        return NULL;
    char *s = malloc((size_t)len + 1);
    if (s)
        vsnprintf(s, (size_t)len + 1, fmt, ap);
    return s;
}

static char *format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *format(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = vformat(fmt, ap);
    va_end(ap);
    return s;
}

/* Records one problem line. XPB_OUT_OF_MEMORY is the only failure. */
static xpb_status add_problem(xpb_registry *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static xpb_status add_problem(xpb_registry *r, const char *fmt, ...)
{
    char **problems = grow(r->problems, &r->cap_problems, r->n_problems + 1, sizeof *problems);
    if (!problems)
        return XPB_OUT_OF_MEMORY;
    r->problems = problems;
    va_list ap;
    va_start(ap, fmt);
    char *line = vformat(fmt, ap);
    va_end(ap);
    if (!line)
        return XPB_OUT_OF_MEMORY;
    r->problems[r->n_problems++] = line;
    return XPB_OK;
}

static int valid_name(const char *s)
{
    if (!s || !*s)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return 0;
    return 1;
}

const char *xpb_plugin_kind_name(uint32_t kind)
{
    switch (kind) {
    case XPB_PLUGIN_BACKEND:
        return "backend";
    case XPB_PLUGIN_MODEL:
        return "model";
    }
    return "unknown";
}

/* ---- descriptor checks ---- */

/* "backend 'cpu_ref' 1.0.0" / "plugin 'x' ?" — whatever the descriptor lets us read safely.
 * Only members its struct_size covers are touched. */
static void describe(char *buf, size_t size, const xpb_plugin_descriptor *d)
{
    const char *kind = "plugin";
    if (XPB_HAS_MEMBER(d, xpb_plugin_descriptor, kind) &&
        (d->kind == XPB_PLUGIN_BACKEND || d->kind == XPB_PLUGIN_MODEL))
        kind = xpb_plugin_kind_name(d->kind);
    const char *name = XPB_MEMBER_OR(d, xpb_plugin_descriptor, name, NULL);
    const char *version = XPB_MEMBER_OR(d, xpb_plugin_descriptor, version, NULL);
    snprintf(buf, size, "%s '%s' %s", kind, name ? name : "?", version ? version : "?");
}

/* Checks a backend's function table. Writes why it is refused into `why` and returns 0, or
 * returns 1. */
static int check_backend(const xpb_backend_api *api, const char *who, char *why, size_t size)
{
    size_t need = offsetof(xpb_backend_api, synchronize) + sizeof api->synchronize;
    if (api->struct_size < need) {
        snprintf(why, size,
                 "%s: function table struct_size is %zu, ABI %d.0 needs at least %zu (through "
                 "'synchronize')",
                 who, api->struct_size, XPB_ABI_MAJOR, need);
        return 0;
    }
    static const struct {
        const char *name;
        size_t offset;
    } required[] = {
#define REQUIRED_(m) {#m, offsetof(xpb_backend_api, m)}
        REQUIRED_(open),    REQUIRED_(close),   REQUIRED_(last_error),     REQUIRED_(device_info),
        REQUIRED_(compile), REQUIRED_(destroy), REQUIRED_(exe_last_error), REQUIRED_(write),
        REQUIRED_(read),    REQUIRED_(run),     REQUIRED_(synchronize),
#undef REQUIRED_
    };
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
        /* Every required member is a function pointer; copy it out as bytes to test it. */
        void (*fn)(void);
        memcpy(&fn, (const char *)api + required[i].offset, sizeof fn);
        if (!fn) {
            snprintf(why, size, "%s: required entry point '%s' is NULL", who, required[i].name);
            return 0;
        }
    }
    return 1;
}

static int check_model(const xpb_model_api *api, const char *who, char *why, size_t size)
{
    size_t need = offsetof(xpb_model_api, build) + sizeof api->build;
    if (api->struct_size < need) {
        snprintf(why, size,
                 "%s: function table struct_size is %zu, ABI %d.0 needs at least %zu (through "
                 "'build')",
                 who, api->struct_size, XPB_ABI_MAJOR, need);
        return 0;
    }
    if (!api->build) {
        snprintf(why, size, "%s: required entry point 'build' is NULL", who);
        return 0;
    }
    if (api->n_params > 0 && !api->params) {
        snprintf(why, size, "%s: declares %u parameters but 'params' is NULL", who, api->n_params);
        return 0;
    }
    for (uint32_t i = 0; i < api->n_params; i++) {
        const xpb_model_param *p = &api->params[i];
        if (!valid_name(p->name)) {
            snprintf(why, size, "%s: parameter %u has name '%s', not [a-z0-9_]+", who, i,
                     p->name ? p->name : "(null)");
            return 0;
        }
        if (p->type < XPB_MPARAM_STRING || p->type > XPB_MPARAM_BOOL) {
            snprintf(why, size, "%s: parameter '%s' has unknown type %u", who, p->name, p->type);
            return 0;
        }
        if (!p->default_value) {
            snprintf(why, size, "%s: parameter '%s' has no default value", who, p->name);
            return 0;
        }
        for (uint32_t j = 0; j < i; j++) {
            if (strcmp(api->params[j].name, p->name) == 0) {
                snprintf(why, size, "%s: declares parameter '%s' twice", who, p->name);
                return 0;
            }
        }
    }
    return 1;
}

/* Checks what xpb_plugin_query answered (status `qs`, descriptor `d`). Writes why the plugin
 * is refused into `why` (without the file name) and returns 0, or returns 1. */
static int check_descriptor(const xpb_plugin_descriptor *d, xpb_status qs, char *why, size_t size)
{
    char who[384];
    describe(who, sizeof who, d);

    if (qs != XPB_OK) {
        if (XPB_HAS_MEMBER(d, xpb_plugin_descriptor, version) && d->name)
            snprintf(why, size,
                     "%s (built for ABI %u.%u, this host speaks ABI %d.%d): xpb_plugin_query "
                     "failed: %s (status %d)",
                     who, d->abi_major, d->abi_minor, XPB_ABI_MAJOR, XPB_ABI_MINOR,
                     xpb_strerror(qs), (int)qs);
        else
            snprintf(why, size, "xpb_plugin_query failed: %s (status %d)", xpb_strerror(qs),
                     (int)qs);
        return 0;
    }
    if (!d) {
        snprintf(why, size, "xpb_plugin_query returned %s but no descriptor", xpb_status_name(qs));
        return 0;
    }
    if (!XPB_HAS_MEMBER(d, xpb_plugin_descriptor, abi_minor)) {
        snprintf(why, size, "descriptor struct_size %zu is too small to hold an ABI version",
                 d->struct_size);
        return 0;
    }
    if (d->abi_major != XPB_ABI_MAJOR) {
        const char *name = XPB_MEMBER_OR(d, xpb_plugin_descriptor, name, NULL);
        const char *version = XPB_MEMBER_OR(d, xpb_plugin_descriptor, version, NULL);
        snprintf(why, size, "plugin '%s' %s was built for ABI %u.%u, this host speaks ABI %d.%d",
                 name ? name : "?", version ? version : "?", d->abi_major, d->abi_minor,
                 XPB_ABI_MAJOR, XPB_ABI_MINOR);
        return 0;
    }
    if (!XPB_HAS_MEMBER(d, xpb_plugin_descriptor, api)) {
        snprintf(why, size, "%s: descriptor struct_size is %zu, ABI %d.0 needs at least %zu", who,
                 d->struct_size, XPB_ABI_MAJOR,
                 offsetof(xpb_plugin_descriptor, api) + sizeof d->api);
        return 0;
    }
    if (!valid_name(d->name)) {
        snprintf(why, size, "plugin name '%s' is not [a-z0-9_]+", d->name ? d->name : "(null)");
        return 0;
    }
    if (!d->version || !*d->version) {
        snprintf(why, size, "%s: the descriptor has no version", who);
        return 0;
    }
    if (!d->description) {
        snprintf(why, size, "%s: the descriptor has no description", who);
        return 0;
    }
    if (d->kind != XPB_PLUGIN_BACKEND && d->kind != XPB_PLUGIN_MODEL) {
        snprintf(why, size, "%s: unknown plugin kind %u", who, d->kind);
        return 0;
    }
    if (!d->api) {
        snprintf(why, size, "%s: no function table (api is NULL)", who);
        return 0;
    }
    if (d->kind == XPB_PLUGIN_BACKEND)
        return check_backend(d->api, who, why, size);
    return check_model(d->api, who, why, size);
}

uint64_t xpb_plugin_caps(const xpb_plugin_descriptor *d)
{
    if (!XPB_HAS_MEMBER(d, xpb_plugin_descriptor, api))
        return 0;
    /* Since ABI 1.1 only behaviour without an entry point of its own is a bit; what an
     * optional entry point does is said by its presence, whatever the plugin's bits say. */
    uint64_t caps = d->caps & (XPB_CAP_FUSION | XPB_CAP_THREADS);
    if (d->kind == XPB_PLUGIN_BACKEND) {
        const xpb_backend_api *api = d->api;
        if (XPB_MEMBER_OR(api, xpb_backend_api, profile_read, NULL))
            caps |= XPB_CAP_PROFILING;
        if (XPB_MEMBER_OR(api, xpb_backend_api, memory_stats, NULL))
            caps |= XPB_CAP_MEMORY_STATS;
        if (XPB_MEMBER_OR(api, xpb_backend_api, energy_read, NULL))
            caps |= XPB_CAP_ENERGY;
    }
    return caps;
}

uint32_t xpb_plugin_opset(const xpb_plugin_descriptor *d)
{
    uint32_t opset = XPB_MEMBER_OR(d, xpb_plugin_descriptor, opset, 0u);
    return opset ? opset : 1u;
}

/* ---- loading ---- */

/* dlclose, which runs the plugin's destructors. */
static void unload(void *handle, const char *path)
{
    xpb_guard_enter_file(path, "dlclose (its destructors)");
    dlclose(handle);
    xpb_guard_leave();
}

/* Opens one plugin file and either adds it to `r` or records why not. Only running out of
 * memory is an error. */
static xpb_status load_file(xpb_registry *r, const char *path)
{
    xpb_status st = XPB_OK;
    char why[1024];

    xpb_guard_enter_file(path, "dlopen (its constructors)");
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    xpb_guard_leave();
    if (!handle) {
        const char *e = dlerror();
        return add_problem(r, "%s: cannot load: %s; skipped", path, e ? e : "dlopen failed");
    }

    dlerror(); /* clear, so that a NULL result can be told from a missing symbol */
    void *sym = dlsym(handle, XPB_PLUGIN_QUERY_SYMBOL);
    if (!sym) {
        const char *e = dlerror();
        st = add_problem(r, "%s: no entry point %s (%s); skipped", path, XPB_PLUGIN_QUERY_SYMBOL,
                         e ? e : "the symbol is NULL");
        goto close_handle;
    }
    xpb_plugin_query_fn query;
    memcpy(&query, &sym, sizeof query); /* POSIX: object pointer to function pointer */

    const xpb_plugin_descriptor *d = NULL;
    xpb_guard_enter_file(path, XPB_PLUGIN_QUERY_SYMBOL);
    xpb_status qs = query(&d, XPB_ABI_MAJOR, XPB_ABI_MINOR, xpb_log_host_services());
    xpb_guard_leave();
    if (!check_descriptor(d, qs, why, sizeof why)) {
        st = add_problem(r, "%s: %s; skipped", path, why);
        goto close_handle;
    }

    for (size_t i = 0; i < r->n_plugins; i++) {
        const struct plugin_entry *e = &r->plugins[i];
        if (e->desc->kind == d->kind && strcmp(e->desc->name, d->name) == 0) {
            char first[384];
            describe(why, sizeof why, d);
            describe(first, sizeof first, e->desc);
            st = add_problem(r, "%s: %s has the same name as %s from %s, loaded first; skipped",
                             path, why, first, e->path);
            goto close_handle;
        }
    }

    struct plugin_entry *plugins =
        grow(r->plugins, &r->cap_plugins, r->n_plugins + 1, sizeof *plugins);
    if (!plugins) {
        st = XPB_OUT_OF_MEMORY;
        goto close_handle;
    }
    r->plugins = plugins;
    char *copy = strdup(path);
    if (!copy) {
        st = XPB_OUT_OF_MEMORY;
        goto close_handle;
    }
    r->plugins[r->n_plugins++] = (struct plugin_entry){copy, handle, d};
    xpb_guard_name(d->api, xpb_plugin_kind_name(d->kind), d->name);
    xpb_log(XPB_LOG_DEBUG, "loader", "loaded %s %s %s (ABI %u.%u) from %s",
            xpb_plugin_kind_name(d->kind), d->name, d->version, d->abi_major, d->abi_minor, path);
    return XPB_OK;

close_handle:
    unload(handle, path);
    return st;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int is_plugin_file_name(const char *name)
{
    size_t len = strlen(name), slen = strlen(PLUGIN_SUFFIX);
    return name[0] != '.' && len > slen && strcmp(name + len - slen, PLUGIN_SUFFIX) == 0;
}

/* Loads every *.so regular file of `dir`, sorted by name. */
static xpb_status load_dir(xpb_registry *r, const char *dir)
{
    xpb_status st = XPB_OK;
    char **names = NULL;
    size_t n = 0, cap = 0;

    DIR *d = opendir(dir);
    if (!d)
        return add_problem(r, "%s: cannot read plugin folder: %s; skipped", dir, strerror(errno));
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) {
        if (!is_plugin_file_name(ent->d_name))
            continue;
        char **more = grow(names, &cap, n + 1, sizeof *more);
        if (!more) {
            st = XPB_OUT_OF_MEMORY;
            goto free_names;
        }
        names = more;
        if (!(names[n] = strdup(ent->d_name))) {
            st = XPB_OUT_OF_MEMORY;
            goto free_names;
        }
        n++;
    }
    closedir(d);
    d = NULL;
    if (n > 1)
        qsort(names, n, sizeof *names, compare_names);

    size_t dlen = strlen(dir);
    const char *sep = dlen > 0 && dir[dlen - 1] == '/' ? "" : "/";
    for (size_t i = 0; i < n && st == XPB_OK; i++) {
        char *path = format("%s%s%s", dir, sep, names[i]);
        if (!path) {
            st = XPB_OUT_OF_MEMORY;
            break;
        }
        struct stat sb;
        /* Folders or sockets named *.so are not plugins; neither are dangling links. */
        if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode))
            st = load_file(r, path);
        free(path);
    }

free_names:
    if (d)
        closedir(d);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return st;
}

xpb_status xpb_registry_load(xpb_registry **out, const char *const *dirs, size_t n_dirs,
                             xpb_err *err)
{
    if (!out)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "xpb_registry_load: out is NULL");
    *out = NULL;
    if (n_dirs > 0 && !dirs)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "xpb_registry_load: dirs is NULL");
    for (size_t i = 0; i < n_dirs; i++)
        if (!dirs[i])
            return xpb_err_set(err, XPB_INVALID_ARGUMENT,
                               "xpb_registry_load: plugin folder %zu is NULL", i);

    xpb_registry *r = calloc(1, sizeof *r);
    if (!r)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory loading plugins");
    for (size_t i = 0; i < n_dirs; i++) {
        if (load_dir(r, dirs[i]) != XPB_OK) {
            xpb_registry_free(r);
            return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory loading plugins from %s",
                               dirs[i]);
        }
    }
    *out = r;
    return XPB_OK;
}

void xpb_registry_free(xpb_registry *r)
{
    if (!r)
        return;
    for (size_t i = r->n_plugins; i-- > 0;) {
        xpb_guard_forget(r->plugins[i].desc->api);
        unload(r->plugins[i].handle, r->plugins[i].path);
        free(r->plugins[i].path);
    }
    free(r->plugins);
    for (size_t i = 0; i < r->n_problems; i++)
        free(r->problems[i]);
    free(r->problems);
    free(r);
}

/* ---- queries ---- */

size_t xpb_registry_count(const xpb_registry *r)
{
    return r ? r->n_plugins : 0;
}

const xpb_plugin_descriptor *xpb_registry_at(const xpb_registry *r, size_t i, const char **path)
{
    if (!r || i >= r->n_plugins)
        return NULL;
    if (path)
        *path = r->plugins[i].path;
    return r->plugins[i].desc;
}

const xpb_plugin_descriptor *xpb_registry_find(const xpb_registry *r, uint32_t kind,
                                               const char *name)
{
    if (!r || !name)
        return NULL;
    for (size_t i = 0; i < r->n_plugins; i++) {
        const xpb_plugin_descriptor *d = r->plugins[i].desc;
        if (d->kind == kind && strcmp(d->name, name) == 0)
            return d;
    }
    return NULL;
}

const xpb_backend_api *xpb_registry_backend(const xpb_registry *r, const char *name)
{
    const xpb_plugin_descriptor *d = xpb_registry_find(r, XPB_PLUGIN_BACKEND, name);
    return d ? d->api : NULL;
}

const xpb_model_api *xpb_registry_model(const xpb_registry *r, const char *name)
{
    const xpb_plugin_descriptor *d = xpb_registry_find(r, XPB_PLUGIN_MODEL, name);
    return d ? d->api : NULL;
}

size_t xpb_registry_problem_count(const xpb_registry *r)
{
    return r ? r->n_problems : 0;
}

const char *xpb_registry_problem(const xpb_registry *r, size_t i)
{
    return r && i < r->n_problems ? r->problems[i] : NULL;
}

/* ---- the default search path ---- */

struct strv {
    char **v;
    size_t n, cap;
};

/* Appends the canonical form of `dir` when it is an existing folder not yet in the list;
 * anything else is left out silently. Takes nothing over: `dir` stays the caller's. */
static xpb_status strv_add_dir(struct strv *s, const char *dir)
{
    char *real = realpath(dir, NULL);
    if (!real)
        return errno == ENOMEM ? XPB_OUT_OF_MEMORY : XPB_OK;
    struct stat sb;
    if (stat(real, &sb) != 0 || !S_ISDIR(sb.st_mode))
        goto free_real;
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i], real) == 0)
            goto free_real;
    char **v = grow(s->v, &s->cap, s->n + 2, sizeof *v);
    if (!v) {
        free(real);
        return XPB_OUT_OF_MEMORY;
    }
    s->v = v;
    s->v[s->n++] = real;
    s->v[s->n] = NULL;
    return XPB_OK;

free_real:
    free(real);
    return XPB_OK;
}

/* The folder of the running executable (malloc'ed), or NULL when it cannot be found. */
static char *exe_dir(void)
{
    size_t size = 256;
    for (;;) {
        char *buf = malloc(size);
        if (!buf)
            return NULL;
        ssize_t len = readlink("/proc/self/exe", buf, size);
        if (len < 0) {
            free(buf);
            return NULL;
        }
        if ((size_t)len < size) {
            buf[len] = '\0';
            char *slash = strrchr(buf, '/');
            if (!slash) {
                free(buf);
                return NULL;
            }
            slash[slash == buf ? 1 : 0] = '\0';
            return buf;
        }
        free(buf);
        size *= 2;
    }
}

/* "<exe dir>/../<install rel>" with one ".." per component of XPB_BINDIR_REL, or NULL
 * (no memory, or a layout whose prefix cannot be derived). The caller frees it. */
static char *install_dir(const char *exe)
{
    if (XPB_PLUGIN_INSTALL_REL[0] == '/')
        return strdup(XPB_PLUGIN_INSTALL_REL);
    if (XPB_BINDIR_REL[0] == '/')
        return NULL;
    size_t ups = 0;
    const char *p = XPB_BINDIR_REL;
    while (*p) {
        size_t len = strcspn(p, "/");
        if (len > 0 && !(len == 1 && p[0] == '.'))
            ups++;
        p += len;
        if (*p == '/')
            p++;
    }
    char *s = malloc(strlen(exe) + 3 * ups + strlen(XPB_PLUGIN_INSTALL_REL) + 2);
    if (!s)
        return NULL;
    strcpy(s, exe);
    for (size_t i = 0; i < ups; i++)
        strcat(s, "/..");
    strcat(s, "/");
    strcat(s, XPB_PLUGIN_INSTALL_REL);
    return s;
}

xpb_status xpb_registry_default_dirs(char ***out)
{
    if (!out)
        return XPB_INVALID_ARGUMENT;
    *out = NULL;
    struct strv s = {0};
    xpb_status st = XPB_OK;
    char *exe = exe_dir();
    char *env_copy = NULL;

    if (!(s.v = grow(NULL, &s.cap, 1, sizeof *s.v))) {
        st = XPB_OUT_OF_MEMORY;
        goto free_all;
    }
    s.v[0] = NULL;

    if (exe) {
        char *build = format("%s/plugins", exe);
        if (!build) {
            st = XPB_OUT_OF_MEMORY;
            goto free_all;
        }
        st = strv_add_dir(&s, build);
        free(build);
        if (st)
            goto free_all;
    }

    const char *env = getenv("XPB_PLUGIN_PATH");
    if (env && *env) {
        if (!(env_copy = strdup(env))) {
            st = XPB_OUT_OF_MEMORY;
            goto free_all;
        }
        char *save = NULL;
        for (char *tok = strtok_r(env_copy, ":", &save); tok; tok = strtok_r(NULL, ":", &save))
            if ((st = strv_add_dir(&s, tok)))
                goto free_all;
    }

    if (exe) {
        char *inst = install_dir(exe);
        if (inst) {
            st = strv_add_dir(&s, inst);
            free(inst);
            if (st)
                goto free_all;
        }
    }

    *out = s.v;
    s.v = NULL;

free_all:
    free(env_copy);
    free(exe);
    xpb_strv_free(s.v);
    return st;
}

void xpb_strv_free(char **v)
{
    if (!v)
        return;
    for (char **p = v; *p; p++)
        free(*p);
    free(v);
}
