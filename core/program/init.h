/* Initial values and synthetic data of a model program (init.c): what the host writes into a
 * backend before the clock starts, identical on every backend for one seed. */
#ifndef XPB_CORE_INIT_H
#define XPB_CORE_INIT_H

#include <stddef.h>
#include <stdint.h>

#include <xpubench/backend.h>

#include "base/errmsg.h"
#include "program/program_data.h"

/* Writes every PARAM, STATE (running stats, optimizer state, constants) tensor's initial
 * value into `exe`: parameters from the seeded RNG as the model declared, state from its
 * initialiser or zero. Identical on every backend for one seed. */
xpb_status xpb_model_program_write_initial(const xpb_model_program *mp, const xpb_backend_api *api,
                                           xpb_executable *exe, xpb_err *err);

/* The initial value of tensor `t` (PARAM/STATE/CONST) into `buf` (xpb_tensor_bytes; an I32
 * constant's int32 values are written into its bytes). */
xpb_status xpb_model_program_initial_value(const xpb_model_program *mp, uint32_t t, float *buf);

/* Synthetic data for INPUT tensor `t`, batch number `index` (0, 1, ...), into `buf`: this
 * program's shard of global batch `index`. Sample g of the global batches (counted over
 * all of them, g = index * data_shards * batch + data_shard * batch + i) comes from its own
 * random stream keyed by the seed, the input's name and g, so it does not depend on how the
 * global batch is split: N ranks at batch b see exactly what one process sees at N x b. */
xpb_status xpb_model_program_batch(const xpb_model_program *mp, uint32_t t, uint64_t index,
                                   void *buf);

/* Writes batch `index` of every INPUT tensor into `exe`. `scratch` must hold the largest
 * input (xpb_model_program_max_input_bytes). */
xpb_status xpb_model_program_write_batch(const xpb_model_program *mp, const xpb_backend_api *api,
                                         xpb_executable *exe, uint64_t index, void *scratch,
                                         xpb_err *err);
size_t xpb_model_program_max_input_bytes(const xpb_model_program *mp);

#endif
