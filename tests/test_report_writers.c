/* The report's writers (core/report/report_writers.h): the HTML page is self-contained (no
 * script, no external resource), escapes what the files say, and every number in its tables
 * carries its exact value and source, which equal the document's, with a display that is that
 * value formatted by the one rule; Markdown and CSV carry the same tables with the same numbers.
 * Also: the number format, memory sizes, and a report of 200 runs built and written in under a
 * second. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "report/report.h"
#include "report/report_cells.h"
#include "report/report_model.h"
#include "test_report_fixture.h"

#define R3(x)                                                                                      \
    {                                                                                              \
        (x) * 1.00, (x)*1.02, (x)*0.98                                                             \
    }

/* A document with a speedup, a fusion pair, a batch sweep, a hostile run id and a failed run. */
static json_t *doc_with(const char *hostile_id)
{
    json_t *doc = fx_doc("cpu_ref");
    fx_add(doc, &(fx_run){.id = "ref", .fusion = 1, .tp = R3(100), .other_share = 0.06});
    fx_add(doc,
           &(fx_run){
               .id = "dnn", .backend = "cpu_onednn", .fusion = 1, .tp = R3(1234.5), .profile = 1});
    fx_add(
        doc,
        &(fx_run){.id = "off", .backend = "cpu_onednn", .fusion = 0, .tp = R3(1000), .profile = 1});
    for (int b = 1; b <= 8; b *= 2) {
        char id[32];
        snprintf(id, sizeof id, "sweep-%d", b);
        fx_add(doc, &(fx_run){.id = id,
                              .mode = "train",
                              .backend = "cpu_onednn",
                              .batch = b,
                              .device_peak = 3e7 + 1.5e6 * b,
                              .tp = R3(100.0 * b)});
    }
    fx_add(doc,
           &(fx_run){
               .id = hostile_id, .model = "vgg16", .fusion = 1, .other_share = 0.3, .tp = R3(7)});
    fx_add(doc, &(fx_run){.id = "broken", .model = "vgg16", .backend = "cuda", .status = "failed"});
    fx_finish(doc);
    return doc;
}

/* The report written in `format`, NUL-terminated; the caller frees it. */
static char *written(const xpb_report *r, xpb_report_format format)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(xpb_report_write(f, r, format), XPB_OK);
    long len = ftell(f);
    char *text = malloc((size_t)len + 1);
    assert_non_null(text);
    rewind(f);
    assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
    text[len] = '\0';
    fclose(f);
    return text;
}

