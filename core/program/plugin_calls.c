/* The observer of the program room's calls into plugins (see plugin_calls.h). */
#include "program/plugin_calls.h"

#include <stddef.h>

static xpb_plugin_call_observer observer;

void xpb_program_observe_calls(xpb_plugin_call_observer o)
{
    observer = o;
}

void xpb_program_calling(const void *api, const char *entry)
{
    if (observer)
        observer(api, entry);
}

void xpb_program_called(const void *api)
{
    if (observer)
        observer(api, NULL);
}
