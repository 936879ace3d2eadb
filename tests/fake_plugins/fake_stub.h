/* Shared pieces of the fake plugins used by tests/test_loader.c: a do-nothing backend whose
 * handles are real allocations (so that ASan sees a leak if the host loses one). Linked into
 * each fake backend; hidden, like everything in a plugin but xpb_plugin_query. */
#ifndef XPB_FAKE_STUB_H
#define XPB_FAKE_STUB_H

#include <xpubench/xpubench.h>

xpb_status fake_open(xpb_backend **out, uint32_t device_index);
void fake_close(xpb_backend *backend);
const char *fake_last_error(const xpb_backend *backend);
xpb_status fake_device_info(xpb_backend *backend, xpb_device_info *out);
xpb_status fake_compile(xpb_executable **out, xpb_backend *backend, const xpb_program *program,
                        const xpb_compile_options *options);
void fake_destroy(xpb_executable *exe);
const char *fake_exe_last_error(const xpb_executable *exe);
xpb_status fake_write(xpb_executable *exe, uint32_t tensor, const void *data, size_t bytes);
xpb_status fake_read(xpb_executable *exe, uint32_t tensor, void *data, size_t bytes);
xpb_status fake_run(xpb_executable *exe, uint32_t phase);
xpb_status fake_synchronize(xpb_executable *exe);
xpb_status fake_profile_read(xpb_executable *exe, xpb_op_profile *out, uint32_t capacity,
                             uint32_t *count);
xpb_status fake_memory_stats(xpb_executable *exe, xpb_memory_stats *out);
xpb_status fake_energy_read(xpb_backend *backend, double *joules);

/* Designated initialisers of every required member of xpb_backend_api. */
#define FAKE_REQUIRED_ENTRY_POINTS                                                                 \
    .open = fake_open, .close = fake_close, .last_error = fake_last_error,                         \
    .device_info = fake_device_info, .compile = fake_compile, .destroy = fake_destroy,             \
    .exe_last_error = fake_exe_last_error, .write = fake_write, .read = fake_read,                 \
    .run = fake_run, .synchronize = fake_synchronize

/* The device name device_info reports: "fake device of <FAKE_NAME>" (set per plugin). */
#define FAKE_DEVICE_PREFIX "fake device of "

#endif
