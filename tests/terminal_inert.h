/* The check of the tests of hostile input (test_hostile.c, test_upload.c): nothing a terminal
 * would obey is in a text that reaches one. Include after <cmocka.h>. */
#ifndef XPB_TESTS_TERMINAL_INERT_H
#define XPB_TESTS_TERMINAL_INERT_H

#include <stddef.h>

/* Fails the test when `text` holds a C0 control other than newline (and CR before LF when
 * `crlf`), DEL, a C1 control as UTF-8 (U+0080-U+009F) or a bidirectional control (U+202A-
 * U+202E, U+2066-U+2069); `what` names the text in the message. */
static void assert_inert(const char *text, int crlf, const char *what)
{
    const unsigned char *p = (const unsigned char *)text;
    for (size_t i = 0; p[i]; i++) {
        int bad = (p[i] < 0x20 && p[i] != '\n' && !(crlf && p[i] == '\r' && p[i + 1] == '\n')) ||
                  p[i] == 0x7f || (p[i] == 0xc2 && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f) ||
                  (p[i] == 0xe2 && p[i + 1] == 0x80 && p[i + 2] >= 0xaa && p[i + 2] <= 0xae) ||
                  (p[i] == 0xe2 && p[i + 1] == 0x81 && p[i + 2] >= 0xa6 && p[i + 2] <= 0xa9);
        if (bad)
            fail_msg("%s: raw control at byte %zu (0x%02x) of:\n%.400s", what, i, p[i],
                     text + (i > 100 ? i - 100 : 0));
    }
}

#endif
