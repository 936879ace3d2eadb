/* The cuda plugin on a machine without an NVIDIA driver (this project's machine), through the
 * ABI and through every command a user types:
 * - the plugin is a loader that maps none of the CUDA libraries until its table is first called;
 *   the backend proper behind it (cuda/backend_cuda_impl.so) loads with RTLD_NOW (it links
 *   neither libcuda nor NVML) and exports only xpb_plugin_query (the static CUDA runtime stays
 *   hidden); the table is the whole ABI 1.1 one; without its backend proper the loader
 *   answers "no device" naming the file;
 * - device_count, describe_device and open answer XPB_NO_DEVICE with the reason in
 *   last_error(NULL), never abort;
 * - `xpubench list` names the plugin and why it has no device; `run` of a scenario asking for
 *   cuda reports the run unsupported with "no device" and the reason and exits 0 (docs/cli.md);
 *   `conformance --backend cuda` exits 4 naming the reason; `info` and `validate` still work.
 * On a machine with a driver the no-driver checks are skipped (conformance proves the backend
 * there). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include <xpubench/xpubench.h>

#include "cli_harness.h"

#define PLUGIN XPB_TEST_PLUGIN_DIR "/backend_cuda.so"
#define PROPER XPB_TEST_PLUGIN_DIR "/cuda/backend_cuda_impl.so"

/* Whether the process has a file whose path contains `name` mapped. */
static int mapped(const char *name)
{
    FILE *f = fopen("/proc/self/maps", "r");
    assert_non_null(f);
    char line[1024];
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, name) != NULL;
    fclose(f);
    return found;
}

static int driver_present(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return 0;
    dlclose(h);
    return 1;
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/xpb_cuda_host_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* ---- the plugin through the ABI ---- */

/* The backend table of the plugin at `path`, loaded into *handle (the caller closes it). */
static const xpb_backend_api *backend_at(void **handle, const char *path)
{
    *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!*handle)
        fail_msg("dlopen %s: %s", path, dlerror());
    xpb_plugin_query_fn q = (xpb_plugin_query_fn)dlsym(*handle, XPB_PLUGIN_QUERY_SYMBOL);
    assert_non_null(q);
    const xpb_plugin_descriptor *d = NULL;
    assert_int_equal(q(&d, XPB_ABI_MAJOR, XPB_ABI_MINOR, NULL), XPB_OK);
    return d->api;
}

/* device_count's "no device" and its reason (last_error(NULL), owned by the plugin). */
static const char *no_device_reason(const xpb_backend_api *api)
{
    uint32_t n = 99;
    assert_int_equal(api->device_count(&n), XPB_NO_DEVICE);
    assert_int_equal(n, 0);
    return api->last_error(NULL);
}

