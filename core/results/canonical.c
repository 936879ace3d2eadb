/* The canonical text of a results document and its hash (see results.h). */
#include "results/results.h"

#include <string.h>

#include "base/sha256.h"

xpb_status xpb_results_canonical(char **text_out, size_t *len_out, char key_out[65],
                                 const json_t *doc, xpb_err *err)
{
    *text_out = NULL;
    *len_out = 0;
    char *text =
        json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17) | JSON_ENCODE_ANY);
    if (!text)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "cannot serialise the results document");
    *len_out = strlen(text);
    *text_out = text;
    xpb_sha256_hex(key_out, text, *len_out);
    return XPB_OK;
}
