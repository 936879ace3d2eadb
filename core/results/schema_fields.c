/* The field tables of the results schema (see schema_fields.h), one per object of
 * docs/results.md, in the page's order. */
#include "results/schema_fields.h"

#include <stddef.h>

#include "base/names.h"
#include "results/schema_version.h"

/* One-line initialisers; clang-format would spread each macro over four lines. */
/* clang-format off */
#define STR(k, f) {k, XPB_SK_STRING, f, XPB_SR_ANY, NULL, NULL, 1}
#define INT(k, f, r) {k, XPB_SK_INT, f, r, NULL, NULL, 1}
#define NUM(k, f, r) {k, XPB_SK_NUMBER, f, r, NULL, NULL, 1}
#define BOOL(k, f) {k, XPB_SK_BOOL, f, XPB_SR_ANY, NULL, NULL, 1}
#define ENUM(k, f, n) {k, XPB_SK_ENUM, f, XPB_SR_ANY, n, NULL, 1}
#define OBJ(k, f, s) {k, XPB_SK_OBJECT, f, XPB_SR_ANY, NULL, s, 1}
#define ARR(k, f, e) {k, XPB_SK_ARRAY, f, XPB_SR_ANY, NULL, e, 1}
#define SPECIAL(k, kind, f) {k, kind, f, XPB_SR_ANY, NULL, NULL, 1}
#define END {NULL, 0, 0, 0, NULL, NULL, 1}
/* Fields introduced by schema version 2. */
#define STR2(k, f) {k, XPB_SK_STRING, f, XPB_SR_ANY, NULL, NULL, 2}
#define INT2(k, f, r) {k, XPB_SK_INT, f, r, NULL, NULL, 2}
#define NUM2(k, f, r) {k, XPB_SK_NUMBER, f, r, NULL, NULL, 2}
#define BOOL2(k, f) {k, XPB_SK_BOOL, f, XPB_SR_ANY, NULL, NULL, 2}
#define ENUM2(k, f, n) {k, XPB_SK_ENUM, f, XPB_SR_ANY, n, NULL, 2}
#define OBJ2(k, f, s) {k, XPB_SK_OBJECT, f, XPB_SR_ANY, NULL, s, 2}
#define ARR2(k, f, e) {k, XPB_SK_ARRAY, f, XPB_SR_ANY, NULL, e, 2}
#define MAP2(k, f, n, e) {k, XPB_SK_MAP, f, XPB_SR_ANY, n, e, 2}
/* Fields introduced by schema version 3 (time to accuracy). */
#define STR3(k, f) {k, XPB_SK_STRING, f, XPB_SR_ANY, NULL, NULL, 3}
#define INT3(k, f, r) {k, XPB_SK_INT, f, r, NULL, NULL, 3}
#define NUM3(k, f, r) {k, XPB_SK_NUMBER, f, r, NULL, NULL, 3}
#define BOOL3(k, f) {k, XPB_SK_BOOL, f, XPB_SR_ANY, NULL, NULL, 3}
#define OBJ3(k, f, s) {k, XPB_SK_OBJECT, f, XPB_SR_ANY, NULL, s, 3}
#define ARR3(k, f, e) {k, XPB_SK_ARRAY, f, XPB_SR_ANY, NULL, e, 3}
/* clang-format on */

static const char *const schema_names[] = {XPB_RESULTS_SCHEMA, NULL};
static const char *const tool_names[] = {"xpubench", NULL};
static const char *const plugin_kinds[] = {"backend", "model", NULL};
static const char *const statuses[] = {"ok", "unsupported", "failed", "interrupted", NULL};
static const char *const modes[] = {"train", "inference", "tta", NULL};
static const char *const energy_sources[] = {"backend", "rapl", NULL};
static const char *const stop_reasons[] = {"diverged", "stalled", NULL};
static const char *const transfers[] = {"resident", "streamed", NULL};
static const char *const optimizers[] = {"sgd", "adam", "adamw", NULL};
static const char *const units[] = {"samples/s", NULL};
static const char *const comparison_kinds[] = {"backend", "fusion", "precision", NULL};
static const char *const comparison_metrics[] = {"throughput", NULL};
static const char *const energy_domains[] = {"package", "dram", NULL};
static const char *const parallel_modes[] = {"none", "data", NULL};
static const char *const baseline_sources[] = {"measured", "file", NULL};

