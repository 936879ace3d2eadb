/* `xpubench run --dump DIR`: one step of a run written as NumPy files plus a JSON manifest
 * (docs/dump.md), so the step can be replayed in another framework. */
#ifndef XPB_CORE_DUMP_H
#define XPB_CORE_DUMP_H

#include <xpubench/backend.h>

#include "program/model_program.h"
#include "scenario/run_config.h"

/* Compiles mp on `api` with keep_all, writes the initial values and batch 0, runs one step
 * and writes into `dir` (created if missing): initial parameters and state, the batch, every
 * loss, every parameter gradient, parameters and state after the step, and manifest.json. */
xpb_status xpb_dump_step(const char *dir, const xpb_backend_api *api, const xpb_model_program *mp,
                         const xpb_run_config *cfg, xpb_err *err);

#endif
