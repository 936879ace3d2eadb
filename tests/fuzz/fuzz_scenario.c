/* libFuzzer entry point for the scenario parser. The first byte chooses the mode: even, the
 * rest is a scenario file; odd, the rest is split at NUL bytes into the file and up to four
 * --set options. A crash, a leak, a sanitizer report or a failure whose message names no
 * position aborts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/scenario.h"

#define PATH "fuzz.yaml"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_message(const char *msg, size_t n_set)
{
    long line = 0, column = 0;
    int used = 0;
    if (strcmp(msg, PATH ": empty scenario: expected a mapping with 'name' and 'runs'") == 0)
        return;
    if (strncmp(msg, PATH ": too large:", sizeof PATH + 11) == 0)
        return;
    if (n_set && strncmp(msg, "--set ", 6) == 0)
        return;
    if (strncmp(msg, PATH ":", sizeof PATH) == 0 &&
        sscanf(msg + sizeof PATH, "%ld:%ld: %n", &line, &column, &used) == 2 && used > 0 &&
        line >= 1 && column >= 1)
        return;
    fprintf(stderr, "message without a position: %s\n", msg);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    enum { MAX_SET = 4 };
    if (size == 0)
        return 0;
    int with_set = data[0] & 1;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    char *copy = NULL;
    const char *set[MAX_SET];
    size_t n_set = 0;
    if (with_set) {
        /* file \0 option \0 option ... (options need NUL-terminated copies) */
        copy = malloc(len + 1);
        if (!copy)
            return 0;
        memcpy(copy, text, len);
        copy[len] = '\0';
        size_t file_len = strlen(copy);
        for (size_t at = file_len + 1; at <= len && n_set < MAX_SET; at += strlen(copy + at) + 1)
            set[n_set++] = copy + at;
        text = copy;
        len = file_len;
    }
    xpb_scenario *s = NULL;
    xpb_err err;
    err.msg[0] = '\0';
    xpb_status st = xpb_scenario_parse(&s, PATH, text, len, set, n_set, &err);
    if (st == XPB_OK) {
        if (!s || s->n_runs == 0 || s->n_runs > XPB_SCENARIO_MAX_RUNS)
            abort();
        for (size_t i = 0; i < s->n_runs; i++)
            if (!s->runs[i].id || !s->runs[i].model || !s->runs[i].backend)
                abort();
        xpb_scenario_free(s);
    } else {
        if (s || err.msg[0] == '\0')
            abort();
        check_message(err.msg, n_set);
    }
    free(copy);
    return 0;
}
