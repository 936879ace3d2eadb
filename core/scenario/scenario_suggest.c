/* Suggestions for unknown words and the unknown-key message (scenario_suggest.h). */
#include "scenario/scenario_suggest.h"

#include <stdio.h>
#include <string.h>

#include "scenario/scenario_keys.h"
#include "scenario/yaml_tree.h"

/* Optimal string alignment distance, capped: returns cap+1 when larger than cap. */
static size_t edit_distance(const char *a, size_t la, const char *b, size_t lb, size_t cap)
{
    enum { MAXLEN = 64 };
    size_t d[MAXLEN + 1][MAXLEN + 1];
    if (la > MAXLEN || lb > MAXLEN)
        return cap + 1;
    if ((la > lb ? la - lb : lb - la) > cap)
        return cap + 1;
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < best)
                best = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[la][lb] > cap ? cap + 1 : d[la][lb];
}

const char *xpb_suggest(const char *word, size_t len, const char *const *candidates, size_t n)
{
    const char *best = NULL;
    size_t best_d = 3;
    for (size_t i = 0; i < n; i++) {
        size_t d = edit_distance(word, len, candidates[i], strlen(candidates[i]), 2);
        if (d < best_d) {
            best_d = d;
            best = candidates[i];
        }
    }
    return best;
}

/* The names of the run keys allowed there, in table order; returns their number. */
static size_t run_key_names(const char **names, int with_label, int for_set)
{
    size_t n_keys, n = 0;
    const struct xpb_skey *keys = xpb_skey_table(&n_keys);
    for (size_t i = 0; i < n_keys; i++)
        if ((with_label || keys[i].type != XPB_SKEY_LABEL) &&
            (!for_set || keys[i].type != XPB_SKEY_PARAMS))
            names[n++] = keys[i].name;
    return n;
}

xpb_status xpb_skey_unknown(xpb_err *err, xpb_status status, const char *where, const char *text,
                            size_t len, int with_label, int for_set)
{
    const char *names[XPB_SKEY_MAX];
    char found[256], list[1024];
    const char *what = for_set ? "a run key or params.<name>" : "a run key";
    size_t n = run_key_names(names, with_label, for_set);
    const char *hint = xpb_suggest(text, len, names, n);
    xpb_yaml_quote(found, sizeof found, text, len);
    if (hint)
        return xpb_err_set(err, status, "%s: expected %s, found %s (did you mean '%s'?)", where,
                           what, found, hint);
    size_t o = 0;
    list[0] = '\0';
    for (size_t i = 0; i < n && o < sizeof list; i++)
        o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", i ? ", " : "", names[i]);
    return xpb_err_set(err, status, "%s: expected %s (%s), found %s", where, what, list, found);
}
