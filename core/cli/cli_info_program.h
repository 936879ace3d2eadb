/* `xpubench info MODEL --program`: the lowered program exactly as a backend's compile receives
 * it (cli_info_program.c); cli_info.c parses the command line and builds the program. */
#ifndef XPB_CORE_CLI_INFO_PROGRAM_H
#define XPB_CORE_CLI_INFO_PROGRAM_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "program/program_data.h"

/* What the program view shows besides the program: the model's name, the variant it was built
 * for, and the precision policy a run would compile it with (a compile option, not part of the
 * program, which is written once in fp32 semantics). */
typedef struct xpb_program_view {
    const char *model;
    const char *variant;
    uint32_t precision; /* xpb_precision */
} xpb_program_view;

/* The program as JSON: model, variant, mode, batch, precision, opset, op_kinds (kind, op set,
 * count, in op-number order), phases, tensors (id, name, layer, role, dtype, shape, flags,
 * grad_of, lifetime) and ops (index, phase, kind, op set, layer, the attributes it sets,
 * inputs and outputs with their roles and shapes). Owned by the caller (json_decref); NULL
 * when out of memory. */
json_t *xpb_program_view_json(const xpb_program_view *v, const xpb_model_program *mp);

/* The same as text for people: a header, the op kinds, the tensors, then the ops phase by
 * phase. */
void xpb_program_view_print(FILE *f, const xpb_program_view *v, const xpb_model_program *mp);

#endif
