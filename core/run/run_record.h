/* The JSON of one run in a results document (docs/results.md, "Runs"): its configuration,
 * the model as built, the device that ran it, its metrics and per-op profile. Every function
 * returns a new reference owned by the caller (json_decref), NULL only when out of memory
 * (or, for the profile, when the backend keeps none). */
#ifndef XPB_CORE_RUN_RECORD_H
#define XPB_CORE_RUN_RECORD_H

#include <jansson.h>

#include "run/measure.h"
#include "program/model_program.h"
#include "scenario/run_config.h"
#include "run/session.h"

/* The config object of a run. */
json_t *xpb_run_config_json(const xpb_run_config *cfg);

/* The optimizer of training phase `phase` of mp as results and dump manifests write it: kind,
 * lr, momentum, weight decay, Adam's betas and eps, and the gradient norm the phase clips to
 * when it clips. A new reference, owned by the caller. */
json_t *xpb_optimizer_json(const xpb_model_program *mp, uint32_t phase);

/* The model object: parameters, FLOPs per sample, layers. */
json_t *xpb_run_model_json(const xpb_model_program *mp);

/* The device object: device_info as the backend filled it, its kind, which precisions are
 * native or emulated, and the capabilities `caps` (xpb_plugin_caps) by name. */
json_t *xpb_run_device_json(const xpb_device_info *d, uint64_t caps);

/* The metrics object of a finished timed part. */
json_t *xpb_run_metrics_json(const xpb_timing *t, const xpb_run_config *cfg,
                             const xpb_model_program *mp, const xpb_session *s);

/* The per-op profile list, or NULL when the backend has no profile_read or it failed. */
json_t *xpb_run_profile_json(const xpb_session *s);

#endif
