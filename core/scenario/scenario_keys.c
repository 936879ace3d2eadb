/* The run key table and its queries (scenario_keys.h). */
#include "scenario/scenario_keys.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xpubench/backend.h>

#include "base/names.h"

static const struct xpb_skey_choice mode_choices[] = {
    {"train", XPB_MODE_TRAIN},
    {"inference", XPB_MODE_INFERENCE},
    {"tta", XPB_MODE_TTA},
    {NULL, 0},
};

/* Synthetic data (the default), or a real dataset of data/dataset.h. */
static const struct xpb_skey_choice data_choices[] = {
    {"synthetic", 0},
    {"fashion-mnist", 1},
    {NULL, 0},
};

static const struct xpb_skey_choice parallel_choices[] = {
    {"auto", XPB_PARALLEL_AUTO},
    {"none", XPB_PARALLEL_NONE},
    {"data", XPB_PARALLEL_DATA},
    {NULL, 0},
};

static const struct xpb_skey_choice transfer_choices[] = {
    {"resident", XPB_TRANSFER_RESIDENT},
    {"streamed", XPB_TRANSFER_STREAMED},
    {NULL, 0},
};

/* The offset of member m of xpb_run_config, which must have type T: a mismatch between a key's
 * type and its member does not compile. */
#define MEMBER(m, T) _Generic(((xpb_run_config *)0)->m, T : offsetof(xpb_run_config, m))
#define STR(m) MEMBER(m, char *)
#define U32(m) MEMBER(m, uint32_t)
#define U64(m) MEMBER(m, uint64_t)
#define F64(m) MEMBER(m, double)

/* clang-format off */
/* Order: the order of docs/scenarios.md and of the key lists in messages. Every key without
 * `required` has its built-in default here, and only here: `def` (a NULL name or a NaN
 * number means "the model's default"). */
