/* Members of a results document read with a default, for the leaderboard's own reading of a
 * document (lb_extract.c) and for the pages that show one: a member that is missing or of
 * another type reads as "" or NAN, never as an error (documents are validated before they are
 * stored). One place for what lb_extract.c and the pages each spelt out, until core's typed
 * view of a run takes their place. */
#ifndef LB_DOC_H
#define LB_DOC_H

#include <jansson.h>

/* The string member `key` of obj, or "" (obj may be NULL). Owned by obj, valid while it is. */
const char *lb_doc_str(const json_t *obj, const char *key);

/* The number member `key` of obj, or NAN (obj may be NULL). */
double lb_doc_num(const json_t *obj, const char *key);

#endif
