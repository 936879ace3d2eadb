/* Deterministic mutation fuzzing of the scenario parser: thousands of seeded mutations,
 * truncations and binary junk derived from the shipped scenarios (the .yaml files of configs/) and
 * a few built-in seeds go through xpb_scenario_parse. The parser must never crash or leak (run
 * under ASan/UBSan to check those), a success must be a sane scenario, and every failure must carry
 * a message that names a line and column ("<file>:<line>:<column>: ...") or the option at
 * fault ("--set ..."); the one exception is the documented empty-scenario message. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "scenario/scenario.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define PATH "fuzz.yaml"
#define MAX_SEEDS 64
#define MAX_TEXT (64 * 1024)

static const char *const builtin_seeds[] = {
    "name: every-key\n"
    "description: every key once\n"
    "output: results/every.json\n"
    "defaults:\n"
    "  backend: cpu_ref\n"
    "  precision: [fp32, bf16]\n"
    "  allow_emulated: [false, true]\n"
    "  params: {blocks: 6}\n"
    "runs:\n"
    "  - name: full\n"
    "    model: vgg16\n"
    "    variant: imagenet\n"
    "    mode: inference\n"
    "    batch: [1, 128]\n"
    "    fusion: [true, false]\n"
    "    threads: 2\n"
    "    device: 0\n"
    "    warmup: 1\n"
    "    min_steps: 5\n"
    "    min_time: 0.5\n"
    "    max_steps: 100\n"
    "    repeats: 2\n"
    "    seed: 18446744073709551615\n"
    "    data: synthetic\n"
    "    transfer: streamed\n"
    "    lr: 0.01\n"
    "    momentum: 0.9\n"
    "    weight_decay: 5e-4\n"
    "    verify: true\n"
    "    profile: false\n"
    "    params:\n"
    "      dropout: [0.0, 0.5]\n"
    "      act: \"relu\"\n"
    "  - model: conv6\n"
    "  - {model: resnet18, variant: ~, batch: 16}\n",
    "{name: flow, defaults: {warmup: 0}, runs: [{model: m, batch: [1, 2, 3]}, {model: n}]}\n",
    "---\n"
    "name: 'quoted'\n"
    "description: |\n"
    "  a block\n"
    "  of text\n"
    "runs:\n"
    "- model: \"conv6\"\n"
    "  precision: fp16-mixed\n"
    "  lr: null\n"
    "...\n",
};

/* Tokens that steer mutations towards YAML structure and the scenario's own words. */
static const char *const dictionary[] = {
    ":",
    ": ",
    "- ",
    "-",
    "[",
    "]",
    "{",
    "}",
    ",",
    "\n",
    "\n  ",
    "\n    - ",
    "  ",
    "\t",
    "#",
    "&a ",
    "*a",
    "!!str ",
    "!x ",
    "\"",
    "'",
    "|",
    ">",
    "%YAML 1.1\n",
    "---\n",
    "...\n",
    "? ",
    "~",
    "null",
    "true",
    "no",
    "0",
    "-1",
    "65536",
    "65537",
    "1e999",
    "99999999999999999999",
    ".nan",
    "\\0",
    "\\x",
    "\"\\u0000\"",
    "name",
    "runs",
    "defaults",
    "model",
    "batch",
    "params",
    "precision",
    "bf16-mixed",
    "[1,2,3,4,5,6,7,8,9,10]",
    "params.x",
    "<<: ",
    "\xc3\xa9",
    "\xe2\x80\xa8",
    "\xef\xbb\xbf",
    "\xff",
    "\x00",
    "\r\n",
    "\r",
    "\xc2\x85",
};

