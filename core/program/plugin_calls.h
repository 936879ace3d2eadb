/* The program room's calls into plugins (a model's build, a backend's write of initial values
 * and batches), announced to one observer. This room may not name plugins (core/rooms.txt), so
 * the CLI sets the observer to plugin/guard.h's xpb_guard_call: a fatal signal inside such a
 * call is then named like any other (docs/backend-guide.md, "When your backend crashes"). */
#ifndef XPB_CORE_PLUGIN_CALLS_H
#define XPB_CORE_PLUGIN_CALLS_H

/* Called with the plugin's function table and the entry point (a static string, "build")
 * before the call, and with entry NULL after it. */
typedef void (*xpb_plugin_call_observer)(const void *api, const char *entry);

/* Sets the observer of the whole process; NULL (the default): nobody is told. */
void xpb_program_observe_calls(xpb_plugin_call_observer observer);

/* Tells the observer, if any, that the room calls / has called `entry` of `api`. */
void xpb_program_calling(const void *api, const char *entry);
void xpb_program_called(const void *api);

#endif