static xpb_report *report_of(json_t *doc)
{
    xpb_report *r = NULL;
    xpb_err err = {{0}};
    const char *name = "study <1>.json";
    assert_int_equal(xpb_report_build(&r, &doc, &name, 1, NULL, &err), XPB_OK);
    return r;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static void test_html(void **state)
{
    (void)state;
    json_t *doc = doc_with("<img src=x>&");
    xpb_report *r = report_of(doc);
    char *html = written(r, XPB_REPORT_HTML);
    assert_int_equal(strncmp(html, "<!DOCTYPE html>\n<html lang=\"en\">", 32), 0);
    assert_non_null(strstr(html, "</html>\n"));
    /* self-contained: no script, no stylesheet or image to fetch, no link off the page */
    assert_int_equal(count(html, "<script"), 0);
    assert_int_equal(count(html, "<link"), 0);
    assert_int_equal(count(html, "<img"), 0);
    assert_int_equal(count(html, "url("), 0);
    assert_int_equal(count(html, "http"), count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
    assert_int_equal(count(html, "href=\""), count(html, "href=\"#"));
    /* what the files say is text, never markup */
    assert_non_null(strstr(html, "&lt;img src=x&gt;&amp;"));
    assert_non_null(strstr(html, "study &lt;1&gt;.json"));
    /* every section, and every chart an accessible SVG */
    for (size_t s = 0; s < r->n_sections; s++) {
        char id[96];
        snprintf(id, sizeof id, "<section id=\"%s\">", r->sections[s].id);
        assert_non_null(strstr(html, id));
    }
    assert_true(count(html, "<svg ") >= 4);
    assert_int_equal(count(html, "<svg "), count(html, "</svg>"));
    /* every number of every table: exact value, source and display */
    size_t cells = 0;
    for (const char *td = strstr(html, "<td class=\"n"); td; td = strstr(td + 1, "<td class=\"n")) {
        fx_check_number_cell(doc, td);
        cells++;
    }
    assert_true(cells > 60);
    assert_int_equal(count(html, "<td"), count(html, "</td>"));
    free(html);
    xpb_report_free(r);
    json_decref(doc);
}

/* The Markdown has every table with its rows, and on each row the same cell texts. */
static void test_markdown(void **state)
{
    (void)state;
    json_t *doc = doc_with("a|b");
    xpb_report *r = report_of(doc);
    char *md = written(r, XPB_REPORT_MARKDOWN);
    assert_int_equal(strncmp(md, "# xpubench report\n", 18), 0);
    assert_non_null(strstr(md, "a\\|b")); /* a pipe in a cell does not split it */
    for (size_t s = 0; s < r->n_sections; s++)
        for (size_t b = 0; b < r->sections[s].n_blocks; b++) {
            const xpb_report_table *t = r->sections[s].blocks[b].table;
            if (r->sections[s].blocks[b].kind != XPB_BLOCK_TABLE)
                continue;
            char title[320], escaped[256];
            size_t n = 0;
            for (const char *p = t->title; *p && n < sizeof escaped - 2; p++) {
                if (strchr("|\\*_`", *p))
                    escaped[n++] = '\\';
                escaped[n++] = *p;
            }
            escaped[n] = '\0';
            snprintf(title, sizeof title, "**%s**\n\n|", escaped);
            const char *at = strstr(md, title);
            assert_non_null(at);
            at = strchr(strchr(at, '\n') + 2, '\n') + 1; /* past the header line */
            at = strchr(at, '\n') + 1;                   /* and the alignment line */
            for (size_t row = 0; row < t->n_rows; row++) {
                const char *eol = strchr(at, '\n');
                for (size_t c = 0; c < t->n_cols; c++) {
                    const xpb_report_cell *cell = &t->cells[row * t->n_cols + c];
                    char text[256];
                    if (cell->kind != XPB_CELL_NUMBER)
                        continue;
                    xpb_report_cell_text(text, sizeof text, cell);
                    const char *found = strstr(at, text);
                    if (!found || found > eol)
                        fail_msg("%s row %zu: '%s' missing", t->id, row, text);
                }
                at = eol + 1;
            }
        }
    free(md);
    xpb_report_free(r);
    json_decref(doc);
}

/* One CSV line split into fields (RFC 4180 quotes); returns the count. */
static size_t csv_fields(char fields[][96], size_t max, const char **line)
{
    size_t n = 0;
    const char *p = *line;
    for (;;) {
        char buf[96];
        size_t len = 0;
        if (*p == '"') {
            for (p++; *p && !(*p == '"' && p[1] != '"'); p++) {
                if (*p == '"')
                    p++;
                if (len < sizeof buf - 1)
                    buf[len++] = *p;
            }
            p++;
        } else {
            while (*p && *p != ',' && *p != '\r')
                if (len < sizeof buf - 1)
                    buf[len++] = *p++;
                else
                    p++;
        }
        buf[len] = '\0';
        if (n < max)
            snprintf(fields[n++], sizeof fields[0], "%s", buf);
        if (*p != ',')
            break;
        p++;
    }
    assert_int_equal(strncmp(p, "\r\n", 2), 0);
    *line = p + 2;
    return n;
}

static void test_csv(void **state)
{
    (void)state;
    json_t *doc = doc_with("x,\"y\"");
    xpb_report *r = report_of(doc);
    char *csv = written(r, XPB_REPORT_CSV);
    const char *at =
        strstr(csv, "Speedups between backends: Speedup over the baseline backend\r\n");
    assert_non_null(at);
    at = strchr(at, '\n') + 1;
    char head[32][96], row[32][96];
    size_t nh = csv_fields(head, 32, &at), nr = csv_fields(row, 32, &at);
    assert_int_equal(nh, nr);
    size_t sp = 0;
    while (sp < nh && strcmp(head[sp], "cpu_onednn ×") != 0)
        sp++;
    assert_int_equal(nh, sp + 4);
    assert_string_equal(head[sp + 1], "cpu_onednn × ci95 low");
    assert_string_equal(head[sp + 2], "cpu_onednn × ci95 high");
    assert_string_equal(head[sp + 3], "cpu_onednn × marks");
    assert_string_equal(row[sp + 3], "!"); /* the baseline run was disturbed */
    assert_string_equal(head[sp - 2], "baseline samples/s marks");
    assert_string_equal(row[sp - 2], "!");
    /* the speedup as on the page, without "×", its interval in two numbers */
    const xpb_report_table *t = NULL;
    for (size_t b = 0; !t && b < r->sections[1].n_blocks; b++)
        t = r->sections[1].blocks[b].table;
    const xpb_report_cell *cell = &t->cells[t->n_cols - 1];
    char want[64];
    xpb_report_cell_number(want, sizeof want, cell, 0);
    assert_string_equal(row[sp], want);
    xpb_report_cell_number(want, sizeof want, cell, 1);
    assert_string_equal(row[sp + 1], want);
    assert_true(strtod(row[sp + 1], NULL) < strtod(row[sp], NULL));
    assert_non_null(strstr(csv, "\"x,\"\"y\"\"\"")); /* quoted as RFC 4180 says */
    free(csv);
    xpb_report_free(r);
    json_decref(doc);
}

static void test_number_format(void **state)
{
    (void)state;
    static const struct {
        double v;
        const char *text;
    } cases[] = {
        {0, "0"},           {1234.5, "1234"},   {15240.3, "15240"},     {123.45, "123.5"},
        {12.3456, "12.35"}, {1.23456, "1.235"}, {0.0123456, "0.01235"}, {0.00012345, "1.234e-04"},
        {9.99996, "10.00"}, {999.96, "1000"},   {-2.5, "-2.500"},       {1e16, "1.000e+16"}};
    char buf[48];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        xpb_report_format_number(buf, sizeof buf, cases[i].v);
        assert_string_equal(buf, cases[i].text);
    }
    xpb_report_format_value(buf, sizeof buf, 0.0518, XPB_UNIT_MS);
    assert_string_equal(buf, "51.80");
    xpb_report_format_value(buf, sizeof buf, 65536, XPB_UNIT_COUNT);
    assert_string_equal(buf, "65536");
    xpb_report_format_value(buf, sizeof buf, 29421952, XPB_UNIT_MIB);
    assert_string_equal(buf, "28.06");
    xpb_report_format_value(buf, sizeof buf, 0.0524, XPB_UNIT_PERCENT);
    assert_string_equal(buf, "5.240");
}

static void test_parse_bytes(void **state)
{
    (void)state;
    double b = 0;
    assert_int_equal(xpb_report_parse_bytes(&b, "16GiB"), 0);
    assert_true(b == 17179869184.0);
    assert_int_equal(xpb_report_parse_bytes(&b, "512 mib"), 0);
    assert_true(b == 536870912.0);
    assert_int_equal(xpb_report_parse_bytes(&b, "1.5T"), 0);
    assert_true(b == 1.5 * 1099511627776.0);
    assert_int_equal(xpb_report_parse_bytes(&b, "17179869184"), 0);
    assert_true(b == 17179869184.0);
    assert_int_equal(xpb_report_parse_bytes(&b, "8GB"), 0);
    assert_true(b == 8589934592.0);
    static const char *const bad[] = {"", "GiB", "-1GiB", "0", "16 GiBs", "16 PiB", "1e999", "x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(xpb_report_parse_bytes(&b, bad[i]), -1);
}

/* 200 runs: 20 configurations of model, mode and backend, each swept over 10 batches. */
static void test_200_runs_in_a_second(void **state)
{
    (void)state;
    json_t *doc = fx_doc(NULL);
    static const char *const models[] = {"conv6", "vgg16", "resnet18", "cyclegan", "m5"};
    static const char *const backends[] = {"cpu_ref", "cpu_onednn"};
    for (int m = 0; m < 5; m++)
        for (int k = 0; k < 2; k++)
            for (int be = 0; be < 2; be++)
                for (int b = 1; b <= 10; b++) {
                    char id[64];
                    snprintf(id, sizeof id, "%s-%d-%s-b%d", models[m], k, backends[be], b);
                    fx_add(doc, &(fx_run){.id = id,
                                          .model = models[m],
                                          .mode = k ? "train" : "inference",
                                          .backend = backends[be],
                                          .batch = b * 8,
                                          .fusion = 1,
                                          .device_peak = 3e7 + 1e6 * b + 1e4 * (b % 3),
                                          .tp = R3(100.0 * (be + 1) * b / (1 + 0.05 * b))});
                }
    fx_finish(doc);
    assert_int_equal(json_array_size(json_object_get(doc, "runs")), 200);
    struct timespec t0, t1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    xpb_report *r = report_of(doc);
    char *html = written(r, XPB_REPORT_HTML);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
    double seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    printf("200 runs: report built and written in %.3f s of CPU time, %zu bytes of HTML\n", seconds,
           strlen(html));
#if defined(__SANITIZE_ADDRESS__) || defined(__OPTIMIZE__) == 0
    double limit = 10; /* sanitizers and -O0 are an order of magnitude slower */
#else
    double limit = 1;
#endif
    if (!getenv("XPB_TEST_UNDER_VALGRIND")) /* tens of times slower still: no limit */
        assert_true(seconds < limit);
    assert_int_equal(count(html, "id=\"batch-points-"), 20); /* every sweep */
    free(html);
    xpb_report_free(r);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_html),        cmocka_unit_test(test_markdown),
        cmocka_unit_test(test_csv),         cmocka_unit_test(test_number_format),
        cmocka_unit_test(test_parse_bytes), cmocka_unit_test(test_200_runs_in_a_second),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
