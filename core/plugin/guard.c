/* The record of which plugin entry point is running, and the crash line made from it (see
 * guard.h). Everything the signal handler reads lives in static buffers; a call is published
 * by storing `inside` last (release) and read by loading it first (acquire), so a handler on
 * any thread sees complete strings. */
#include "plugin/guard.h"

#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* A function table the loader named. */
typedef struct named_api {
    const void *api;
    const char *kind; /* static */
    unsigned refs;    /* registries holding it (the same .so loaded twice has one table) */
    char name[XPB_GUARD_NAME_MAX];
} named_api;

static named_api named[XPB_GUARD_PLUGINS_MAX];

/* The call in progress, valid while `inside` is 1. */
static const char *call_kind, *call_name, *call_entry;
static char call_file[XPB_GUARD_NAME_MAX];
static atomic_int inside;

static char activity[XPB_GUARD_TEXT_MAX];
static char epilogue[XPB_GUARD_TEXT_MAX];

void xpb_guard_name(const void *api, const char *kind, const char *name)
{
    named_api *free_slot = NULL;
    for (size_t i = 0; i < XPB_GUARD_PLUGINS_MAX; i++) {
        if (named[i].api == api) {
            named[i].refs++;
            return;
        }
        if (!named[i].api && !free_slot)
            free_slot = &named[i];
    }
    if (!free_slot)
        return; /* more tables than slots: calls through this one say '?' */
    snprintf(free_slot->name, sizeof free_slot->name, "%s", name ? name : "?");
    free_slot->kind = kind ? kind : "plugin";
    free_slot->refs = 1;
    free_slot->api = api;
}

void xpb_guard_forget(const void *api)
{
    for (size_t i = 0; i < XPB_GUARD_PLUGINS_MAX; i++)
        if (named[i].api == api && --named[i].refs == 0)
            named[i].api = NULL;
}

const char *xpb_guard_who(char *buf, size_t size, const void *api)
{
    for (size_t i = 0; i < XPB_GUARD_PLUGINS_MAX; i++)
        if (named[i].api == api && api) {
            snprintf(buf, size, "%s '%s'", named[i].kind, named[i].name);
            return buf;
        }
    snprintf(buf, size, "plugin");
    return buf;
}

void xpb_guard_enter(const void *api, const char *entry)
{
    call_kind = "plugin";
    call_name = "?";
    for (size_t i = 0; i < XPB_GUARD_PLUGINS_MAX; i++)
        if (named[i].api == api && api) {
            call_kind = named[i].kind;
            call_name = named[i].name;
            break;
        }
    call_entry = entry;
    atomic_store_explicit(&inside, 1, memory_order_release);
}

void xpb_guard_enter_file(const char *path, const char *entry)
{
    snprintf(call_file, sizeof call_file, "%s", path ? path : "?");
    call_kind = "plugin file";
    call_name = call_file;
    call_entry = entry;
    atomic_store_explicit(&inside, 1, memory_order_release);
}

void xpb_guard_leave(void)
{
    atomic_store_explicit(&inside, 0, memory_order_release);
}

void xpb_guard_call(const void *api, const char *entry)
{
    if (entry)
        xpb_guard_enter(api, entry);
    else
        xpb_guard_leave();
}

/* buf = fmt formatted with ap, or "" when fmt is NULL. */
static void set_text(char *buf, size_t size, const char *fmt, va_list ap)
{
    if (fmt)
        vsnprintf(buf, size, fmt, ap);
    else
        buf[0] = '\0';
}

void xpb_guard_activity(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_text(activity, sizeof activity, fmt, ap);
    va_end(ap);
}

void xpb_guard_epilogue(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_text(epilogue, sizeof epilogue, fmt, ap);
    va_end(ap);
}

/* ---- the crash line: async-signal-safe from here on ---- */

/* Appends at most `max` bytes of s (up to its NUL) at buf[n], keeping room for the NUL; the
 * new length. */
static size_t put(char *buf, size_t size, size_t n, const char *s, size_t max)
{
    for (size_t k = 0; s && k < max && s[k] && n + 1 < size; k++)
        buf[n++] = s[k];
    buf[n] = '\0';
    return n;
}

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV:
        return "SIGSEGV";
    case SIGBUS:
        return "SIGBUS";
    case SIGFPE:
        return "SIGFPE";
    case SIGILL:
        return "SIGILL";
    case SIGABRT:
        return "SIGABRT";
    }
    return NULL;
}

/* "signal 12" for signals without a name above, into `out` (24 bytes). */
static const char *signal_number(char out[24], int sig)
{
    char digits[12];
    size_t n = 0;
    unsigned v = sig < 0 ? 0u : (unsigned)sig;
    do
        digits[n++] = (char)('0' + v % 10);
    while ((v /= 10) && n < sizeof digits);
    memcpy(out, "signal ", 7);
    size_t k = 7;
    while (n)
        out[k++] = digits[--n];
    out[k] = '\0';
    return out;
}

size_t xpb_guard_crash_line(char *buf, size_t size, int sig)
{
    if (!buf || size < 2)
        return 0;
    buf[0] = '\0';
    if (!atomic_load_explicit(&inside, memory_order_acquire))
        return 0;
    char number[24];
    const char *name = signal_name(sig);
    size_t n = put(buf, size, 0, "xpubench: crash (", 32);
    n = put(buf, size, n, name ? name : signal_number(number, sig), 16);
    n = put(buf, size, n, ") in ", 8);
    n = put(buf, size, n, call_kind, 32);
    n = put(buf, size, n, " '", 2);
    n = put(buf, size, n, call_name, XPB_GUARD_NAME_MAX);
    n = put(buf, size, n, "', entry point ", 16);
    n = put(buf, size, n, call_entry, 64);
    if (activity[0]) {
        n = put(buf, size, n, ", ", 2);
        n = put(buf, size, n, activity, XPB_GUARD_TEXT_MAX);
    }
    if (epilogue[0]) {
        n = put(buf, size, n, " - ", 3);
        n = put(buf, size, n, epilogue, XPB_GUARD_TEXT_MAX);
    }
    if (n + 1 < size)
        n = put(buf, size, n, "\n", 1);
    else
        buf[n - 1] = '\n'; /* cut short, still one line */
    return n;
}
