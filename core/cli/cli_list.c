/* `xpubench list [--json]`: the plugins that loaded with each backend's devices (or why it
 * has none), and the plugins that were skipped. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_common.h"
#include "plugin/devices.h"
#include "plugin/guard.h"

/* The devices of backend `d` as JSON: {"count", "devices": [...], "no_device": reason|null}. */
static json_t *devices_json(const xpb_plugin_descriptor *d)
{
    xpb_device_list list;
    xpb_status st = xpb_backend_devices(&list, d);
    json_t *j = json_object(), *devs = json_array();
    for (uint32_t i = 0; i < list.described; i++) {
        const xpb_device_info *info = &list.info[i];
        json_array_append_new(devs, json_pack("{s:i, s:s, s:s, s:I}", "index", (int)i, "name",
                                              info->name, "kind", xpb_device_kind_name(info->kind),
                                              "memory_bytes", (json_int_t)info->memory_bytes));
    }
    json_object_set_new(j, "count", json_integer(list.count));
    json_object_set_new(j, "devices", devs);
    json_object_set_new(j, "no_device",
                        list.count == 0 || st != XPB_OK ? json_string(list.reason) : json_null());
    return j;
}

/* One line per device of backend `d`, or the reason it has none. */
static void print_devices(const xpb_plugin_descriptor *d)
{
    xpb_device_list list;
    xpb_status st = xpb_backend_devices(&list, d);
    if (st != XPB_OK) {
        printf("                 devices: error: %s\n", list.reason);
        return;
    }
    if (list.count == 0) {
        printf("                 no device: %s\n", list.reason);
        return;
    }
    for (uint32_t i = 0; i < list.described; i++) {
        const xpb_device_info *info = &list.info[i];
        printf("                 device %u: %s, %s", i, xpb_device_kind_name(info->kind),
               info->name);
        if (info->memory_bytes)
            printf(", %.1f GiB", (double)info->memory_bytes / (1024.0 * 1024.0 * 1024.0));
        printf("\n");
    }
    if (list.count > list.described)
        printf("                 ... and %u more devices\n", list.count - list.described);
}

static int print_json(const xpb_registry *r)
{
    json_t *doc = json_object(), *plugins = json_array(), *problems = json_array();
    for (size_t i = 0; i < xpb_registry_count(r); i++) {
        const char *path;
        const xpb_plugin_descriptor *d = xpb_registry_at(r, i, &path);
        char abi[32];
        snprintf(abi, sizeof abi, "%u.%u", d->abi_major, d->abi_minor);
        json_t *p = json_object();
        json_object_set_new(p, "name", json_string(d->name));
        json_object_set_new(p, "kind", json_string(xpb_plugin_kind_name(d->kind)));
        json_object_set_new(p, "version", json_string(d->version ? d->version : ""));
        json_object_set_new(p, "abi", json_string(abi));
        json_object_set_new(p, "description", json_string(d->description ? d->description : ""));
        json_object_set_new(p, "path", json_string(path));
        json_object_set_new(p, "caps", json_integer((json_int_t)xpb_plugin_caps(d)));
        json_object_set_new(p, "opset", json_integer(xpb_plugin_opset(d)));
        if (d->kind == XPB_PLUGIN_BACKEND)
            json_object_set_new(p, "devices", devices_json(d));
        json_array_append_new(plugins, p);
    }
    for (size_t i = 0; i < xpb_registry_problem_count(r); i++)
        json_array_append_new(problems, json_string(xpb_registry_problem(r, i)));
    json_object_set_new(doc, "plugins", plugins);
    json_object_set_new(doc, "skipped", problems);
    char *text = json_dumps(doc, JSON_INDENT(2));
    json_decref(doc);
    if (!text)
        return XPB_EXIT_FAILURE;
    puts(text);
    free(text);
    return XPB_EXIT_OK;
}

int xpb_cli_list(int argc, char **argv)
{
    int as_json = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            as_json = 1;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: xpubench list [--json]\n\nLists the backend and model plugins found on "
                   "the plugin search path, each backend's\ndevices (or why it has none), and the "
                   "plugins that were skipped with the reason.\n");
            return XPB_EXIT_OK;
        } else {
            fprintf(stderr, "xpubench list: unknown argument '%s'\n", argv[i]);
            return XPB_EXIT_USAGE;
        }
    }
    xpb_registry *r = xpb_cli_registry(1);
    if (!r)
        return XPB_EXIT_PLUGIN;
    int rc = XPB_EXIT_OK;
    xpb_guard_activity("during list");
    if (as_json) {
        rc = print_json(r);
    } else {
        static const uint32_t kinds[2] = {XPB_PLUGIN_BACKEND, XPB_PLUGIN_MODEL};
        for (int k = 0; k < 2; k++) {
            printf("%s:\n", k == 0 ? "backends" : "models");
            for (size_t i = 0; i < xpb_registry_count(r); i++) {
                const char *path;
                const xpb_plugin_descriptor *d = xpb_registry_at(r, i, &path);
                if (d->kind != kinds[k])
                    continue;
                printf("  %-14s %-8s ABI %u.%u  %s\n                 %s\n", d->name,
                       d->version ? d->version : "", d->abi_major, d->abi_minor,
                       d->description ? d->description : "", path);
                fflush(stdout); /* what is printed survives a crash of the plugin's devices */
                if (d->kind == XPB_PLUGIN_BACKEND)
                    print_devices(d);
            }
        }
        if (xpb_registry_problem_count(r)) {
            printf("skipped:\n");
            for (size_t i = 0; i < xpb_registry_problem_count(r); i++)
                printf("  %s\n", xpb_registry_problem(r, i));
        }
    }
    xpb_registry_free(r);
    return rc;
}