static void test_plugin_loads(void **state)
{
    (void)state;
    /* first in this process: nothing of the CUDA libraries is mapped yet */
    assert_false(mapped("libcublasLt"));
    void *h = dlopen(PLUGIN, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        fail_msg("dlopen %s: %s", PLUGIN, dlerror());
    xpb_plugin_query_fn q = (xpb_plugin_query_fn)dlsym(h, XPB_PLUGIN_QUERY_SYMBOL);
    assert_non_null(q);
    /* the plugin is the loader: loading it and asking who it is maps none of the CUDA
     * libraries (cuBLASLt alone is ~150 MiB resident); the backend proper comes on the first
     * call to its table */
    const xpb_plugin_descriptor *d = NULL;
    assert_int_equal(q(&d, XPB_ABI_MAJOR, XPB_ABI_MINOR, NULL), XPB_OK);
    assert_false(mapped("libcublasLt"));
    assert_false(mapped("backend_cuda_impl.so"));
    /* the backend proper keeps the static CUDA runtime and its own functions inside */
    void *proper = dlopen(PROPER, RTLD_NOW | RTLD_LOCAL);
    if (!proper)
        fail_msg("dlopen %s: %s", PROPER, dlerror());
    assert_non_null(dlsym(proper, XPB_PLUGIN_QUERY_SYMBOL));
    assert_null(dlsym(proper, "cudaMalloc"));
    assert_null(dlsym(proper, "cudaGetDeviceCount"));
    assert_null(dlsym(proper, "cux_launch"));
    assert_null(dlsym(proper, "cux_plan_build"));
    dlclose(proper);
    assert_int_equal(q(&d, XPB_ABI_MAJOR, XPB_ABI_MINOR, NULL), XPB_OK);
    assert_string_equal(d->name, "cuda");
    assert_int_equal(d->kind, XPB_PLUGIN_BACKEND);
    assert_true(d->caps & XPB_CAP_FUSION);
    assert_int_equal(d->opset, XPB_OPSET_VERSION);
    assert_int_equal(q(&d, XPB_ABI_MAJOR + 1, 0, NULL), XPB_INCOMPATIBLE);
    const xpb_backend_api *api = d->api;
    assert_int_equal(api->struct_size, sizeof(xpb_backend_api));
    assert_non_null(api->profile_read);
    assert_non_null(api->memory_stats);
    assert_non_null(api->energy_read);
    assert_non_null(api->device_count);
    assert_non_null(api->describe_device);
    assert_non_null(api->write_async);
    assert_non_null(api->host_alloc);
    assert_non_null(api->host_free);
    dlclose(h);
}

static void test_no_device_abi(void **state)
{
    (void)state;
    if (driver_present()) {
        printf("  an NVIDIA driver is present: the no-driver answers are not checked here\n");
        skip();
    }
    void *h;
    const xpb_backend_api *api = backend_at(&h, PLUGIN);
    const char *why = no_device_reason(api);
    assert_non_null(strstr(why, "no NVIDIA driver"));
    assert_non_null(strstr(why, "libcuda.so.1"));
    assert_non_null(strstr(why, "580")); /* what to install */
    xpb_device_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    assert_int_equal(api->describe_device(0, &info), XPB_NO_DEVICE);
    assert_non_null(strstr(api->last_error(NULL), "no NVIDIA driver"));
    xpb_backend *be = (xpb_backend *)&info; /* must be reset */
    assert_int_equal(api->open(&be, 0), XPB_NO_DEVICE);
    assert_null(be);
    assert_non_null(strstr(api->last_error(NULL), "no device"));
    assert_non_null(strstr(api->last_error(NULL), "no NVIDIA driver"));
    assert_int_equal(api->open(&be, 3), XPB_NO_DEVICE);
    assert_int_equal(api->open(NULL, 0), XPB_INVALID_ARGUMENT);
    assert_int_equal(api->device_count(NULL), XPB_INVALID_ARGUMENT);
    api->close(NULL);
    api->destroy(NULL);
    assert_non_null(api->exe_last_error(NULL));
    assert_int_equal(api->run(NULL, 0), XPB_INVALID_ARGUMENT);
    assert_int_equal(api->energy_read(NULL, NULL), XPB_INVALID_ARGUMENT);
    dlclose(h);
}

/* The loader without its backend proper (a copy of it alone in a folder): no device, and the
 * reason names the file that did not load. */
static void test_loader_without_backend(void **state)
{
    (void)state;
    char copy[400], cmd[1000];
    snprintf(copy, sizeof copy, "%s/lonely/backend_cuda.so", tmpdir);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/lonely' && cp '%s' '%s'", tmpdir, PLUGIN, copy);
    assert_int_equal(system(cmd), 0);
    void *h;
    const xpb_backend_api *api = backend_at(&h, copy);
    const char *why = no_device_reason(api);
    if (!strstr(why, "lonely/cuda/backend_cuda_impl.so did not load"))
        fail_msg("unexpected reason: %s", why);
    xpb_backend *be = (xpb_backend *)&h;
    assert_int_equal(api->open(&be, 0), XPB_NO_DEVICE);
    assert_null(be);
    assert_int_equal(api->run(NULL, 0), XPB_INVALID_ARGUMENT);
    assert_string_equal(api->exe_last_error(NULL), why);
    api->close(NULL);
    dlclose(h);
}

/* ---- the commands ---- */

static void test_cli_list(void **state)
{
    (void)state;
    char *out, *err;
    int rc = xpb(&out, &err, "list", NULL);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "cuda"));
    assert_non_null(strstr(out, "backend_cuda.so"));
    if (!driver_present())
        assert_non_null(strstr(out, "no NVIDIA driver"));
    free(out);
    free(err);
    rc = xpb(&out, &err, "list", "--json", NULL);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "\"cuda\""));
    free(out);
    free(err);
}

