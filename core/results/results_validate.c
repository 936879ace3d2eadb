/* Validation of results documents (see results_validate.h): the schema and its version first,
 * then the walker over the field tables, then the rules across fields. */
#include "results/results_validate.h"

#include <string.h>

#include "results/schema_fields.h"
#include "results/schema_rules.h"
#include "results/schema_walk.h"

xpb_status xpb_results_validate(const json_t *doc, xpb_err *err)
{
    struct xpb_schema_walk c = {.err = err, .len = 0};
    c.path[0] = '\0';
    static const struct xpb_schema_field document = {
        NULL, XPB_SK_OBJECT, XPB_SF_REQ, XPB_SR_ANY, NULL, xpb_schema_document_fields, 1};
    if (!doc || !json_is_object(doc)) {
        if (!doc)
            return xpb_err_set(err, XPB_PARSE_ERROR, "document: missing");
        xpb_schema_type_error(&c, &document, doc);
        return XPB_PARSE_ERROR;
    }

    /* Schema and version first: a document of another kind or version gets a message about
     * that rather than about the first key this version does not know. */
    const json_t *schema = json_object_get(doc, "schema");
    if (!schema)
        return xpb_err_set(err, XPB_PARSE_ERROR,
                           "schema: required key missing (not an xpubench results document?)");
    if (!json_is_string(schema) || strcmp(json_string_value(schema), XPB_RESULTS_SCHEMA) != 0) {
        char found[128];
        xpb_schema_describe_found(found, sizeof found, schema, 1);
        return xpb_err_set(err, XPB_PARSE_ERROR,
                           "schema: expected \"%s\", found %s (not an xpubench results document)",
                           XPB_RESULTS_SCHEMA, found);
    }
    const json_t *version = json_object_get(doc, "schema_version");
    if (!version)
        return xpb_err_set(err, XPB_PARSE_ERROR, "schema_version: required key missing");
    if (!json_is_integer(version) || json_integer_value(version) < XPB_RESULTS_SCHEMA_MIN_VERSION ||
        json_integer_value(version) > XPB_RESULTS_SCHEMA_VERSION) {
        char found[128];
        xpb_schema_describe_found(found, sizeof found, version, 1);
        return xpb_err_set(err, XPB_PARSE_ERROR,
                           "schema_version: version %s is not supported (this build reads "
                           "versions %d to %d)",
                           found, XPB_RESULTS_SCHEMA_MIN_VERSION, XPB_RESULTS_SCHEMA_VERSION);
    }
    c.version = (int)json_integer_value(version);

    if (xpb_schema_check_object(&c, doc, xpb_schema_document_fields) != 0)
        return XPB_PARSE_ERROR;

    const json_t *runs = json_object_get(doc, "runs");
    for (size_t i = 0; i < json_array_size(runs); i++) {
        size_t old = xpb_schema_push_key(&c, "runs");
        xpb_schema_push_index(&c, i);
        if (xpb_schema_check_run(&c, json_array_get(runs, i)) != 0)
            return XPB_PARSE_ERROR;
        xpb_schema_pop(&c, old);
    }
    if (xpb_schema_check_ids(&c, doc) != 0)
        return XPB_PARSE_ERROR;
    return XPB_OK;
}
