/* Environment capture (see env.h). */
#include "env.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <yaml.h>

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '"'))
        s[--n] = 0;
}

const char *xpb_env_cpu_model(char *buf, size_t size)
{
    snprintf(buf, size, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return buf;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            const char *colon = strchr(line, ':');
            if (colon) {
                snprintf(buf, size, "%s", colon + 2);
                trim(buf);
            }
            break;
        }
    }
    fclose(f);
    return buf;
}

/* Physical cores: distinct (physical id, core id) pairs; logical CPUs when unknown. */
static long physical_cores(json_t *flags_out)
{
    static const char *const wanted[] = {"sse4_2",      "avx",      "avx2",        "fma",
                                         "avx512f",     "avx512bw", "avx512_vnni", "avx512_bf16",
                                         "avx512_fp16", "amx_tile", "amx_bf16",    "amx_int8"};
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return -1;
    char line[8192];
    long pairs[1024][2], n = 0, phys = 0;
    int flags_done = 0;
    while (fgets(line, sizeof line, f)) {
        long v;
        if (sscanf(line, "physical id : %ld", &v) == 1)
            phys = v;
        else if (sscanf(line, "core id : %ld", &v) == 1) {
            int seen = 0;
            for (long i = 0; i < n; i++)
                if (pairs[i][0] == phys && pairs[i][1] == v)
                    seen = 1;
            if (!seen && n < 1024) {
                pairs[n][0] = phys;
                pairs[n][1] = v;
                n++;
            }
        } else if (!flags_done && strncmp(line, "flags", 5) == 0) {
            flags_done = 1;
            for (size_t w = 0; w < sizeof wanted / sizeof *wanted; w++) {
                char pat[64];
                snprintf(pat, sizeof pat, " %s", wanted[w]);
                const char *hit = strstr(line, pat);
                size_t len = strlen(pat);
                if (hit && (hit[len] == ' ' || hit[len] == '\n' || hit[len] == 0))
                    json_array_append_new(flags_out, json_string(wanted[w]));
            }
        }
    }
    fclose(f);
    return n;
}

static void os_name(char *buf, size_t size)
{
    snprintf(buf, size, "unknown");
    FILE *f = fopen("/etc/os-release", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "PRETTY_NAME=", 12) == 0) {
            snprintf(buf, size, "%s", line + 12 + (line[12] == '"'));
            trim(buf);
        }
    fclose(f);
}

uint64_t xpb_env_peak_rss(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (uint64_t)ru.ru_maxrss * 1024u;
}

json_t *xpb_env_collect(const xpb_registry *registry)
{
    char buf[512];
    struct utsname u;
    json_t *env = json_object(), *cpu = json_object(), *flags = json_array(), *libs = json_object(),
           *plugins = json_array();
    if (!env || !cpu || !flags || !libs || !plugins)
        goto fail;
    os_name(buf, sizeof buf);
    json_object_set_new(env, "os", json_string(buf));
    if (uname(&u) == 0) {
        snprintf(buf, sizeof buf, "%s %s %s", u.sysname, u.release, u.machine);
        json_object_set_new(env, "kernel", json_string(buf));
    } else {
        json_object_set_new(env, "kernel", json_string("unknown"));
    }
    long logical = sysconf(_SC_NPROCESSORS_ONLN);
    long cores = physical_cores(flags);
    if (logical < 1)
        logical = 1;
    if (cores < 1)
        cores = logical;
    json_object_set_new(cpu, "model", json_string(xpb_env_cpu_model(buf, sizeof buf)));
    json_object_set_new(cpu, "cores", json_integer(cores));
    json_object_set_new(cpu, "logical_cpus", json_integer(logical));
    json_object_set_new(cpu, "flags", flags);
    flags = NULL;
    json_object_set_new(env, "cpu", cpu);
    cpu = NULL;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    json_object_set_new(env, "memory_bytes",
                        json_integer(pages > 0 && page > 0 ? (json_int_t)pages * page : 0));
    json_object_set_new(env, "compiler", json_string(XPB_C_COMPILER));
    json_object_set_new(libs, "libyaml", json_string(yaml_get_version_string()));
    json_object_set_new(libs, "jansson", json_string(JANSSON_VERSION));
    json_object_set_new(env, "libraries", libs);
    libs = NULL;
    json_object_set_new(env, "accelerators", json_array());
    for (size_t i = 0; registry && i < xpb_registry_count(registry); i++) {
        const char *path;
        const xpb_plugin_descriptor *d = xpb_registry_at(registry, i, &path);
        json_t *p = json_object();
        if (!p)
            goto fail;
        snprintf(buf, sizeof buf, "%u.%u", d->abi_major, d->abi_minor);
        json_object_set_new(p, "name", json_string(d->name));
        json_object_set_new(p, "kind", json_string(xpb_plugin_kind_name(d->kind)));
        json_object_set_new(p, "version", json_string(d->version ? d->version : ""));
        json_object_set_new(p, "abi", json_string(buf));
        json_object_set_new(p, "path", json_string(path));
        json_array_append_new(plugins, p);
    }
    json_object_set_new(env, "plugins", plugins);
    return env;
fail:
    json_decref(env);
    json_decref(cpu);
    json_decref(flags);
    json_decref(libs);
    json_decref(plugins);
    return NULL;
}