static const struct xpb_schema_field string_element[] = {STR(NULL, XPB_SF_REQ)};

static const struct xpb_schema_field tool_fields[] = {
    ENUM("name", XPB_SF_REQ, tool_names),
    STR("version", XPB_SF_REQ | XPB_SF_NONEMPTY),
    END,
};

static const struct xpb_schema_field scenario_fields[] = {
    STR("path", XPB_SF_REQ),
    STR("name", XPB_SF_REQ),
    SPECIAL("sha256", XPB_SK_SHA256, XPB_SF_REQ),
    ARR("overrides", XPB_SF_REQ, string_element),
    STR2("baseline", XPB_SF_REQ | XPB_SF_NULL),
    END,
};

static const struct xpb_schema_field cpu_fields[] = {
    STR("model", XPB_SF_REQ),
    INT("cores", XPB_SF_REQ, XPB_SR_GE1),
    INT("logical_cpus", XPB_SF_REQ, XPB_SR_GE1),
    ARR("flags", XPB_SF_REQ, string_element),
    END,
};

static const struct xpb_schema_field accelerator_fields[] = {
    STR("name", XPB_SF_REQ),
    STR("driver", XPB_SF_REQ),
    END,
};
static const struct xpb_schema_field accelerator_element[] = {
    OBJ(NULL, XPB_SF_REQ, accelerator_fields)};

static const struct xpb_schema_field plugin_fields[] = {
    STR("name", XPB_SF_REQ | XPB_SF_NONEMPTY),
    ENUM("kind", XPB_SF_REQ, plugin_kinds),
    STR("version", XPB_SF_REQ),
    SPECIAL("abi", XPB_SK_ABI, XPB_SF_REQ),
    STR("path", XPB_SF_REQ),
    END,
};
static const struct xpb_schema_field plugin_element[] = {OBJ(NULL, XPB_SF_REQ, plugin_fields)};

static const struct xpb_schema_field environment_fields[] = {
    STR("os", XPB_SF_REQ),
    STR("kernel", XPB_SF_REQ),
    OBJ("cpu", XPB_SF_REQ, cpu_fields),
    INT("memory_bytes", XPB_SF_REQ, XPB_SR_GE0),
    STR("compiler", XPB_SF_REQ),
    SPECIAL("libraries", XPB_SK_STRMAP, XPB_SF_REQ),
    ARR("accelerators", XPB_SF_REQ, accelerator_element),
    ARR("plugins", XPB_SF_REQ, plugin_element),
    END,
};

static const struct xpb_schema_field optimizer_fields[] = {
    ENUM("kind", XPB_SF_REQ, optimizers),
    NUM("lr", XPB_SF_REQ, XPB_SR_GE0),
    NUM("momentum", XPB_SF_REQ, XPB_SR_GE0),
    NUM("weight_decay", XPB_SF_REQ, XPB_SR_GE0),
    NUM("beta1", XPB_SF_REQ, XPB_SR_01),
    NUM("beta2", XPB_SF_REQ, XPB_SR_01),
    NUM("eps", XPB_SF_REQ, XPB_SR_GE0),
    NUM("clip_grad_norm", 0, XPB_SR_GT0),
    END,
};

static const struct xpb_schema_field config_fields[] = {
    STR("model", XPB_SF_REQ | XPB_SF_NONEMPTY),
    STR("variant", XPB_SF_REQ),
    ENUM("mode", XPB_SF_REQ, modes),
    INT("batch", XPB_SF_REQ, XPB_SR_GE1),
    ENUM("precision", XPB_SF_REQ, xpb_precision_names),
    STR("backend", XPB_SF_REQ | XPB_SF_NONEMPTY),
    BOOL("fusion", XPB_SF_REQ),
    INT("threads", XPB_SF_REQ, XPB_SR_GE0),
    INT("device", XPB_SF_REQ, XPB_SR_GE0),
    INT("warmup", XPB_SF_REQ, XPB_SR_GE0),
    INT("min_steps", XPB_SF_REQ, XPB_SR_GE0),
    NUM("min_time_s", XPB_SF_REQ, XPB_SR_GE0),
    INT("max_steps", XPB_SF_REQ, XPB_SR_GE0),
    INT("repeats", XPB_SF_REQ, XPB_SR_GE1),
    INT("seed", XPB_SF_REQ, XPB_SR_GE0),
    STR("data", XPB_SF_REQ | XPB_SF_NONEMPTY),
    ENUM("transfer", XPB_SF_REQ, transfers),
    OBJ("optimizer", 0, optimizer_fields),
    SPECIAL("params", XPB_SK_STRMAP, XPB_SF_REQ),
    BOOL2("allow_emulated", XPB_SF_REQ),
    ENUM2("parallel", 0, parallel_modes),
    INT2("world_size", 0, XPB_SR_GE1),
    END,
};

