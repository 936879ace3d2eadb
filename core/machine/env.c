/* Environment capture (see env.h). */
#include "machine/env.h"

#include <stdio.h>
#include <stdlib.h>
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

/* The whole text of `path` (NUL-terminated; /proc files report size 0, so it is read to the
 * end), or NULL when it cannot be read. Caller frees it. */
static char *read_text(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t cap = 16384, len = 0;
    char *text = malloc(cap);
    while (text) {
        len += fread(text + len, 1, cap - 1 - len, f);
        if (len < cap - 1)
            break; /* end of file (or an error: keep what was read) */
        char *grown = realloc(text, 2 * cap);
        if (!grown) {
            free(text);
            text = NULL;
            break;
        }
        text = grown;
        cap *= 2;
    }
    fclose(f);
    if (text)
        text[len] = '\0';
    return text;
}

/* The value of line `line` (of `len` bytes) when it starts with `key` followed by optional blanks
 * and a colon, else NULL. The value starts after the colon and its blanks; *vlen is its length
 * without trailing blanks. */
static const char *line_value(const char *line, size_t len, const char *key, size_t *vlen)
{
    size_t k = strlen(key);
    if (len < k || strncmp(line, key, k) != 0)
        return NULL;
    size_t i = k;
    while (i < len && (line[i] == ' ' || line[i] == '\t'))
        i++;
    if (i >= len || line[i] != ':')
        return NULL;
    i++;
    while (i < len && (line[i] == ' ' || line[i] == '\t'))
        i++;
    size_t end = len;
    while (end > i && (line[end - 1] == ' ' || line[end - 1] == '\t' || line[end - 1] == '\r'))
        end--;
    *vlen = end - i;
    return line + i;
}

/* Whether the blank-separated words of v[0..vlen) include `word`. */
static int has_word(const char *v, size_t vlen, const char *word)
{
    size_t w = strlen(word), i = 0;
    while (i < vlen) {
        while (i < vlen && (v[i] == ' ' || v[i] == '\t'))
            i++;
        size_t start = i;
        while (i < vlen && v[i] != ' ' && v[i] != '\t')
            i++;
        if (i - start == w && strncmp(v + start, word, w) == 0)
            return 1;
    }
    return 0;
}

/* The first "model name" of /proc/cpuinfo's text into buf ("unknown" when there is none). */
static void cpuinfo_model(char *buf, size_t size, const char *cpuinfo)
{
    snprintf(buf, size, "unknown");
    for (const char *line = cpuinfo ? cpuinfo : ""; *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line), vlen = 0;
        const char *v = line_value(line, len, "model name", &vlen);
        if (v && vlen > 0) {
            snprintf(buf, size, "%.*s", (int)vlen, v);
            return;
        }
        line += nl ? len + 1 : len;
    }
}

json_t *xpb_env_cpu_from_cpuinfo(const char *cpuinfo, long logical_cpus)
{
    static const char *const wanted[] = {XPB_ENV_CPU_FLAGS};
    json_t *cpu = json_object(), *flags = json_array();
    if (!cpu || !flags)
        goto free_objects;
    char model[256];
    int have_flags = 0;
    cpuinfo_model(model, sizeof model, cpuinfo);
    long pairs[1024][2], n_pairs = 0, phys = 0;
    for (const char *line = cpuinfo ? cpuinfo : ""; *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line), vlen = 0;
        const char *v;
        char num[32];
        if ((v = line_value(line, len, "physical id", &vlen))) {
            snprintf(num, sizeof num, "%.*s", (int)vlen, v);
            phys = strtol(num, NULL, 10);
        } else if ((v = line_value(line, len, "core id", &vlen))) {
            snprintf(num, sizeof num, "%.*s", (int)vlen, v);
            long core = strtol(num, NULL, 10);
            int seen = 0;
            for (long i = 0; i < n_pairs && !seen; i++)
                seen = pairs[i][0] == phys && pairs[i][1] == core;
            if (!seen && n_pairs < 1024) {
                pairs[n_pairs][0] = phys;
                pairs[n_pairs][1] = core;
                n_pairs++;
            }
        } else if (!have_flags && (v = line_value(line, len, "flags", &vlen))) {
            have_flags = 1;
            for (size_t w = 0; w < sizeof wanted / sizeof *wanted; w++)
                if (has_word(v, vlen, wanted[w]) &&
                    json_array_append_new(flags, json_string(wanted[w])) != 0)
                    goto free_objects;
        }
        line += nl ? len + 1 : len;
    }
    if (logical_cpus < 1)
        logical_cpus = 1;
    /* json_object_set_new takes the value even when it fails */
    int failed = json_object_set_new(cpu, "model", json_string(model));
    failed |= json_object_set_new(cpu, "cores", json_integer(n_pairs > 0 ? n_pairs : logical_cpus));
    failed |= json_object_set_new(cpu, "logical_cpus", json_integer(logical_cpus));
    failed |= json_object_set_new(cpu, "flags", flags);
    flags = NULL;
    if (failed)
        goto free_objects;
    return cpu;
free_objects:
    json_decref(cpu);
    json_decref(flags);
    return NULL;
}

const char *xpb_env_cpu_model(char *buf, size_t size)
{
    char *text = read_text("/proc/cpuinfo");
    cpuinfo_model(buf, size, text);
    free(text);
    return buf;
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
    json_t *env = json_object(), *cpu = NULL, *libs = json_object(), *plugins = json_array();
    if (!env || !libs || !plugins)
        goto free_objects;
    os_name(buf, sizeof buf);
    json_object_set_new(env, "os", json_string(buf));
    if (uname(&u) == 0) {
        snprintf(buf, sizeof buf, "%s %s %s", u.sysname, u.release, u.machine);
        json_object_set_new(env, "kernel", json_string(buf));
    } else {
        json_object_set_new(env, "kernel", json_string("unknown"));
    }
    char *cpuinfo = read_text("/proc/cpuinfo");
    cpu = xpb_env_cpu_from_cpuinfo(cpuinfo, sysconf(_SC_NPROCESSORS_ONLN));
    free(cpuinfo);
    if (!cpu)
        goto free_objects;
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
            goto free_objects;
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
free_objects:
    json_decref(env);
    json_decref(cpu);
    json_decref(libs);
    json_decref(plugins);
    return NULL;
}
