/* Progress bar on stderr (see progress.h). */
#include "run/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/clock.h"

static int enabled = -1;
static double last_draw;

int xpb_progress_enabled(void)
{
    if (enabled < 0) {
        const char *off = getenv("XPB_NO_PROGRESS");
        enabled = isatty(STDERR_FILENO) && !(off && *off && *off != '0');
    }
    return enabled;
}

void xpb_progress_update(const char *label, double fraction, const char *detail)
{
    if (!xpb_progress_enabled())
        return;
    double now = xpb_now();
    if (now - last_draw < 0.1 && fraction < 1.0)
        return;
    last_draw = now;
    if (fraction < 0)
        fraction = 0;
    if (fraction > 1)
        fraction = 1;
    enum { WIDTH = 28 };
    char bar[WIDTH * 3 + 1];
    int filled = (int)(fraction * WIDTH + 0.5), n = 0;
    for (int i = 0; i < WIDTH; i++) {
        const char *glyph = i < filled ? "\xe2\x96\x88" : "\xe2\x96\x91"; /* full / light shade */
        for (int k = 0; k < 3; k++)
            bar[n++] = glyph[k];
    }
    bar[n] = 0;
    fprintf(stderr, "\r\033[K%s %s %3.0f%% %s", label, bar, fraction * 100, detail ? detail : "");
    fflush(stderr);
}

void xpb_progress_clear(void)
{
    if (!xpb_progress_enabled())
        return;
    fprintf(stderr, "\r\033[K");
    fflush(stderr);
}