static const struct xpb_schema_field model_fields[] = {
    INT("parameters", XPB_SF_REQ, XPB_SR_GE0),
    INT("flops_per_sample_forward", XPB_SF_REQ, XPB_SR_GE0),
    INT("flops_per_sample_train", XPB_SF_REQ, XPB_SR_GE0),
    INT("layers", XPB_SF_REQ, XPB_SR_GE0),
    INT3("bytes_per_sample", 0, XPB_SR_GE0),
    INT3("tokens_per_sample", 0, XPB_SR_GE1),
    INT3("flops_per_token_forward", 0, XPB_SR_GE0),
    INT3("flops_per_token_train", 0, XPB_SR_GE0),
    END,
};

static const char *const device_kinds[] = {"cpu", "gpu", "accelerator", "unknown", NULL};
static const char *const precision_support[] = {"native", "emulated", NULL};
static const struct xpb_schema_field precision_support_element[] = {
    ENUM(NULL, XPB_SF_REQ, precision_support)};

static const struct xpb_schema_field device_fields[] = {
    STR("name", XPB_SF_REQ),
    STR("driver", XPB_SF_REQ),
    STR("libraries", XPB_SF_REQ),
    INT("threads", XPB_SF_REQ, XPB_SR_GE0),
    {"peak_flops", XPB_SK_NUMMAP, XPB_SF_REQ, XPB_SR_GE0, xpb_precision_names, NULL, 1},
    ARR2("capabilities", XPB_SF_REQ, string_element),
    ENUM2("kind", XPB_SF_REQ, device_kinds),
    MAP2("precisions", XPB_SF_REQ, xpb_precision_names, precision_support_element),
    STR3("peak_flops_source", XPB_SF_NULL),
    NUM3("memory_bandwidth", XPB_SF_NULL, XPB_SR_GE0),
    STR3("memory_bandwidth_source", XPB_SF_NULL),
    NUM3("datasheet_bandwidth", XPB_SF_NULL, XPB_SR_GE0),
    {"datasheet_peak_flops", XPB_SK_NUMMAP, 0, XPB_SR_GE0, xpb_precision_names, NULL, 3},
    END,
};

static const struct xpb_schema_field throughput_fields[] = {
    NUM("median", XPB_SF_REQ, XPB_SR_GE0),
    NUM("min", XPB_SF_REQ, XPB_SR_GE0),
    NUM("max", XPB_SF_REQ, XPB_SR_GE0),
    ENUM("unit", XPB_SF_REQ, units),
    NUM2("ci95_low", XPB_SF_REQ | XPB_SF_NULL, XPB_SR_GE0),
    NUM2("ci95_high", XPB_SF_REQ | XPB_SF_NULL, XPB_SR_GE0),
    END,
};

static const struct xpb_schema_field repeat_fields[] = {
    INT("steps", XPB_SF_REQ, XPB_SR_GE0),
    NUM("seconds", XPB_SF_REQ, XPB_SR_GE0),
    NUM("throughput", XPB_SF_REQ, XPB_SR_GE0),
    END,
};
static const struct xpb_schema_field repeat_element[] = {OBJ(NULL, XPB_SF_REQ, repeat_fields)};

static const struct xpb_schema_field step_time_fields[] = {
    NUM("mean", XPB_SF_REQ, XPB_SR_GE0), NUM("p50", XPB_SF_REQ, XPB_SR_GE0),
    NUM("p95", XPB_SF_REQ, XPB_SR_GE0),  NUM("p99", XPB_SF_REQ, XPB_SR_GE0),
    NUM("cv", XPB_SF_REQ, XPB_SR_GE0),   END,
};

static const struct xpb_schema_field memory_fields[] = {
    INT("host_peak_rss_bytes", XPB_SF_REQ, XPB_SR_GE0),
    INT("device_bytes_in_use", XPB_SF_REQ | XPB_SF_NULL, XPB_SR_GE0),
    INT("device_peak_bytes", XPB_SF_REQ | XPB_SF_NULL, XPB_SR_GE0),
    INT2("host_run_peak_bytes", XPB_SF_REQ | XPB_SF_NULL, XPB_SR_GE0),
    END,
};

