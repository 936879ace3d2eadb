/* Static assets (see lb_assets.h). */
#include "pages/lb_assets.h"

#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "base/sha256.h"

/* Generated arrays (lb_assets_data_*.c): content plus a NUL, and the length without it. */
extern const unsigned char lb_css[];
extern const size_t lb_css_len;
extern const unsigned char lb_js[];
extern const size_t lb_js_len;

static pthread_once_t version_once = PTHREAD_ONCE_INIT;
static char version[13];

static void compute_version(void)
{
    struct xpb_sha256_ctx ctx;
    unsigned char digest[32];
    char hex[65];
    xpb_sha256_init(&ctx);
    xpb_sha256_update(&ctx, lb_css, lb_css_len);
    xpb_sha256_update(&ctx, lb_js, lb_js_len);
    xpb_sha256_final(&ctx, digest);
    xpb_sha256_to_hex(hex, digest);
    memcpy(version, hex, 12);
    version[12] = '\0';
}

const char *lb_asset_version(void)
{
    pthread_once(&version_once, compute_version);
    return version;
}

int lb_asset(struct lb_response *res, const char *path)
{
    const unsigned char *data;
    size_t len;
    if (!strcmp(path, "/static/lb.css")) {
        data = lb_css;
        len = lb_css_len;
        res->content_type = "text/css; charset=utf-8";
    } else if (!strcmp(path, "/static/lb.js")) {
        data = lb_js;
        len = lb_js_len;
        res->content_type = "text/javascript; charset=utf-8";
    } else {
        return 0;
    }
    res->status = 200;
    res->cache_seconds = 86400;
    xpb_text_add(&res->body, (const char *)data, len);
    return 1;
}
