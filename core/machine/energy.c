/* RAPL energy readings (see energy.h). */
#include "machine/energy.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Reads one unsigned integer from a sysfs file; -1 with errno set when it cannot. */
static int read_number(const char *path, double *out)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    unsigned long long v;
    int ok = fscanf(f, "%llu", &v) == 1;
    int saved = errno;
    fclose(f);
    errno = ok ? 0 : (saved ? saved : EIO);
    if (!ok)
        return -1;
    *out = (double)v;
    return 0;
}

/* Reads the first line of a small text file into buf (no newline); -1 when it cannot. */
static int read_line(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int ok = fgets(buf, (int)size, f) != NULL;
    fclose(f);
    if (!ok)
        return -1;
    buf[strcspn(buf, "\r\n")] = '\0';
    return 0;
}

/* Whether a zone directory name is a RAPL zone: "intel-rapl:0", "intel-rapl:0:2". */
static int is_rapl_zone(const char *name)
{
    return strncmp(name, "intel-rapl:", 11) == 0;
}

/* Adds zone `dir` when it is a package or DRAM domain. Records a permission problem. */
static void add_zone(xpb_rapl *r, const char *dir, int *denied, char *denied_path, size_t size)
{
    char path[512], name[64];
    snprintf(path, sizeof path, "%.440s/name", dir);
    if (read_line(path, name, sizeof name) != 0)
        return;
    int is_dram = strcmp(name, "dram") == 0;
    if (!is_dram && strncmp(name, "package", 7) != 0)
        return; /* core, uncore, psys: counted by the package, or a different scope */
    snprintf(path, sizeof path, "%.440s/energy_uj", dir);
    double uj;
    if (read_number(path, &uj) != 0) {
        if ((errno == EACCES || errno == EPERM) && !*denied) {
            *denied = 1;
            snprintf(denied_path, size, "%.500s", path);
        }
        return;
    }
    if (r->n == XPB_RAPL_MAX_DOMAINS)
        return;
    xpb_rapl_domain *d = &r->domain[r->n++];
    snprintf(d->path, sizeof d->path, "%.255s", path);
    snprintf(d->name, sizeof d->name, "%.31s", name);
    d->is_dram = is_dram;
    snprintf(path, sizeof path, "%.440s/max_energy_range_uj", dir);
    if (read_number(path, &d->range_uj) != 0)
        d->range_uj = 0;
}

int xpb_rapl_open(xpb_rapl *r, const char *root)
{
    memset(r, 0, sizeof *r);
    if (!root)
        root = "/sys/class/powercap";
    DIR *dir = opendir(root);
    if (!dir) {
        snprintf(r->reason, sizeof r->reason, "no meter: %.200s: %.80s", root, strerror(errno));
        return -1;
    }
    int denied = 0;
    char denied_path[512] = "";
    struct dirent *e;
    /* zones sorted by name so that the domains come in a stable order */
    char names[64][64];
    size_t n = 0;
    while ((e = readdir(dir)) != NULL && n < 64)
        if (is_rapl_zone(e->d_name))
            snprintf(names[n++], sizeof names[0], "%.63s", e->d_name);
    closedir(dir);
    qsort(names, n, sizeof names[0], (int (*)(const void *, const void *))strcmp);
    for (size_t i = 0; i < n; i++) {
        char zone[512];
        snprintf(zone, sizeof zone, "%.400s/%.63s", root, names[i]);
        add_zone(r, zone, &denied, denied_path, sizeof denied_path);
    }
    if (r->n > 0)
        return 0;
    if (denied)
        snprintf(r->reason, sizeof r->reason,
                 "permission: %.240s is readable by root only (run as root, or grant read access)",
                 denied_path);
    else
        snprintf(r->reason, sizeof r->reason, "no meter: no RAPL package or DRAM zone under %.200s",
                 root);
    return -1;
}

int xpb_rapl_sample(const xpb_rapl *r, double *uj)
{
    for (size_t i = 0; i < r->n; i++)
        if (read_number(r->domain[i].path, &uj[i]) != 0)
            return -1;
    return 0;
}

double xpb_rapl_joules(const xpb_rapl *r, const double *before, const double *after,
                       double *package, double *dram)
{
    double pkg = 0, mem = 0;
    for (size_t i = 0; i < r->n; i++) {
        double d = after[i] - before[i];
        if (d < 0 && r->domain[i].range_uj > 0)
            d += r->domain[i].range_uj;
        if (d < 0)
            d = 0; /* a wrap of unknown range: nothing usable */
        if (r->domain[i].is_dram)
            mem += d * 1e-6;
        else
            pkg += d * 1e-6;
    }
    if (package)
        *package = pkg;
    if (dram)
        *dram = mem;
    return pkg + mem;
}