static const struct xpb_schema_field energy_fields[] = {
    BOOL("measured", XPB_SF_REQ),
    STR("source", XPB_SF_REQ | XPB_SF_NULL),
    NUM("joules", XPB_SF_REQ | XPB_SF_NULL, XPB_SR_GE0),
    NUM("samples_per_joule", XPB_SF_REQ | XPB_SF_NULL, XPB_SR_GE0),
    NUM2("watts", XPB_SF_REQ | XPB_SF_NULL, XPB_SR_GE0),
    STR2("reason", XPB_SF_REQ | XPB_SF_NULL),
    {"domains", XPB_SK_NUMMAP, 0, XPB_SR_GE0, energy_domains, NULL, 2},
    END,
};

static const struct xpb_schema_field loss_point_fields[] = {
    INT("step", XPB_SF_REQ, XPB_SR_GE1),
    NUM("loss", XPB_SF_REQ, XPB_SR_ANY),
    END,
};
static const struct xpb_schema_field loss_point_element[] = {
    OBJ(NULL, XPB_SF_REQ, loss_point_fields)};

static const struct xpb_schema_field loss_fields[] = {
    NUM("first", XPB_SF_REQ | XPB_SF_NULL, XPB_SR_ANY),
    NUM("last", XPB_SF_REQ | XPB_SF_NULL, XPB_SR_ANY),
    ARR2("series", XPB_SF_REQ, loss_point_element),
    END,
};

static const struct xpb_schema_field interference_fields[] = {
    NUM("other_cpu_share", XPB_SF_REQ | XPB_SF_NULL, XPB_SR_01),
    NUM("steal_share", XPB_SF_REQ | XPB_SF_NULL, XPB_SR_01),
    NUM("load_1m", XPB_SF_REQ | XPB_SF_NULL, XPB_SR_GE0),
    BOOL("flagged", XPB_SF_REQ),
    END,
};

static const struct xpb_schema_field rank_fields[] = {
    INT2("rank", XPB_SF_REQ, XPB_SR_GE0),
    STR2("host", XPB_SF_REQ),
    INT2("local_rank", XPB_SF_REQ, XPB_SR_GE0),
    STR2("device", XPB_SF_REQ),
    INT2("device_index", XPB_SF_REQ, XPB_SR_GE0),
    INT2("threads", XPB_SF_REQ, XPB_SR_GE0),
    NUM2("throughput", XPB_SF_REQ, XPB_SR_GE0),
    NUM2("step_p50_s", XPB_SF_REQ, XPB_SR_GE0),
    END,
};
static const struct xpb_schema_field rank_element[] = {OBJ2(NULL, XPB_SF_REQ, rank_fields)};

static const struct xpb_schema_field communication_fields[] = {
    INT2("all_reduces", XPB_SF_REQ, XPB_SR_GE0),
    INT2("bytes_per_step", XPB_SF_REQ, XPB_SR_GE0),
    NUM2("seconds_per_step", XPB_SF_REQ, XPB_SR_GE0),
    NUM2("share", XPB_SF_REQ | XPB_SF_NULL, XPB_SR_GE0),
    END,
};

static const struct xpb_schema_field scaling_baseline_fields[] = {
    NUM2("throughput", XPB_SF_REQ | XPB_SF_NULL, XPB_SR_GE0),
    ENUM2("source", XPB_SF_REQ, baseline_sources),
    STR2("file", XPB_SF_REQ | XPB_SF_NULL),
    STR2("reason", XPB_SF_REQ | XPB_SF_NULL),
    END,
};

static const struct xpb_schema_field parallel_fields[] = {
    INT2("world_size", XPB_SF_REQ, XPB_SR_GE1),
    INT2("hosts", XPB_SF_REQ, XPB_SR_GE1),
    ARR2("ranks", XPB_SF_REQ, rank_element),
    OBJ2("communication", XPB_SF_REQ, communication_fields),
    OBJ2("baseline", XPB_SF_REQ, scaling_baseline_fields),
    NUM2("scaling_efficiency", XPB_SF_REQ | XPB_SF_NULL, XPB_SR_GE0),
    END,
};

