/* Which plugin entry point is running. The host records, before every call into a plugin, which
 * plugin it calls and through which entry point ("compile"), and what it is doing meanwhile
 * (a conformance case, a run); a fatal signal inside that call is then named by one line
 * instead of a bare "Segmentation fault" (docs/backend-guide.md, "When your backend crashes").
 *
 * guard.c keeps that record in static storage that a signal handler may read at any moment:
 * fixed-size buffers, filled before a flag says they are valid. guard_signal.c is the handler:
 * the CLI installs it (xpb_guard_install); a fatal signal inside a recorded call prints the
 * line with write(2) alone and exits with the CLI's code, any other fatal signal gets the
 * action it had before (the default one: the process dies as it would have).
 *
 * The record is one per process: calls into plugins come from one host thread and do not nest
 * (a plugin that calls a host service is still inside its entry point). A signal raised on
 * another thread while a call is recorded, say a worker thread of the plugin, is named too. */
#ifndef XPB_CORE_GUARD_H
#define XPB_CORE_GUARD_H

#include <stddef.h>

#define XPB_GUARD_NAME_MAX 256   /* bytes kept of a plugin's name or file, NUL included */
#define XPB_GUARD_TEXT_MAX 512   /* bytes kept of the activity and of the epilogue */
#define XPB_GUARD_PLUGINS_MAX 64 /* function tables named at once; more are called '?' */

/* Names function table `api` (a backend's or a model's): calls recorded through it say
 * "<kind> '<name>'" ("backend 'cpu_ref'"). `kind` is a static string; `name` is copied. The
 * loader names every plugin it keeps and forgets it when it unloads it. */
void xpb_guard_name(const void *api, const char *kind, const char *name);
void xpb_guard_forget(const void *api);

/* "<kind> '<name>'" of the plugin whose function table is `api` ("backend 'cpu_ref'"), or
 * "plugin" when the loader did not name it, into buf (owned by the caller); returns buf. The
 * host puts this in front of every message a plugin leaves (docs/plugin-abi.md, "Names and
 * logs"): plugins do not name themselves. */
const char *xpb_guard_who(char *buf, size_t size, const void *api);

/* Records that the host calls entry point `entry` (a static string, "compile") of the plugin
 * whose function table is `api`, until xpb_guard_leave. */
void xpb_guard_enter(const void *api, const char *entry);

/* The same for a plugin file that has no name yet (dlopen, xpb_plugin_query, dlclose): the
 * line says "plugin file '<path>'". `path` is copied. */
void xpb_guard_enter_file(const char *path, const char *entry);

/* The call recorded by the last xpb_guard_enter is over. */
void xpb_guard_leave(void);

/* xpb_guard_enter(api, entry), or xpb_guard_leave() when entry is NULL: the observer of the
 * calls the program room makes (program/plugin_calls.h), which the CLI sets. */
void xpb_guard_call(const void *api, const char *entry);

/* What the host is doing, printf-style, as the crash line shows it after the entry point:
 * "during conformance case 'CONV2D x2x3x7x9'", "during run '[2/4] conv6-train'"; NULL clears
 * it. Set it between calls into plugins, never from inside one. */
void xpb_guard_activity(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* What survived the crash, printf-style, closing the line after " - ": "rows above were
 * kept", "finished runs are in results.json"; NULL clears it. */
void xpb_guard_epilogue(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The crash line for signal `sig` as the handler writes it ("xpubench: crash (SIGSEGV) in
 * backend 'x', entry point compile, during ... - rows above were kept\n"), into buf (at most
 * size bytes, NUL-terminated). Async-signal-safe: no stdio, no allocation. Returns its length,
 * or 0 when no call into a plugin is recorded (then buf is the empty string). */
size_t xpb_guard_crash_line(char *buf, size_t size, int sig);

/* Installs the handler of SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT (on an alternate stack,
 * so that a stack overflow is caught too): inside a recorded call it writes the crash line to
 * standard error and ends the process with _exit(exit_code); elsewhere it puts back the
 * action the signal had before and lets the signal take it. 0, or -1 when sigaction failed
 * (errno set). Calling it again changes only the exit code. */
int xpb_guard_install(int exit_code);

#endif
