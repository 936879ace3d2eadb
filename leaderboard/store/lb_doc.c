/* Members of a results document with a default (see lb_doc.h). */
#include "store/lb_doc.h"

#include <math.h>

const char *lb_doc_str(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_string(v) ? json_string_value(v) : "";
}

double lb_doc_num(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}
