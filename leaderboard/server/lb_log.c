/* Log-safe text (see lb_log.h). */
#include "server/lb_log.h"

void lb_log_text(char *out, size_t cap, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    size_t j = 0;
    if (cap == 0)
        return;
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        int plain = *p >= 0x20 && *p < 0x7F && *p != '\\' && *p != '"';
        size_t need = plain ? 1 : 4;
        if (j + need >= cap)
            break;
        if (plain) {
            out[j++] = (char)*p;
        } else {
            out[j++] = '\\';
            out[j++] = 'x';
            out[j++] = hex[*p >> 4];
            out[j++] = hex[*p & 15];
        }
    }
    out[j] = '\0';
}