static const struct xpb_schema_field metrics_fields[] = {
    INT("timed_steps", XPB_SF_REQ, XPB_SR_GE0),
    OBJ("throughput", XPB_SF_REQ, throughput_fields),
    ARR("repeats", XPB_SF_REQ, repeat_element),
    OBJ("step_time_s", XPB_SF_REQ, step_time_fields),
    NUM("flops_per_s", XPB_SF_REQ, XPB_SR_GE0),
    NUM("peak_fraction", XPB_SF_REQ | XPB_SF_NULL, XPB_SR_GE0),
    NUM3("bytes_per_s", 0, XPB_SR_GE0),
    NUM3("bandwidth_fraction", XPB_SF_NULL, XPB_SR_GE0),
    NUM3("tokens_per_s", 0, XPB_SR_GE0),
    OBJ("memory", XPB_SF_REQ, memory_fields),
    OBJ("energy", XPB_SF_REQ, energy_fields),
    OBJ("loss", XPB_SF_REQ, loss_fields),
    NUM("host_overhead_fraction", XPB_SF_REQ, XPB_SR_01),
    OBJ2("interference", XPB_SF_REQ, interference_fields),
    OBJ2("parallel", 0, parallel_fields),
    END,
};

static const struct xpb_schema_field verification_fields[] = {
    BOOL("requested", XPB_SF_REQ), BOOL("verified", XPB_SF_REQ | XPB_SF_NULL),
    STR("reference", XPB_SF_REQ),  NUM("max_rel_error", XPB_SF_REQ | XPB_SF_NULL, XPB_SR_GE0),
    STR("message", XPB_SF_REQ),    END,
};

static const struct xpb_schema_field profile_fields[] = {
    STR("op", XPB_SF_REQ | XPB_SF_NONEMPTY),
    STR("layer", XPB_SF_REQ),
    INT("calls", XPB_SF_REQ, XPB_SR_GE0),
    NUM("seconds", XPB_SF_REQ, XPB_SR_GE0),
    STR("fused_into", XPB_SF_REQ | XPB_SF_NULL),
    INT3("flops", 0, XPB_SR_GE0),
    INT3("bytes", 0, XPB_SR_GE0),
    END,
};
static const struct xpb_schema_field profile_element[] = {OBJ(NULL, XPB_SF_REQ, profile_fields)};

/* mode tta (version 3): docs/results.md, "Time to accuracy" */
static const struct xpb_schema_field tta_point_fields[] = {
    NUM3("epochs", XPB_SF_REQ, XPB_SR_GE0),
    NUM3("seconds", XPB_SF_REQ, XPB_SR_GE0),
    NUM3("accuracy", XPB_SF_REQ, XPB_SR_01),
    NUM3("loss", XPB_SF_NULL, XPB_SR_ANY),
    END,
};
static const struct xpb_schema_field tta_point_element[] = {
    OBJ3(NULL, XPB_SF_REQ, tta_point_fields)};

static const struct xpb_schema_field tta_run_fields[] = {
    INT3("seed", XPB_SF_REQ, XPB_SR_GE0),
    BOOL3("converged", XPB_SF_REQ),
    {"stopped_early", XPB_SK_ENUM, XPB_SF_NULL, XPB_SR_ANY, stop_reasons, NULL, 3},
    NUM3("seconds", XPB_SF_REQ | XPB_SF_NULL, XPB_SR_GE0),
    NUM3("epochs", XPB_SF_REQ | XPB_SF_NULL, XPB_SR_GE0),
    INT3("steps", XPB_SF_REQ, XPB_SR_GE0),
    INT3("samples", XPB_SF_REQ, XPB_SR_GE0),
    NUM3("joules", XPB_SF_REQ | XPB_SF_NULL, XPB_SR_GE0),
    {"energy_source", XPB_SK_ENUM, XPB_SF_REQ | XPB_SF_NULL, XPB_SR_ANY, energy_sources, NULL, 3},
    NUM3("init_seconds", XPB_SF_REQ | XPB_SF_NULL, XPB_SR_GE0),
    NUM3("data_wait_seconds", XPB_SF_REQ | XPB_SF_NULL, XPB_SR_GE0),
    NUM3("final_accuracy", XPB_SF_REQ | XPB_SF_NULL, XPB_SR_01),
    BOOL3("outside_reference", XPB_SF_REQ),
    ARR3("curve", XPB_SF_REQ, tta_point_element),
    END,
};
static const struct xpb_schema_field tta_run_element[] = {OBJ3(NULL, XPB_SF_REQ, tta_run_fields)};

