/* RAPL energy readings (see energy.h). */
#include "energy.h"

#include <stdio.h>

#define XPB_RAPL_MAX_DOMAINS 8

static int read_u64(const char *path, unsigned long long *out)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int ok = fscanf(f, "%llu", out) == 1;
    fclose(f);
    return ok ? 0 : -1;
}

static double wrap_range_joules = 0;

int xpb_rapl_read(double *joules)
{
    double total = 0;
    int found = 0;
    for (int i = 0; i < XPB_RAPL_MAX_DOMAINS; i++) {
        char path[128];
        unsigned long long uj, range;
        snprintf(path, sizeof path, "/sys/class/powercap/intel-rapl:%d/energy_uj", i);
        if (read_u64(path, &uj) != 0)
            continue;
        snprintf(path, sizeof path, "/sys/class/powercap/intel-rapl:%d/max_energy_range_uj", i);
        if (read_u64(path, &range) == 0 && found == 0)
            wrap_range_joules = (double)range * 1e-6;
        total += (double)uj * 1e-6;
        found++;
    }
    if (!found)
        return -1;
    *joules = total;
    return 0;
}

double xpb_rapl_delta(double before, double after)
{
    if (after >= before)
        return after - before;
    return after + wrap_range_joules - before;
}
