/* "crash_ref": the reference backend (loaded from WRAPPED_INNER) that crashes on demand, so
 * that tests/test_crash.c can prove a crash inside a plugin is named (core/plugin/guard.h).
 * Without $XPB_FAKE_CRASH it is exactly cpu_ref, so every other test may load it.
 *
 * XPB_FAKE_CRASH=ENTRY[:OP[:HOW]] crashes in entry point ENTRY (query, open, device_count,
 * describe_device, compile, write, run, read); for compile and run only when the program holds
 * an op of kind OP (its xpb_op_name, e.g. CONV2D_BWD_DATA; empty or absent: any program). HOW
 * is segv (a store through a null pointer, the default) or abort. */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wrapped_backend.h"

/* Whether $XPB_FAKE_CRASH names `entry`, and (when p is not NULL and an op is named) p holds
 * an op of that kind. */
static int asked(const char *entry, const xpb_program *p)
{
    const char *spec = getenv("XPB_FAKE_CRASH");
    size_t n = strlen(entry);
    if (!spec || strncmp(spec, entry, n) != 0 || (spec[n] && spec[n] != ':'))
        return 0;
    const char *op = spec[n] == ':' ? spec + n + 1 : "";
    size_t op_len = strcspn(op, ":");
    if (!p || op_len == 0)
        return 1;
    for (uint32_t i = 0; i < p->n_ops; i++) {
        const char *kind = xpb_op_name(xpb_program_op(p, i)->kind);
        if (strlen(kind) == op_len && strncmp(kind, op, op_len) == 0)
            return 1;
    }
    return 0;
}

/* A real fault, not a sanitizer's report: the store goes through a pointer the compiler cannot
 * see is null. */
__attribute__((no_sanitize("address", "undefined"))) static void crash(void)
{
    const char *how = strrchr(getenv("XPB_FAKE_CRASH"), ':');
    if (how && strcmp(how + 1, "abort") == 0)
        abort();
    volatile uintptr_t address = 0;
    *(volatile int *)address = 1;
}

static xpb_status c_open(xpb_backend **out, uint32_t device)
{
    if (asked("open", NULL))
        crash();
    return inner->open(out, device);
}

static xpb_status c_device_count(uint32_t *count)
{
    if (asked("device_count", NULL))
        crash();
    xpb_status (*count_fn)(uint32_t *) = XPB_MEMBER_OR(inner, xpb_backend_api, device_count, NULL);
    *count = 1;
    return count_fn ? count_fn(count) : XPB_OK;
}

static xpb_status c_describe_device(uint32_t index, xpb_device_info *out)
{
    if (asked("describe_device", NULL))
        crash();
    xpb_status (*describe)(uint32_t, xpb_device_info *) =
        XPB_MEMBER_OR(inner, xpb_backend_api, describe_device, NULL);
    return describe ? describe(index, out) : XPB_NO_DEVICE;
}

static xpb_status c_compile(xpb_executable **out, xpb_backend *be, const xpb_program *p,
                            const xpb_compile_options *o)
{
    if (asked("compile", p))
        crash();
    return wrapped_compile(out, be, p, o);
}

static xpb_status c_write(xpb_executable *exe, uint32_t t, const void *data, size_t bytes)
{
    if (asked("write", NULL))
        crash();
    return wrapped_write(exe, t, data, bytes);
}

static xpb_status c_run(xpb_executable *exe, uint32_t phase)
{
    if (asked("run", exe->program))
        crash();
    return wrapped_run(exe, phase);
}

static xpb_status c_read(xpb_executable *exe, uint32_t t, void *data, size_t bytes)
{
    if (asked("read", NULL))
        crash();
    return wrapped_read(exe, t, data, bytes);
}

static const xpb_plugin_descriptor descriptor = {
    .struct_size = sizeof(xpb_plugin_descriptor),
    .abi_major = XPB_ABI_MAJOR,
    .abi_minor = XPB_ABI_MINOR,
    .kind = XPB_PLUGIN_BACKEND,
    .name = "crash_ref",
    .version = "1.0.0",
    .description = "cpu_ref that crashes on demand (tests only)",
    .api = &wrapped_api,
    .opset = XPB_OPSET_VERSION,
};

XPB_PLUGIN_QUERY
{
    if (asked("query", NULL))
        crash();
    wrapped_api.open = c_open;
    wrapped_api.device_count = c_device_count;
    wrapped_api.describe_device = c_describe_device;
    wrapped_api.compile = c_compile;
    wrapped_api.write = c_write;
    wrapped_api.run = c_run;
    wrapped_api.read = c_read;
    return wrapped_query(out, &descriptor, host_major, host_minor, host);
}
