/* load_check <folder> <backend>: loads the plugin folder with the host's loader and checks
 * that it holds backend <backend> with no problems, that the backend lists its devices the way
 * the host asks for them (device_count / describe_device when it has them, else by opening
 * device 0) and that it opens device 0. Used by the install test on plugins built out of tree.
 * Exit status 0 on success. */
#include <stdio.h>

#include "plugin/devices.h"
#include "plugin/loader.h"

/* Prints what the host's device listing finds; 1 when the backend has at least one device. */
static int list_devices(const xpb_plugin_descriptor *d)
{
    static xpb_device_list list;
    xpb_status st = xpb_backend_devices(&list, d);
    if (st != XPB_OK || list.count == 0) {
        fprintf(stderr, "devices: %s (%s)\n", list.reason, xpb_strerror(st));
        return 0;
    }
    for (uint32_t i = 0; i < list.described; i++)
        printf("device %u: '%s' (%s)\n", i, list.info[i].name,
               xpb_device_kind_name(list.info[i].kind));
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s <plugin folder> <backend name>\n", argv[0]);
        return 2;
    }
    const char *dirs[] = {argv[1]};
    xpb_registry *r = NULL;
    xpb_err err;
    if (xpb_registry_load(&r, dirs, 1, &err) != XPB_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    int ok = 1;
    for (size_t i = 0; i < xpb_registry_problem_count(r); i++) {
        fprintf(stderr, "problem: %s\n", xpb_registry_problem(r, i));
        ok = 0;
    }
    const xpb_plugin_descriptor *d = xpb_registry_find(r, XPB_PLUGIN_BACKEND, argv[2]);
    const xpb_backend_api *api = d ? d->api : NULL;
    if (!api) {
        fprintf(stderr, "no backend '%s' in %s\n", argv[2], argv[1]);
        ok = 0;
    } else {
        ok &= list_devices(d);
        xpb_backend *be = NULL;
        xpb_device_info info = {.struct_size = sizeof info};
        if (api->open(&be, 0) != XPB_OK) {
            fprintf(stderr, "open: %s\n", api->last_error(NULL));
            ok = 0;
        } else {
            if (api->device_info(be, &info) != XPB_OK) {
                fprintf(stderr, "device_info: %s\n", api->last_error(be));
                ok = 0;
            }
            api->close(be);
            printf("%s: backend '%s' on '%s'\n", argv[1], argv[2], info.name);
        }
    }
    xpb_registry_free(r);
    return ok ? 0 : 1;
}