static const struct xpb_skey keys[] = {
    {.name = "name", .type = XPB_SKEY_LABEL,
     .help = "label of the run, the start of its ids (default: <model>-<mode>)"},
    {.name = "model", .type = XPB_SKEY_NAME, .offset = STR(model), .required = "a model name",
     .help = "model plugin"},
    {.name = "variant", .type = XPB_SKEY_NAME, .nullable = 1, .offset = STR(variant),
     .def = {.s = NULL}, .help = "model variant; ~: the model's default"},
    {.name = "mode", .type = XPB_SKEY_ENUM, .choices = mode_choices, .offset = U32(mode),
     .def = {.u = XPB_MODE_TRAIN},
     .help = "training step (forward, backward, update), forward only, or time to accuracy "
             "(tta: train on real data until a test accuracy)"},
    {.name = "batch", .type = XPB_SKEY_UINT, .min = 1, .max = 65536, .offset = U32(batch),
     .def = {.u = 64}, .help = "samples per step"},
    {.name = "precision", .type = XPB_SKEY_PRECISION, .offset = U32(precision),
     .def = {.u = XPB_PRECISION_FP32},
     .help = "precision policy (bf16 and fp16 keep fp32 master weights)"},
    {.name = "allow_emulated", .type = XPB_SKEY_BOOL, .offset = U32(allow_emulated),
     .def = {.u = 0},
     .help = "run a precision the device only emulates (refused as unsupported otherwise)"},
    {.name = "allow_unsupported", .type = XPB_SKEY_BOOL, .offset = U32(allow_unsupported),
     .def = {.u = 0},
     .help = "an unsupported run (backend absent, refused, no device) is expected: "
             "`xpubench run` does not exit 6 for it"},
    {.name = "backend", .type = XPB_SKEY_NAME, .offset = STR(backend),
     .def = {.s = XPB_REFERENCE_BACKEND}, .help = "backend plugin"},
    {.name = "fusion", .type = XPB_SKEY_BOOL, .offset = U32(fusion), .def = {.u = 1},
     .help = "let the backend fuse ops; false: one kernel per op"},
    {.name = "threads", .type = XPB_SKEY_UINT, .max = 4096, .offset = U32(threads),
     .def = {.u = 0}, .help = "host threads the backend may use; 0: the backend's default"},
    {.name = "device", .type = XPB_SKEY_UINT, .max = 1024, .offset = U32(device),
     .def = {.u = 0}, .help = "device index for the backend"},
    {.name = "warmup", .type = XPB_SKEY_UINT, .max = 100000, .offset = U32(warmup),
     .def = {.u = 3}, .help = "untimed steps before each repeat"},
    {.name = "min_steps", .type = XPB_SKEY_UINT, .min = 1, .max = 10000000,
     .offset = U32(min_steps), .def = {.u = 20},
     .help = "each repeat times at least this many steps ..."},
    {.name = "min_time", .type = XPB_SKEY_FLOAT, .fmax = 86400.0, .offset = F64(min_time),
     .def = {.f = 2.0}, .help = "... and at least this many seconds"},
    {.name = "max_steps", .type = XPB_SKEY_UINT, .max = 10000000, .offset = U32(max_steps),
     .def = {.u = 0}, .help = "cap on timed steps per repeat, at least min_steps; 0: none"},
    {.name = "repeats", .type = XPB_SKEY_UINT, .min = 1, .max = 1000, .offset = U32(repeats),
     .def = {.u = 3}, .help = "timed repeats; throughput is the median over them"},
    {.name = "seed", .type = XPB_SKEY_U64, .max = UINT64_MAX, .offset = U64(seed),
     .def = {.u = 42}, .help = "seed of weight initialisation and synthetic data"},
    {.name = "data", .type = XPB_SKEY_WORD, .choices = data_choices, .offset = STR(data),
     .def = {.u = 0}, .help = "input data: synthetic, or a real dataset"},
    {.name = "target", .type = XPB_SKEY_FLOAT, .fmin = 0.0, .fmax = 1.0, .offset = F64(target),
     .def = {.f = 0.9}, .help = "tta: the test accuracy to reach"},
    {.name = "eval_every", .type = XPB_SKEY_FLOAT, .fmin = 0.01, .fmax = 1000.0,
     .offset = F64(eval_every), .def = {.f = 1.0},
     .help = "tta: epochs between evaluations of the test accuracy"},
    {.name = "max_epochs", .type = XPB_SKEY_UINT, .min = 1, .max = 10000,
     .offset = U32(max_epochs), .def = {.u = 30},
     .help = "tta: a run that has not reached the target by then has not converged"},
    {.name = "runs", .type = XPB_SKEY_UINT, .min = 1, .max = 100, .offset = U32(tta_runs),
     .def = {.u = 5},
     .help = "tta: independent runs (seeds seed, seed+1, ...), scored by their Olympic mean"},
    {.name = "transfer", .type = XPB_SKEY_ENUM, .choices = transfer_choices,
     .offset = U32(transfer), .def = {.u = XPB_TRANSFER_RESIDENT},
     .help = "streamed: copy each step's batch from the host inside the timed region"},
    {.name = "lr", .type = XPB_SKEY_FLOAT, .nullable = 1, .fmax = INFINITY, .offset = F64(lr),
     .def = {.f = NAN}, .help = "learning rate of the model's optimizer; ~: the model's default"},
    {.name = "momentum", .type = XPB_SKEY_FLOAT, .nullable = 1, .fmax = INFINITY,
     .offset = F64(momentum), .def = {.f = NAN},
     .help = "SGD momentum; ~: the model's default"},
    {.name = "weight_decay", .type = XPB_SKEY_FLOAT, .nullable = 1, .fmax = INFINITY,
     .offset = F64(weight_decay), .def = {.f = NAN},
     .help = "L2 weight decay; ~: the model's default"},
    {.name = "verify", .type = XPB_SKEY_BOOL, .offset = U32(verify), .def = {.u = 0},
     .help = "check the first step against the reference backend before timing"},
    {.name = "profile", .type = XPB_SKEY_BOOL, .offset = U32(profile), .def = {.u = 0},
     .help = "ask the backend for per-op times (not the throughput to publish)"},
    {.name = "parallel", .type = XPB_SKEY_ENUM, .choices = parallel_choices,
     .offset = U32(parallel), .def = {.u = XPB_PARALLEL_AUTO},
     .help = "several ranks (mpirun, srun): data (one model, gradients averaged), none "
             "(independent replicas); auto: data when launched with more than one rank"},
    {.name = "bucket_mb", .type = XPB_SKEY_FLOAT, .fmax = 65536.0, .offset = F64(bucket_mb),
     .def = {.f = 25.0},
     .help = "data-parallel: MiB of gradients averaged by one all-reduce; 0: one per gradient"},
    {.name = "scaling_baseline", .type = XPB_SKEY_NAME, .nullable = 1,
     .offset = STR(scaling_baseline), .def = {.s = NULL},
     .help = "results file (next to the scenario) with the one-rank run that scaling "
             "efficiency divides by; ~: measure it in the same invocation"},
    {.name = "params", .type = XPB_SKEY_PARAMS,
     .help = "model parameters: name -> value or list of values"},
};
/* clang-format on */