/* splitmix64: a small deterministic generator (same sequence on every machine). */
static uint64_t next(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static size_t below(uint64_t *rng, size_t n)
{
    return n ? (size_t)(next(rng) % n) : 0;
}

struct text {
    char buf[MAX_TEXT];
    size_t len;
};

static void insert(struct text *t, size_t at, const char *data, size_t n)
{
    if (at > t->len)
        at = t->len;
    if (n > MAX_TEXT - t->len)
        n = MAX_TEXT - t->len;
    memmove(t->buf + at + n, t->buf + at, t->len - at);
    memcpy(t->buf + at, data, n);
    t->len += n;
}

static void erase(struct text *t, size_t at, size_t n)
{
    if (at >= t->len)
        return;
    if (n > t->len - at)
        n = t->len - at;
    memmove(t->buf + at, t->buf + at + n, t->len - at - n);
    t->len -= n;
}

/* The start of the line that contains position `at`. */
static size_t line_start(const struct text *t, size_t at)
{
    while (at > 0 && t->buf[at - 1] != '\n')
        at--;
    return at;
}

static void mutate(struct text *t, uint64_t *rng, const struct text *seeds, size_t n_seeds)
{
    size_t at = below(rng, t->len + 1);
    switch (below(rng, 12)) {
    case 0: /* flip a bit */
        if (t->len)
            t->buf[below(rng, t->len)] ^= (char)(1u << below(rng, 8));
        break;
    case 1: /* any byte value */
        if (t->len)
            t->buf[below(rng, t->len)] = (char)below(rng, 256);
        break;
    case 2:
    case 3: { /* a dictionary token */
        const char *tok = dictionary[below(rng, N(dictionary))];
        insert(t, at, tok, tok[0] ? strlen(tok) : 1); /* "\x00" inserts one NUL */
        break;
    }
    case 4: /* delete a range */
        erase(t, at, 1 + below(rng, 16));
        break;
    case 5: { /* duplicate a range elsewhere */
        if (!t->len)
            break;
        size_t from = below(rng, t->len), n = 1 + below(rng, 64);
        char tmp[64];
        if (n > t->len - from)
            n = t->len - from;
        memcpy(tmp, t->buf + from, n);
        insert(t, at, tmp, n);
        break;
    }
    case 6: /* truncate */
        t->len = at;
        break;
    case 7: { /* binary junk */
        char junk[32];
        size_t n = 1 + below(rng, sizeof junk);
        for (size_t i = 0; i < n; i++)
            junk[i] = (char)next(rng);
        insert(t, at, junk, n);
        break;
    }
    case 8: { /* indentation: add or remove spaces, or a tab, at a line start */
        size_t ls = line_start(t, at);
        int op = (int)below(rng, 3);
        if (op == 0)
            insert(t, ls, "  ", 1 + below(rng, 2));
        else if (op == 1 && ls < t->len && t->buf[ls] == ' ')
            erase(t, ls, 1);
        else
            insert(t, ls, "\t", 1);
        break;
    }
    case 9: { /* a number turned huge, negative or fractional */
        static const char *const numbers[] = {"18446744073709551616", "-5", "0.25", "1e3",
                                              "4294967296",           "+7", "0x10", "007"};
        const char *num = numbers[below(rng, N(numbers))];
        size_t i = at;
        while (i < t->len && !(t->buf[i] >= '0' && t->buf[i] <= '9'))
            i++;
        size_t j = i;
        while (j < t->len && t->buf[j] >= '0' && t->buf[j] <= '9')
            j++;
        erase(t, i, j - i);
        insert(t, i, num, strlen(num));
        break;
    }
    case 10: { /* swap this line with the next */
        size_t a = line_start(t, at), b = a;
        while (b < t->len && t->buf[b] != '\n')
            b++;
        if (b >= t->len)
            break;
        size_t c = b + 1;
        while (c < t->len && t->buf[c] != '\n')
            c++;
        char tmp[MAX_TEXT];
        size_t first = b - a + 1, second = c - (b + 1);
        memcpy(tmp, t->buf + b + 1, second);
        tmp[second] = '\n';
        memcpy(tmp + second + 1, t->buf + a, first - 1);
        memcpy(t->buf + a, tmp, first + second);
        break;
    }
    default: { /* splice in a piece of another seed */
        const struct text *o = &seeds[below(rng, n_seeds)];
        if (!o->len)
            break;
        size_t from = below(rng, o->len), n = 1 + below(rng, 200);
        if (n > o->len - from)
            n = o->len - from;
        insert(t, at, o->buf + from, n);
        break;
    }
    }
}

/* An upper bound of the line count: every byte that may start a line break counts. */
static long max_lines(const char *text, size_t len)
{
    long n = 2;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        n += c == '\n' || c == '\r' || c == 0xc2 || c == 0xe2;
    }
    return n;
}

