/* A backend whose initialisation fails: query returns XPB_INTERNAL without a descriptor. */
#include <xpubench/xpubench.h>

XPB_PLUGIN_QUERY
{
    (void)out, (void)host_major, (void)host_minor;
    if (XPB_HAS_MEMBER(host, xpb_host_services, log) && host->log)
        host->log(host->ctx, XPB_LOG_ERROR, "fake_failing_init", "cannot initialise");
    return XPB_INTERNAL;
}