#undef MEMBER
#undef STR
#undef U32
#undef U64
#undef F64

_Static_assert(sizeof keys / sizeof keys[0] <= XPB_SKEY_MAX, "raise XPB_SKEY_MAX");

const struct xpb_skey *xpb_skey_table(size_t *count)
{
    *count = sizeof keys / sizeof keys[0];
    return keys;
}

const struct xpb_skey *xpb_skey_find(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strlen(keys[i].name) == len && memcmp(keys[i].name, name, len) == 0)
            return &keys[i];
    return NULL;
}

xpb_status xpb_skey_defaults(xpb_run_config *rc)
{
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        xpb_status st = xpb_skey_store(rc, &keys[i], &keys[i].def);
        if (st != XPB_OK)
            return st;
    }
    return XPB_OK;
}

/* Replaces the string member at `slot` with a copy of `text` (NULL stays NULL). */
static xpb_status store_string(char **slot, const char *text)
{
    char *copy = NULL;
    if (text && !(copy = strdup(text)))
        return XPB_OUT_OF_MEMORY;
    free(*slot);
    *slot = copy;
    return XPB_OK;
}

/* The canonical spelling of value u of an ENUM, WORD or PRECISION key (static), or NULL. */
static const char *word_of(const struct xpb_skey *key, uint64_t u)
{
    if (key->type == XPB_SKEY_PRECISION) {
        for (const xpb_precision_spelling *p = xpb_precision_spellings; p->name; p++)
            if (p->precision == u)
                return p->alias;
        return NULL;
    }
    for (const struct xpb_skey_choice *c = key->choices; c && c->word; c++)
        if (c->value == u)
            return c->word;
    return NULL;
}

xpb_status xpb_skey_store(xpb_run_config *rc, const struct xpb_skey *key,
                          const struct xpb_svalue *v)
{
    char *member = (char *)rc + key->offset;
    switch (key->type) {
    case XPB_SKEY_NAME:
        return store_string((char **)member, v->s);
    case XPB_SKEY_WORD:
        return store_string((char **)member, word_of(key, v->u));
    case XPB_SKEY_ENUM:
    case XPB_SKEY_PRECISION:
    case XPB_SKEY_UINT:
    case XPB_SKEY_BOOL:
        *(uint32_t *)member = (uint32_t)v->u;
        return XPB_OK;
    case XPB_SKEY_U64:
        *(uint64_t *)member = v->u;
        return XPB_OK;
    case XPB_SKEY_FLOAT:
        *(double *)member = v->f;
        return XPB_OK;
    default: /* LABEL and PARAMS: no member; the expansion uses them */
        return XPB_OK;
    }
}

