/* Datasheet memory bandwidth by device name.
 *
 * Sources (NVIDIA's product datasheets, "GPU memory bandwidth"; GB/s of 10^9 bytes):
 *   Tesla T4 320; Tesla V100 (SXM2 and PCIe) 900, V100S 1134; A100 40GB 1555, A100 80GB PCIe
 *   1935, A100 80GB SXM 2039; A10 600 (A10G, AWS's part, 600); A30 933; A40 696; L4 300; L40
 *   and L40S 864; H100 SXM 3350, H100 PCIe 2000, H100 NVL 3900; H200 4800.
 * A device the table does not know has no datasheet figure (0: the results say null). */
#include "plan/datasheet.h"

#include <ctype.h>
#include <stddef.h>
#include <string.h>

struct sheet {
    const char *key; /* as it occurs in cudaDeviceProp.name */
    double gb_per_s;
};

/* Most specific first: the first key that matches wins. */
static const struct sheet table[] = {
    {"A100-SXM4-80GB", 2039},
    {"A100 80GB PCIe", 1935},
    {"A100-PCIE-80GB", 1935},
    {"A100", 1555},
    {"H100 NVL", 3900},
    {"H100 PCIe", 2000},
    {"H100", 3350},
    {"H200", 4800},
    {"V100S", 1134},
    {"V100", 900},
    {"A10G", 600},
    {"A10", 600},
    {"A30", 933},
    {"A40", 696},
    {"L40S", 864},
    {"L40", 864},
    {"L4", 300},
    {"T4", 320},
};

/* 1 when `key` occurs in `name` as a word: not inside a longer model number ("A10" in "A100"). */
static int names(const char *name, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = strstr(name, key); p; p = strstr(p + 1, key)) {
        int starts = p == name || !isalnum((unsigned char)p[-1]);
        int ends = !isalnum((unsigned char)p[n]);
        if (starts && ends)
            return 1;
    }
    return 0;
}

double cux_datasheet_bandwidth(const char *name)
{
    if (!name)
        return 0.0;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (names(name, table[i].key))
            return table[i].gb_per_s * 1e9;
    return 0.0;
}
