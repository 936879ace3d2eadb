/* Sticky CUDA errors, remembered per device (sticky.h). A lost context cannot be recovered inside
 * the process: cudaDeviceReset would destroy the primary context under every other backend and
 * executable of the process (the conformance suite keeps one open across its cases) and under
 * the libraries' handles, so the backend stops using the device and says why, once per call,
 * naming the first failure. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "plan/sticky.h"

#define CUX_STICKY_DEVICES 64
#define CUX_STICKY_MESSAGE 768

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char first[CUX_STICKY_DEVICES][CUX_STICKY_MESSAGE]; /* "" while the device is fine */

int cux_cuda_sticky(int code)
{
    switch (code) {
#define CUX_STICKY_CASE_(name, num) case num:
        CUX_STICKY_MAP(CUX_STICKY_CASE_)
#undef CUX_STICKY_CASE_
        return 1;
    default:
        return 0;
    }
}

/* The slot of `device` (devices beyond the table share the last one). */
static char *slot(int device)
{
    int d = device < 0 ? 0 : device >= CUX_STICKY_DEVICES ? CUX_STICKY_DEVICES - 1 : device;
    return first[d];
}

void cux_sticky_note(int device, const char *message)
{
    pthread_mutex_lock(&lock);
    char *s = slot(device);
    if (!s[0])
        snprintf(s, CUX_STICKY_MESSAGE, "%s", message && message[0] ? message : "(no message)");
    pthread_mutex_unlock(&lock);
}

int cux_sticky_refusal(char *out, size_t size, int device, const char *what)
{
    pthread_mutex_lock(&lock);
    const char *s = slot(device);
    int lost = s[0] != '\0';
    if (lost)
        snprintf(out, size,
                 "%s: device %d is unusable: its CUDA context was lost by an earlier failure "
                 "(%s), and every later CUDA call in this process fails; that failure is the "
                 "one to look at (run it alone, e.g. xpubench conformance --filter), then start "
                 "a new process",
                 what, device, s);
    pthread_mutex_unlock(&lock);
    return lost ? -1 : 0;
}

void cux_sticky_reset(void)
{
    pthread_mutex_lock(&lock);
    memset(first, 0, sizeof first);
    pthread_mutex_unlock(&lock);
}
