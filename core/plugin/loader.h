/* The plugin loader: finds plugin shared objects, opens them, checks what they answer
 * against the ABI rules (docs/plugin-abi.md) and keeps the ones that pass in a registry.
 * A bad plugin never fails the whole load: it is skipped and recorded as a "problem" line
 * that names the file (and, when known, the plugin and both ABI versions). */
#ifndef XPB_CORE_LOADER_H
#define XPB_CORE_LOADER_H

#include <stddef.h>
#include <stdint.h>

#include <xpubench/xpubench.h>

#include "base/errmsg.h"

typedef struct xpb_registry xpb_registry; /* opaque: loaded plugins and load problems */

/* Loads every *.so file of each folder of `dirs`, folders in the given order, files sorted by
 * name (byte order) within a folder. The first plugin of a given kind and name wins; a later
 * one with the same name is skipped. Plugins that fail a check, and folders that cannot be
 * read, are recorded as problems (xpb_registry_problem) and do not make the load fail.
 * Returns XPB_INVALID_ARGUMENT (bad arguments) or XPB_OUT_OF_MEMORY with a message in `err`,
 * otherwise XPB_OK and a registry in *out, owned by the caller (xpb_registry_free). */
xpb_status xpb_registry_load(xpb_registry **out, const char *const *dirs, size_t n_dirs,
                             xpb_err *err);

/* The default plugin search path, in this order:
 *   1. <folder of the running executable>/plugins      (the build tree)
 *   2. every entry of $XPB_PLUGIN_PATH (':'-separated; empty entries ignored)
 *   3. <install prefix>/XPB_PLUGIN_INSTALL_REL, the prefix being the executable's folder
 *      with XPB_BINDIR_REL taken off (e.g. /usr/local/bin -> /usr/local/lib/xpubench/plugins)
 * Folders that do not exist are left out silently; every folder is canonicalised (realpath)
 * and appears once. *out is a NULL-terminated array owned by the caller (xpb_strv_free).
 * Returns XPB_INVALID_ARGUMENT when out is NULL, XPB_OUT_OF_MEMORY, or XPB_OK. */
xpb_status xpb_registry_default_dirs(char ***out);

/* Frees a NULL-terminated array of strings and the strings; NULL is a no-op. */
void xpb_strv_free(char **v);

/* Number of plugins loaded. */
size_t xpb_registry_count(const xpb_registry *r);

/* The i-th loaded plugin (load order), or NULL when i is out of range. The descriptor belongs
 * to the plugin and *path (when path is not NULL) to the registry; both stay valid until
 * xpb_registry_free. */
const xpb_plugin_descriptor *xpb_registry_at(const xpb_registry *r, size_t i, const char **path);

/* The plugin of `kind` (xpb_plugin_kind) named `name`, or NULL when there is none. Owned by
 * the plugin; valid until xpb_registry_free. */
const xpb_plugin_descriptor *xpb_registry_find(const xpb_registry *r, uint32_t kind,
                                               const char *name);

/* The function table of the backend / model plugin `name`, or NULL when there is none.
 * Owned by the plugin; valid until xpb_registry_free. Members added after ABI 1.0 must be
 * read through XPB_HAS_MEMBER / XPB_MEMBER_OR (the plugin may be older than the host). */
const xpb_backend_api *xpb_registry_backend(const xpb_registry *r, const char *name);
const xpb_model_api *xpb_registry_model(const xpb_registry *r, const char *name);

/* Number of problems recorded by the load, and the i-th one ("<file>: <what>; skipped"),
 * or NULL when i is out of range. Owned by the registry; valid until xpb_registry_free. */
size_t xpb_registry_problem_count(const xpb_registry *r);
const char *xpb_registry_problem(const xpb_registry *r, size_t i);

/* Unloads every plugin (dlclose, in reverse load order) and frees the registry. Every
 * pointer obtained from it becomes invalid. NULL is a no-op. */
void xpb_registry_free(xpb_registry *r);

/* The capability bits of a loaded plugin as this host can use them (docs/plugin-abi.md,
 * "Capability bits, revisited"): the descriptor's XPB_CAP_FUSION and XPB_CAP_THREADS, plus
 * XPB_CAP_PROFILING, XPB_CAP_MEMORY_STATS and XPB_CAP_ENERGY exactly when the matching
 * optional entry point of a backend is present (non-NULL within the table's struct_size). */
uint64_t xpb_plugin_caps(const xpb_plugin_descriptor *d);

/* The highest op set the plugin knows: its descriptor's `opset` (ABI 1.1), 1 for a plugin
 * that does not say (ABI 1.0). */
uint32_t xpb_plugin_opset(const xpb_plugin_descriptor *d);

/* "backend", "model" or "unknown"; static. */
const char *xpb_plugin_kind_name(uint32_t kind);

#endif