struct tally {
    long ok, failed, empty;
};

/* Parses one input and checks the outcome. */
static void check_one(const char *text, size_t len, const char *const *set, size_t n_set,
                      struct tally *tally)
{
    xpb_scenario *s = (xpb_scenario *)(uintptr_t)1;
    xpb_err err;
    memset(err.msg, 'Z', sizeof err.msg);
    err.msg[sizeof err.msg - 1] = '\0';
    xpb_status st = xpb_scenario_parse(&s, PATH, text, len, set, n_set, &err);
    if (st == XPB_OK) {
        assert_non_null(s);
        assert_true(s->n_runs >= 1 && s->n_runs <= XPB_SCENARIO_MAX_RUNS);
        assert_non_null(s->name);
        assert_int_equal(strlen(s->sha256), 64);
        for (size_t i = 0; i < s->n_runs; i++) {
            const xpb_run_config *r = &s->runs[i];
            assert_non_null(r->id);
            assert_non_null(r->model);
            assert_non_null(r->backend);
            assert_non_null(r->data);
            assert_string_equal(r->file, PATH);
            assert_true(r->line >= 1);
            assert_true(r->batch >= 1 && r->batch <= 65536);
            assert_true(r->repeats >= 1 && r->repeats <= 1000);
            assert_true(r->min_steps >= 1);
            assert_true(r->max_steps == 0 || r->max_steps >= r->min_steps);
        }
        xpb_scenario_free(s);
        tally->ok++;
        return;
    }
    assert_null(s);
    if (n_set == 0 && st != XPB_PARSE_ERROR)
        fail_msg("status %d (%s) for bad text: %s", st, xpb_status_name(st), err.msg);
    assert_true(st == XPB_PARSE_ERROR || st == XPB_INVALID_ARGUMENT);
    const char *m = err.msg;
    assert_true(m[0] != '\0' && m[0] != 'Z');
    for (const char *p = m; *p; p++)
        if ((unsigned char)*p < 0x20 || (n_set == 0 && (unsigned char)*p >= 0x7f))
            fail_msg("unescaped byte 0x%02x in message: %s", (unsigned char)*p, m);
    tally->failed++;
    if (strcmp(m, PATH ": empty scenario: expected a mapping with 'name' and 'runs'") == 0) {
        tally->empty++;
        return;
    }
    if (n_set && strncmp(m, "--set ", 6) == 0)
        return;
    long line = 0, column = 0;
    int used = 0;
    if (strncmp(m, PATH ":", sizeof PATH) != 0 ||
        sscanf(m + sizeof PATH, "%ld:%ld: %n", &line, &column, &used) != 2 || used == 0)
        fail_msg("no line and column in: %s", m);
    if (line < 1 || column < 1 || line > max_lines(text, len))
        fail_msg("implausible position %ld:%ld (%zu bytes) in: %s", line, column, len, m);
    assert_true(strlen(m + sizeof PATH + used) > 0);
}