static void test_cli_run(void **state)
{
    (void)state;
    if (driver_present())
        skip();
    char scenario[300], results[300];
    snprintf(scenario, sizeof scenario, "%s/cuda.yaml", tmpdir);
    snprintf(results, sizeof results, "%s/cuda.json", tmpdir);
    FILE *f = fopen(scenario, "w");
    assert_non_null(f);
    fputs("name: cuda-no-device\n"
          "defaults: {model: conv6, backend: cuda, batch: 2, warmup: 1, min_time: 0, seed: 3,\n"
          "           allow_unsupported: true}\n"
          "runs:\n"
          "  - name: train\n"
          "    mode: train\n"
          "    min_steps: 2\n"
          "  - name: train-fp16\n"
          "    mode: train\n"
          "    precision: fp16-mixed\n"
          "    min_steps: 2\n",
          f);
    fclose(f);
    char *out, *err;
    int rc = xpb(&out, &err, "run", scenario, "-o", results, NULL);
    /* an unsupported run is a failure (exit 6) unless the scenario allows it (docs/cli.md) */
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "unsupported"));
    assert_non_null(strstr(out, "no device"));
    assert_non_null(strstr(out, "no NVIDIA driver"));
    free(out);
    free(err);
    json_error_t je;
    json_t *doc = json_load_file(results, 0, &je);
    assert_non_null(doc);
    json_t *runs = json_object_get(doc, "runs");
    assert_int_equal(json_array_size(runs), 2);
    for (size_t i = 0; i < 2; i++) {
        json_t *r = json_array_get(runs, i);
        assert_string_equal(json_string_value(json_object_get(r, "status")), "unsupported");
        const char *e = json_string_value(json_object_get(r, "error"));
        assert_non_null(e);
        assert_non_null(strstr(e, "no device"));
        assert_non_null(strstr(e, "no NVIDIA driver"));
    }
    json_decref(doc);
}

static void test_cli_conformance(void **state)
{
    (void)state;
    if (driver_present())
        skip();
    char *out, *err;
    int rc = xpb(&out, &err, "conformance", "--backend", "cuda", "--quick", NULL);
    assert_int_equal(rc, 4); /* docs/cli.md: a plugin the command needs is unusable */
    assert_non_null(strstr(err, "backend 'cuda': open: no device: no NVIDIA driver"));
    assert_null(strstr(err, "cuda: ")); /* the host names the plugin; the plugin does not */
    assert_non_null(strstr(err, "no NVIDIA driver"));
    free(out);
    free(err);
}

static void test_cli_info_validate(void **state)
{
    (void)state;
    char *out, *err;
    int rc = xpb(&out, &err, "info", "conv6", NULL);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "conv6"));
    free(out);
    free(err);
    rc = xpb(&out, &err, "validate", XPB_TEST_SOURCE_DIR "/configs/study-gpu.yaml", NULL);
    if (rc != 0)
        fail_msg("validate configs/study-gpu.yaml: %d\n%s%s", rc, out, err);
    free(out);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plugin_loads),
        cmocka_unit_test(test_no_device_abi),
        cmocka_unit_test(test_loader_without_backend),
        cmocka_unit_test(test_cli_list),
        cmocka_unit_test(test_cli_run),
        cmocka_unit_test(test_cli_conformance),
        cmocka_unit_test(test_cli_info_validate),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
