/* The run keys for `xpubench validate --help`, from the key table (scenario.h). */
#include "scenario/scenario.h"

#include <math.h>
#include <stdio.h>

#include "scenario/scenario_keys.h"

/* The default of `key` as help shows it: "; default <canonical value>", "; default ~" for
 * the model's default, "; required" for a key without one, nothing for `name` and `params`
 * (their help says it). Returns buf. */
static const char *default_text(char *buf, size_t size, const struct xpb_skey *key)
{
    char value[64];
    if (key->required)
        snprintf(buf, size, "; required");
    else if (key->type == XPB_SKEY_LABEL || key->type == XPB_SKEY_PARAMS)
        snprintf(buf, size, "%s", "");
    else if ((key->type == XPB_SKEY_NAME && !key->def.s) ||
             (key->type == XPB_SKEY_FLOAT && isnan(key->def.f)))
        snprintf(buf, size, "; default ~");
    else
        snprintf(buf, size, "; default %s", xpb_skey_format(value, sizeof value, key, &key->def));
    return buf;
}

void xpb_scenario_print_keys(FILE *f)
{
    size_t n;
    const struct xpb_skey *keys = xpb_skey_table(&n);
    char what[256], def[96];
    fprintf(f, "Run keys (in defaults, in a run, or as --set KEY=VALUE; a list is a sweep):\n");
    for (size_t i = 0; i < n; i++) {
        const struct xpb_skey *k = &keys[i];
        fprintf(f, "  %-15s %s\n  %-15s %s%s\n", k->name, k->help, "",
                xpb_skey_expected(what, sizeof what, k), default_text(def, sizeof def, k));
    }
}