static int has_suffix(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* The built-in seeds plus every .yaml file of configs/. */
static size_t load_seeds(struct text *seeds)
{
    size_t n = 0;
    for (size_t i = 0; i < N(builtin_seeds); i++) {
        seeds[n].len = strlen(builtin_seeds[i]);
        memcpy(seeds[n].buf, builtin_seeds[i], seeds[n].len);
        n++;
    }
    const char *dir = XPB_TEST_SOURCE_DIR "/configs";
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    size_t shipped = 0;
    while ((e = readdir(d)) != NULL && n < MAX_SEEDS) {
        if (!has_suffix(e->d_name, ".yaml"))
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        seeds[n].len = fread(seeds[n].buf, 1, MAX_TEXT / 2, f);
        fclose(f);
        n++;
        shipped++;
    }
    closedir(d);
    assert_true(shipped >= 1);
    /* Every seed is valid as it stands. */
    for (size_t i = 0; i < n; i++) {
        xpb_scenario *s = NULL;
        xpb_err err;
        if (xpb_scenario_parse(&s, PATH, seeds[i].buf, seeds[i].len, NULL, 0, &err) != XPB_OK)
            fail_msg("seed %zu does not parse: %s", i, err.msg);
        xpb_scenario_free(s);
    }
    return n;
}

static void test_mutations(void **state)
{
    (void)state;
    static struct text seeds[MAX_SEEDS];
    static struct text t;
    size_t n_seeds = load_seeds(seeds);
    uint64_t rng = 20240601;
    struct tally tally = {0};
    /* XPB_FUZZ_ITERATIONS=1000000 for a longer session; the seed stays the same. */
    const char *env = getenv("XPB_FUZZ_ITERATIONS");
    long iterations = env ? atol(env) : 20000;
    for (long iter = 0; iter < iterations; iter++) {
        t = seeds[below(&rng, n_seeds)];
        size_t rounds = 1 + below(&rng, 4);
        for (size_t r = 0; r < rounds; r++)
            mutate(&t, &rng, seeds, n_seeds);
        check_one(t.buf, t.len, NULL, 0, &tally);
    }
    /* Most mutations break the file, some do not: both paths were taken. */
    print_message("mutations: %ld parsed, %ld failed (%ld empty)\n", tally.ok, tally.failed,
                  tally.empty);
    assert_true(tally.ok > 100);
    assert_true(tally.failed > 1000);
}

static void test_truncations(void **state)
{
    (void)state;
    static struct text seeds[MAX_SEEDS];
    size_t n_seeds = load_seeds(seeds);
    struct tally tally = {0};
    for (size_t i = 0; i < n_seeds; i++)
        for (size_t len = 0; len <= seeds[i].len; len++)
            check_one(seeds[i].buf, len, NULL, 0, &tally);
    assert_true(tally.failed > 0);
    assert_true(tally.empty > 0);
}

static void test_binary_junk(void **state)
{
    (void)state;
    static char buf[4096];
    uint64_t rng = 7;
    struct tally tally = {0};
    for (int iter = 0; iter < 2000; iter++) {
        size_t len = below(&rng, sizeof buf);
        int printable = iter % 2; /* half raw bytes, half printable ASCII noise */
        for (size_t i = 0; i < len; i++) {
            uint64_t v = next(&rng);
            buf[i] = printable ? (char)(0x20 + v % 95) : (char)v;
            if (printable && v % 13 == 0)
                buf[i] = '\n';
        }
        check_one(buf, len, NULL, 0, &tally);
    }
    assert_true(tally.failed > 1900);
}

static void test_override_mutations(void **state)
{
    (void)state;
    static const char *const keys[] = {"batch",     "precision", "params.depth",  "seed",
                                       "lr",        "variant",   "bach",          "params.",
                                       "name",      "",          "min_time",      "fusion",
                                       "max_steps", "model",     "allow_emulated"};
    static const char *const values[] = {
        "32", "[32,64]", "[",    "bf16",  "~", "",        "{a: 1}", "-1",       "1e999", "[[1]]",
        "*a", "&a 1",    "a: b", "\"x\"", "'", "[1,2,3]", "true",   "- 1\n- 2", "\xff",  "\t1"};
    const char *text = builtin_seeds[0];
    uint64_t rng = 99;
    struct tally tally = {0};
    char sets[3][128];
    const char *ptrs[3];
    for (int iter = 0; iter < 2000; iter++) {
        size_t n = 1 + below(&rng, 3);
        for (size_t i = 0; i < n; i++) {
            int eq = below(&rng, 10) != 0;
            snprintf(sets[i], sizeof sets[i], "%s%s%s", keys[below(&rng, N(keys))], eq ? "=" : "",
                     values[below(&rng, N(values))]);
            ptrs[i] = sets[i];
        }
        check_one(text, strlen(text), ptrs, n, &tally);
    }
    assert_true(tally.ok > 50);
    assert_true(tally.failed > 500);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mutations),
        cmocka_unit_test(test_truncations),
        cmocka_unit_test(test_binary_junk),
        cmocka_unit_test(test_override_mutations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
