/* load_check <folder> <backend>: loads the plugin folder with the host's loader and checks
 * that it holds backend <backend> with no problems, and that the backend opens device 0.
 * Used by the install test on plugins built out of tree. Exit status 0 on success. */
#include <stdio.h>

#include "loader.h"

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
    const xpb_backend_api *api = xpb_registry_backend(r, argv[2]);
    if (!api) {
        fprintf(stderr, "no backend '%s' in %s\n", argv[2], argv[1]);
        ok = 0;
    } else {
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