/* "one of fp32, tf32, bf16, fp16, bf16-mixed, fp16-mixed": the short spellings first, then
 * the long names that differ from them. Returns buf. */
static char *precision_expected(char *buf, size_t size)
{
    size_t o = (size_t)snprintf(buf, size, "one of");
    const char *sep = " ";
    for (const xpb_precision_spelling *p = xpb_precision_spellings; p->name && o < size; p++) {
        o += (size_t)snprintf(buf + o, size - o, "%s%s", sep, p->alias);
        sep = ", ";
    }
    for (const xpb_precision_spelling *p = xpb_precision_spellings; p->name && o < size; p++)
        if (strcmp(p->name, p->alias) != 0)
            o += (size_t)snprintf(buf + o, size - o, ", %s", p->name);
    return buf;
}

char *xpb_skey_expected(char *buf, size_t size, const struct xpb_skey *key)
{
    const char *model_default = key->nullable ? " (or ~ for the model's default)" : "";
    size_t o = 0;
    switch (key->type) {
    case XPB_SKEY_LABEL:
    case XPB_SKEY_NAME:
        snprintf(buf, size, "a name of letters, digits, '_', '.' or '-'%s", model_default);
        break;
    case XPB_SKEY_ENUM:
    case XPB_SKEY_WORD:
        o = (size_t)snprintf(buf, size, "one of");
        for (const struct xpb_skey_choice *c = key->choices; c->word && o < size; c++)
            o +=
                (size_t)snprintf(buf + o, size - o, "%s %s", c == key->choices ? "" : ",", c->word);
        break;
    case XPB_SKEY_PRECISION:
        precision_expected(buf, size);
        break;
    case XPB_SKEY_UINT:
    case XPB_SKEY_U64:
        snprintf(buf, size, "an integer %llu..%llu", (unsigned long long)key->min,
                 (unsigned long long)key->max);
        break;
    case XPB_SKEY_FLOAT:
        if (isinf(key->fmax))
            snprintf(buf, size, "a number >= %g%s", key->fmin, model_default);
        else
            snprintf(buf, size, "a number %g..%g", key->fmin, key->fmax);
        break;
    case XPB_SKEY_BOOL:
        snprintf(buf, size, "true or false");
        break;
    default:
        snprintf(buf, size, "a mapping of model parameter names to values");
        break;
    }
    return buf;
}

char *xpb_skey_format(char *buf, size_t size, const struct xpb_skey *key,
                      const struct xpb_svalue *v)
{
    switch (key->type) {
    case XPB_SKEY_UINT:
    case XPB_SKEY_U64:
        snprintf(buf, size, "%llu", (unsigned long long)v->u);
        break;
    case XPB_SKEY_BOOL:
        snprintf(buf, size, "%s", v->u ? "true" : "false");
        break;
    case XPB_SKEY_FLOAT:
        if (isnan(v->f)) {
            snprintf(buf, size, "default");
            break;
        }
        /* The shortest %g that reads back as the same double. */
        for (int prec = 1; prec <= 17; prec++) {
            snprintf(buf, size, "%.*g", prec, v->f);
            if (strtod(buf, NULL) == v->f)
                break;
        }
        break;
    case XPB_SKEY_ENUM:
    case XPB_SKEY_WORD:
    case XPB_SKEY_PRECISION: {
        const char *word = word_of(key, v->u);
        snprintf(buf, size, "%s", word ? word : "?");
        break;
    }
    default: /* names as written, "default" for null */
        snprintf(buf, size, "%s", v->s ? v->s : "default");
        break;
    }
    return buf;
}

int xpb_is_name(const char *text, size_t len)
{
    if (len == 0 || len > 128)
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return 0;
    }
    return 1;
}

int xpb_is_param_name(const char *text, size_t len)
{
    if (len == 0 || len > 64)
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
            return 0;
    }
    return 1;
}