static const struct xpb_schema_field tta_score_fields[] = {
    NUM3("mean", XPB_SF_REQ | XPB_SF_NULL, XPB_SR_GE0),
    INT3("used", XPB_SF_REQ, XPB_SR_GE0),
    INT3("converged", XPB_SF_REQ, XPB_SR_GE0),
    INT3("runs", XPB_SF_REQ, XPB_SR_GE0),
    NUM3("min", XPB_SF_REQ | XPB_SF_NULL, XPB_SR_GE0),
    NUM3("max", XPB_SF_REQ | XPB_SF_NULL, XPB_SR_GE0),
    NUM3("stdev", XPB_SF_REQ | XPB_SF_NULL, XPB_SR_GE0),
    END,
};

static const struct xpb_schema_field normalisation_fields[] = {
    NUM3("mean", XPB_SF_REQ | XPB_SF_NULL, XPB_SR_ANY),
    NUM3("std", XPB_SF_REQ | XPB_SF_NULL, XPB_SR_GE0),
    END,
};

static const struct xpb_schema_field tta_fields[] = {
    STR3("dataset", XPB_SF_REQ | XPB_SF_NONEMPTY),
    INT3("train_samples", XPB_SF_REQ, XPB_SR_GE0),
    INT3("test_samples", XPB_SF_REQ, XPB_SR_GE0),
    OBJ3("normalisation", XPB_SF_REQ, normalisation_fields),
    NUM3("target", XPB_SF_REQ, XPB_SR_01),
    NUM3("eval_every", XPB_SF_REQ, XPB_SR_GT0),
    INT3("max_epochs", XPB_SF_REQ, XPB_SR_GE1),
    ARR3("runs", XPB_SF_REQ, tta_run_element),
    OBJ3("seconds", XPB_SF_REQ, tta_score_fields),
    OBJ3("joules", XPB_SF_REQ, tta_score_fields),
    NUM3("reference_epochs", XPB_SF_REQ | XPB_SF_NULL, XPB_SR_GT0),
    END,
};

static const struct xpb_schema_field run_fields[] = {
    STR("id", XPB_SF_REQ | XPB_SF_NONEMPTY),
    ENUM("status", XPB_SF_REQ, statuses),
    STR("error", 0), /* presence depends on status: check_run */
    OBJ("config", XPB_SF_REQ, config_fields),
    OBJ("model", 0, model_fields),
    OBJ("device", 0, device_fields),
    OBJ("metrics", 0, metrics_fields),
    OBJ("verification", XPB_SF_REQ, verification_fields),
    ARR("profile", 0, profile_element),
    OBJ3("tta", 0, tta_fields),
    END,
};
static const struct xpb_schema_field run_element[] = {OBJ(NULL, XPB_SF_REQ, run_fields)};

static const struct xpb_schema_field comparison_fields[] = {
    ENUM("kind", XPB_SF_REQ, comparison_kinds),
    STR("baseline", XPB_SF_REQ | XPB_SF_NONEMPTY),
    STR("candidate", XPB_SF_REQ | XPB_SF_NONEMPTY),
    ENUM("metric", XPB_SF_REQ, comparison_metrics),
    NUM("speedup", XPB_SF_REQ, XPB_SR_GT0),
    NUM2("ci95_low", XPB_SF_REQ | XPB_SF_NULL, XPB_SR_GT0),
    NUM2("ci95_high", XPB_SF_REQ | XPB_SF_NULL, XPB_SR_GT0),
    BOOL2("significant", XPB_SF_REQ),
    END,
};
static const struct xpb_schema_field comparison_element[] = {
    OBJ(NULL, XPB_SF_REQ, comparison_fields)};

const struct xpb_schema_field xpb_schema_document_fields[] = {
    ENUM("schema", XPB_SF_REQ, schema_names),
    INT("schema_version", XPB_SF_REQ, XPB_SR_GE1), /* 1 or 2, checked first */
    OBJ("tool", XPB_SF_REQ, tool_fields),
    SPECIAL("created", XPB_SK_TIME, XPB_SF_REQ),
    OBJ("scenario", XPB_SF_REQ, scenario_fields),
    OBJ("environment", XPB_SF_REQ, environment_fields),
    ARR("runs", XPB_SF_REQ, run_element),
    ARR("comparisons", XPB_SF_REQ, comparison_element),
    BOOL("interrupted", 0),
    END,
};
