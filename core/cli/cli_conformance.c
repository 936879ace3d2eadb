/* `xpubench conformance --backend NAME ...`: the conformance suite (conformance.h) from the
 * command line. Exit 0 when every case passes, 1 when one fails (or is unsupported, unless
 * --allow-unsupported), 2 on a usage error, 4 when a backend is missing or cannot open. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "render/terminal.h"
#include "cli/cli_common.h"
#include "check/conformance.h"
#include "base/names.h"
#include "plugin/guard.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: xpubench conformance --backend NAME [--precision P] [--fusion on|off]\n"
            "                            [--threads N] [--quick] [--no-models] [--filter TEXT]\n"
            "                            [--seed N] [--json FILE] [--allow-unsupported] [-v]\n\n"
            "Runs every op of op set %d at several shapes, small fused chains and one training\n"
            "step of every model plugin (reduced size) on backend NAME and on the reference\n"
            "backend %s with identical inputs, and prints per case the largest absolute\n"
            "difference and the relative error ||x - ref|| / ||ref|| (floored; see\n"
            "docs/conformance.md) against the tolerance of the precision policy (ops: fp32\n"
            "1e-4, tf32 and fp16 2e-2, bf16 5e-2).\n\n"
            "  --backend NAME        the backend under test (see `xpubench list`)\n"
            "  --precision P         precision policy for NAME: fp32 (default), tf32, bf16\n"
            "                        (bf16-mixed) or fp16 (fp16-mixed)\n"
            "  --fusion on|off       compile option fusion for NAME (default on)\n"
            "  --threads N           compile option threads for NAME (default: its own)\n"
            "  --quick               fewer shapes, and no heavy model (seconds, not minutes)\n"
            "  --no-models           op and chain cases only\n"
            "  --filter TEXT         only cases whose name contains TEXT (e.g. CONV2D, model)\n"
            "  --seed N              input data seed (default 1)\n"
            "  --json FILE           also write the results as JSON\n"
            "  -v, --verbose         one line per compared tensor\n"
            "  --allow-unsupported   cases NAME refuses (UNSUPPORTED) do not fail the run\n\n"
            "Exit status: 0 all cases pass, 1 a case failed, 2 usage error, 4 backend missing,\n"
            "5 a backend crashed (stderr names it, its entry point and the case; the rows\n"
            "above it and in --json FILE are kept).\n",
            XPB_OPSET_VERSION, XPB_REFERENCE_BACKEND);
}

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-')
        return -1;
    *out = v;
    return 0;
}

/* What the command line asks for besides the suite's options. */
typedef struct cli_request {
    const char *backend;
    int allow_unsupported;
} cli_request;

/* Option `a` that takes value `v` into opt / req; XPB_EXIT_USAGE with a message when the value
 * is bad, -1 when it is fine. */
static int parse_value(xpb_conformance_options *opt, cli_request *req, const char *a, const char *v)
{
    uint64_t n;
    if (strcmp(a, "--backend") == 0) {
        req->backend = v;
    } else if (strcmp(a, "--precision") == 0) {
        if (xpb_precision_parse(&opt->precision, v) != 0) {
            fprintf(stderr, "xpubench conformance: --precision '%s': expected %s\n", v,
                    xpb_precision_expected());
            return XPB_EXIT_USAGE;
        }
    } else if (strcmp(a, "--fusion") == 0) {
        if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0) {
            fprintf(stderr, "xpubench conformance: --fusion '%s': expected on or off\n", v);
            return XPB_EXIT_USAGE;
        }
        opt->fusion = strcmp(v, "on") == 0;
    } else if (strcmp(a, "--threads") == 0) {
        if (parse_u64(v, &n) || n > 4096) {
            fprintf(stderr, "xpubench conformance: --threads '%s': expected 0..4096\n", v);
            return XPB_EXIT_USAGE;
        }
        opt->threads = (uint32_t)n;
    } else if (strcmp(a, "--seed") == 0) {
        if (parse_u64(v, &opt->seed)) {
            fprintf(stderr, "xpubench conformance: --seed '%s': expected an integer\n", v);
            return XPB_EXIT_USAGE;
        }
    } else if (strcmp(a, "--filter") == 0) {
        opt->filter = v;
    } else {
        opt->json_path = v; /* --json */
    }
    return -1;
}

/* Option `a` without a value; XPB_EXIT_OK after --help, XPB_EXIT_USAGE when unknown, -1 when
 * it is fine. */
static int parse_flag(xpb_conformance_options *opt, cli_request *req, const char *a)
{
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
        usage(stdout);
        return XPB_EXIT_OK;
    } else if (strcmp(a, "--quick") == 0) {
        opt->quick = 1;
    } else if (strcmp(a, "--verbose") == 0 || strcmp(a, "-v") == 0) {
        opt->verbose = 1;
    } else if (strcmp(a, "--no-models") == 0) {
        opt->models = 0;
    } else if (strcmp(a, "--allow-unsupported") == 0) {
        req->allow_unsupported = 1;
    } else {
        fprintf(stderr, "xpubench conformance: unknown argument '%s'\n", a);
        usage(stderr);
        return XPB_EXIT_USAGE;
    }
    return -1;
}

/* The command line into opt / req: -1 to run the suite, otherwise the exit status. */
static int parse_args(xpb_conformance_options *opt, cli_request *req, int argc, char **argv)
{
    static const char *const valued[] = {"--backend", "--precision", "--fusion", "--threads",
                                         "--filter",  "--seed",      "--json"};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int takes = 0;
        for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++)
            takes |= strcmp(a, valued[k]) == 0;
        if (takes && i + 1 >= argc) {
            fprintf(stderr, "xpubench conformance: %s needs a value\n", a);
            return XPB_EXIT_USAGE;
        }
        int rc = takes ? parse_value(opt, req, a, argv[++i]) : parse_flag(opt, req, a);
        if (rc >= 0)
            return rc;
    }
    if (!req->backend) {
        fprintf(stderr, "xpubench conformance: --backend NAME is required\n");
        usage(stderr);
        return XPB_EXIT_USAGE;
    }
    return -1;
}

int xpb_cli_conformance(int argc, char **argv)
{
    xpb_conformance_options opt;
    xpb_conformance_defaults(&opt);
    cli_request req = {NULL, 0};
    int rc = parse_args(&opt, &req, argc, argv);
    if (rc >= 0)
        return rc;
    xpb_registry *r = xpb_cli_registry(0);
    if (!r)
        return XPB_EXIT_PLUGIN;
    xpb_conformance_summary sum;
    xpb_err err = {{0}};
    if (opt.json_path)
        xpb_guard_epilogue("rows above were kept, and in %s", opt.json_path);
    else
        xpb_guard_epilogue("rows above were kept");
    xpb_status st = xpb_conformance_run(&sum, r, req.backend, &opt, &err);
    xpb_registry_free(r);
    if (st != XPB_OK) {
        xpb_term_line(stderr, "xpubench conformance: %s", err.msg);
        return st == XPB_NOT_FOUND || st == XPB_NO_DEVICE || st == XPB_INCOMPATIBLE
                   ? XPB_EXIT_PLUGIN
                   : XPB_EXIT_FAILURE;
    }
    int ok = sum.failed == 0 && (req.allow_unsupported || sum.unsupported == 0);
    return ok ? XPB_EXIT_OK : XPB_EXIT_FAILURE;
}
