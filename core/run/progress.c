/* Progress bar on stderr (see progress.h). */
#include "run/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/clock.h"

static int silenced = -1, terminal = -1;
static double last_draw;

static int is_silenced(void)
{
    if (silenced < 0) {
        const char *off = getenv("XPB_NO_PROGRESS");
        silenced = off && *off && *off != '0';
    }
    return silenced;
}

int xpb_progress_enabled(void)
{
    if (terminal < 0)
        terminal = isatty(STDERR_FILENO);
    return terminal && !is_silenced();
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

void xpb_progress_note(const char *label, double fraction, const char *detail)
{
    if (xpb_progress_enabled()) {
        last_draw = 0; /* a milestone is always drawn */
        xpb_progress_update(label, fraction, detail);
    } else if (!is_silenced()) {
        fprintf(stderr, "%s: %s\n", label ? label : "", detail ? detail : "");
        fflush(stderr);
    }
}

void xpb_progress_clear(void)
{
    if (!xpb_progress_enabled())
        return;
    fprintf(stderr, "\r\033[K");
    fflush(stderr);
}
