/* A one-line progress bar on stderr, drawn only when stderr is a terminal (and XPB_NO_PROGRESS
 * is unset); silent otherwise, so logs and CI output stay clean. */
#ifndef XPB_CORE_PROGRESS_H
#define XPB_CORE_PROGRESS_H

/* Whether the bar is drawn at all (decided once). */
int xpb_progress_enabled(void);

/* Redraws the bar: `label` (e.g. "[1/4] conv6-train"), fraction 0..1, free-form `detail`.
 * Throttled to ~10 redraws a second. */
void xpb_progress_update(const char *label, double fraction, const char *detail);

/* A milestone of long work (an evaluation of a time-to-accuracy run): on a terminal, the bar as
 * xpb_progress_update draws it; otherwise, unless XPB_NO_PROGRESS is set, one line
 * "label: detail" on stderr, so that the log of an hour-long run shows how it goes. */
void xpb_progress_note(const char *label, double fraction, const char *detail);

/* Clears the bar line. */
void xpb_progress_clear(void);

#endif
