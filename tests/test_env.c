/* Environment capture (core/run/env.c): the "cpu" object parsed from /proc/cpuinfo texts (model,
 * physical cores, and the ISA flags that decide DL speed, bf16 and fp16 included, matched as
 * whole words on the first "flags" line only), and the live environment of this machine against
 * its own /proc/cpuinfo. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "machine/env.h"

/* Asserts that cpu.flags is exactly `want` (n names, in order). */
static void assert_flags(const json_t *cpu, const char *const *want, size_t n)
{
    const json_t *flags = json_object_get(cpu, "flags");
    assert_true(json_is_array(flags));
    if (json_array_size(flags) != n) {
        char *text = json_dumps(flags, 0);
        fprintf(stderr, "flags %s, expected %zu of them\n", text ? text : "?", n);
        free(text);
        fail();
    }
    for (size_t i = 0; i < n; i++)
        assert_string_equal(json_string_value(json_array_get(flags, i)), want[i]);
}

/* A Sapphire Rapids-like text: two sockets of one core with two threads each, every flag that
 * decides bf16 and fp16 speed, other flags around them, a second processor whose flags line
 * differs (only the first counts). */
static const char sapphire[] =
    "processor\t: 0\n"
    "vendor_id\t: GenuineIntel\n"
    "model name\t: Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz  \n"
    "physical id\t: 0\n"
    "core id\t\t: 0\n"
    "flags\t\t: fpu vme sse4_1 sse4_2 avx f16c fma avx2 avx512f avx512dq avx512bw avx512vl "
    "avx512_vnni avx512_bf16 amx_bf16 avx512_fp16 amx_tile amx_int8 arch_capabilities\n"
    "vmx flags\t: vnmi preemption_timer\n"
    "\n"
    "processor\t: 1\n"
    "model name\t: something else\n"
    "physical id\t: 0\n"
    "core id\t\t: 0\n"
    "flags\t\t: fpu amx_fp16\n"
    "\n"
    "processor\t: 2\n"
    "physical id\t: 1\n"
    "core id\t\t: 0\n"
    "\n"
    "processor\t: 3\n"
    "physical id\t: 1\n"
    "core id\t\t: 0\n";

static void test_cpu_bf16_fp16_flags(void **state)
{
    (void)state;
    json_t *cpu = xpb_env_cpu_from_cpuinfo(sapphire, 4);
    assert_non_null(cpu);
    assert_string_equal(json_string_value(json_object_get(cpu, "model")),
                        "Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz");
    assert_int_equal(json_integer_value(json_object_get(cpu, "cores")), 2);
    assert_int_equal(json_integer_value(json_object_get(cpu, "logical_cpus")), 4);
    static const char *const want[] = {"sse4_2",      "avx",      "avx2",        "fma",
                                       "avx512f",     "avx512bw", "avx512_vnni", "avx512_bf16",
                                       "avx512_fp16", "amx_tile", "amx_bf16",    "amx_int8"};
    assert_flags(cpu, want, sizeof want / sizeof *want);
    json_decref(cpu);
}

/* An AVX-512 Xeon without BF16 (bf16 emulated there) and a CPU with AVX2 only. */
static void test_cpu_without_bf16(void **state)
{
    (void)state;
    json_t *cpu = xpb_env_cpu_from_cpuinfo("model name : Intel(R) Xeon(R) Gold 6148\n"
                                           "flags : sse4_2 avx avx2 fma avx512f avx512bw\n",
                                           8);
    static const char *const skylake[] = {"sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw"};
    assert_flags(cpu, skylake, 6);
    assert_int_equal(json_integer_value(json_object_get(cpu, "cores")), 8); /* no core ids */
    json_decref(cpu);
    cpu = xpb_env_cpu_from_cpuinfo("flags: avx2 fma avx", 1);
    static const char *const avx2[] = {"avx", "avx2", "fma"}; /* the order of the list */
    assert_flags(cpu, avx2, 3);
    assert_string_equal(json_string_value(json_object_get(cpu, "model")), "unknown");
    json_decref(cpu);
}

/* Whole words only: a flag that merely starts like a wanted one is not it, and the wanted one
 * later on the line is still found. */
static void test_cpu_flags_are_whole_words(void **state)
{
    (void)state;
    json_t *cpu = xpb_env_cpu_from_cpuinfo(
        "flags\t: avx512f_x avx2x xavx amx_bf16_foo avx512f amx_tile\tamx_bf16\r\n", 2);
    static const char *const want[] = {"avx512f", "amx_tile", "amx_bf16"};
    assert_flags(cpu, want, 3);
    json_decref(cpu);
    /* no text at all: nothing known, nothing invented */
    cpu = xpb_env_cpu_from_cpuinfo(NULL, 0);
    assert_flags(cpu, NULL, 0);
    assert_string_equal(json_string_value(json_object_get(cpu, "model")), "unknown");
    assert_int_equal(json_integer_value(json_object_get(cpu, "logical_cpus")), 1);
    json_decref(cpu);
}

/* This machine: every wanted flag its /proc/cpuinfo lists is reported, nothing else. */
static void test_collect_matches_this_machine(void **state)
{
    (void)state;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        skip();
    char line[16384], first_flags[16384] = "";
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "flags", 5) == 0) {
            snprintf(first_flags, sizeof first_flags, " %s", strchr(line, ':') + 1);
            break;
        }
    fclose(f);
    first_flags[strcspn(first_flags, "\n")] = ' ';
    json_t *env = xpb_env_collect(NULL);
    assert_non_null(env);
    const json_t *flags = json_object_get(json_object_get(env, "cpu"), "flags");
    static const char *const wanted[] = {XPB_ENV_CPU_FLAGS};
    size_t listed = 0;
    for (size_t w = 0; w < sizeof wanted / sizeof *wanted; w++) {
        char word[64];
        snprintf(word, sizeof word, " %s ", wanted[w]);
        int has = strstr(first_flags, word) != NULL, reported = 0;
        for (size_t i = 0; i < json_array_size(flags); i++)
            reported |= strcmp(json_string_value(json_array_get(flags, i)), wanted[w]) == 0;
        if (has != reported) {
            fprintf(stderr, "%s: in /proc/cpuinfo %d, reported %d\n", wanted[w], has, reported);
            fail();
        }
        listed += reported;
    }
    assert_int_equal(json_array_size(flags), listed);
    char *text = json_dumps(json_object_get(env, "cpu"), 0);
    printf("cpu: %s\n", text ? text : "?");
    free(text);
    json_decref(env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_bf16_fp16_flags),
        cmocka_unit_test(test_cpu_without_bf16),
        cmocka_unit_test(test_cpu_flags_are_whole_words),
        cmocka_unit_test(test_collect_matches_this_machine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
