/* A shared object that exports no xpb_plugin_query (only a misspelt one): the host must
 * report the dlsym failure and unload it. */
#include <xpubench/xpubench.h>

XPB_EXPORT int xpb_plugin_query_v0(void);
XPB_EXPORT int xpb_plugin_query_v0(void)
{
    return 0;
}
