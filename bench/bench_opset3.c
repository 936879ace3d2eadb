/* bench_opset3: microbenchmark of op set 3's heavy ops on cpu_onednn, through the backend's ABI
 * as the host drives it (compile outside the clock, then timed run() calls):
 *
 *   MATMUL 2048 x 2048 x 2048 (a an input, b a parameter)           fp32 and bf16-mixed
 *   LSTM layer, Zaremba's medium PTB model: 35 steps, batch 20, 650 inputs and units
 *     forward (inference, y only)                                    fp32 and bf16-mixed
 *     training (LSTM with its workspace, then LSTM_BWD)              fp32 and bf16-mixed
 *
 * For each it prints the median and best time per run over the repeats, GFLOP/s at the median
 * (matmul 2MNK; LSTM forward 2 T B (I + H) 4H, backward twice that), and that rate as a share
 * of the sgemm peak cpu_onednn measures in device_info (dnnl_sgemm 2048^3; for bf16 also of its
 * measured bf16 peak). The load average is printed before and after: on a shared machine it
 * says how much the numbers are worth.
 *
 * Usage: bench_opset3 [--threads N] [--repeats N] [--plugins DIR] [--only TEXT] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check/conformance_case.h"
#include "plugin/loader.h"

struct bench_opts {
    uint32_t threads;
    int repeats;
    const char *plugins;
    const char *only;
};

/* One benchmark: a program, its FLOPs per run, and the tensors the host writes. */
struct bench {
    const char *name;
    uint32_t precision;
    double flops;
    xpb_ct_case *c;
};

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void print_load(const char *when)
{
    FILE *f = fopen("/proc/loadavg", "r");
    char line[128] = "unknown";
    if (f) {
        if (!fgets(line, sizeof line, f))
            snprintf(line, sizeof line, "unknown\n");
        fclose(f);
    }
    printf("load average %s: %s", when, line);
    if (!strchr(line, '\n'))
        putchar('\n');
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* ---- the programs ---- */

static void build_matmul(xpb_ct_case *c, int64_t n)
{
    uint32_t a = xpb_ct_in(c, "a", 2, n, n, 1, 1), b = xpb_ct_param(c, "b", 2, n, n, 1, 1);
    xpb_ct_op(c, XPB_OP_MATMUL, 2, XPB_CT_T(a, b), 1, XPB_CT_T(xpb_ct_out(c, "y", 2, n, n, 1, 1)));
    xpb_ct_finish(c);
}

/* LSTM over x[t, b, i] with h units; `train`: with its workspace and backward. */
static void build_lstm(xpb_ct_case *c, int64_t t, int64_t b, int64_t i, int64_t h, int train)
{
    uint32_t x = xpb_ct_in(c, "x", 3, t, b, i, 1);
    uint32_t wih = xpb_ct_param(c, "w_ih", 2, 4 * h, i, 1, 1);
    uint32_t whh = xpb_ct_param(c, "w_hh", 2, 4 * h, h, 1, 1);
    uint32_t bih = xpb_ct_param(c, "b_ih", 1, 4 * h, 1, 1, 1);
    uint32_t bhh = xpb_ct_param(c, "b_hh", 1, 4 * h, 1, 1, 1);
    uint32_t y = train ? xpb_ct_mid(c, "y", 3, t, b, h, 1) : xpb_ct_out(c, "y", 3, t, b, h, 1);
    if (!train) {
        xpb_ct_op(c, XPB_OP_LSTM, 5, XPB_CT_T(x, wih, whh, bih, bhh), 1, XPB_CT_T(y));
        xpb_ct_finish(c);
        return;
    }
    uint32_t ws = xpb_ct_tensor(c, "ws", XPB_ROLE_WORKSPACE, 0, 0, 3, t, b, 5 * h, 1);
    xpb_ct_op(c, XPB_OP_LSTM, 5, XPB_CT_T(x, wih, whh, bih, bhh), 4,
              XPB_CT_T(y, XPB_NO_TENSOR, XPB_NO_TENSOR, ws));
    uint32_t dy = xpb_ct_in(c, "dy", 3, t, b, h, 1);
    uint32_t g[5] = {xpb_ct_mid(c, "dx", 3, t, b, i, 1), xpb_ct_out(c, "dw_ih", 2, 4 * h, i, 1, 1),
                     xpb_ct_out(c, "dw_hh", 2, 4 * h, h, 1, 1),
                     xpb_ct_out(c, "db_ih", 1, 4 * h, 1, 1, 1),
                     xpb_ct_out(c, "db_hh", 1, 4 * h, 1, 1, 1)};
    c->t[g[0]].role = XPB_ROLE_ACTIVATION_GRAD;
    xpb_ct_op(c, XPB_OP_LSTM_BWD, 8, XPB_CT_T(dy, XPB_NO_TENSOR, XPB_NO_TENSOR, x, wih, whh, y, ws),
              5, g);
    xpb_ct_finish(c);
}

/* ---- running one ---- */

/* Writes every host-written tensor (uniform values in [-0.5, 0.5)). */
static xpb_status write_inputs(const xpb_backend_api *api, xpb_executable *exe, xpb_ct_case *c)
{
    for (uint32_t t = 0; t < c->n_t; t++) {
        if (!(c->t[t].flags & XPB_TENSOR_HOST_WRITE))
            continue;
        size_t n = (size_t)xpb_tensor_numel(&c->t[t]);
        float *v = malloc(n * sizeof *v);
        if (!v)
            return XPB_OUT_OF_MEMORY;
        uint64_t z = 0x9E3779B97F4A7C15ull * (t + 1);
        for (size_t k = 0; k < n; k++) {
            z = xpb_splitmix64(z);
            v[k] = (float)(z >> 40) * 0x1p-24f - 0.5f;
        }
        xpb_status st = api->write(exe, t, v, n * sizeof *v);
        free(v);
        if (st != XPB_OK)
            return st;
    }
    return XPB_OK;
}

/* Compiles and times one benchmark; prints its row. */
static void run_bench(const xpb_backend_api *api, xpb_backend *be, const struct bench *b,
                      const struct bench_opts *o, const xpb_device_info *dev)
{
    const char *prec = b->precision == XPB_PRECISION_BF16_MIXED ? "bf16" : "fp32";
    if (!(dev->precisions & XPB_PRECISION_BIT(b->precision))) {
        printf("%-34s %-5s not offered by cpu_onednn on this CPU\n", b->name, prec);
        return;
    }
    xpb_ct_bind(b->c);
    xpb_compile_options opt = {
        .struct_size = sizeof opt, .precision = b->precision, .fusion = 1, .threads = o->threads};
    xpb_executable *exe = NULL;
    double t0 = now_seconds();
    xpb_status st = api->compile(&exe, be, &b->c->prog, &opt);
    double compile_s = now_seconds() - t0;
    if (st != XPB_OK) {
        printf("%-34s %-5s compile: %s\n", b->name, prec, api->last_error(be));
        return;
    }
    double *times = calloc((size_t)o->repeats, sizeof *times);
    if (!times || (st = write_inputs(api, exe, b->c)) != XPB_OK) {
        printf("%-34s %-5s writing inputs: %s\n", b->name, prec,
               times ? api->exe_last_error(exe) : "out of memory");
        goto destroy;
    }
    for (int r = -2; r < o->repeats; r++) { /* two warm-up runs */
        double s = now_seconds();
        if ((st = api->run(exe, 0)) != XPB_OK || (st = api->synchronize(exe)) != XPB_OK) {
            printf("%-34s %-5s run: %s\n", b->name, prec, api->exe_last_error(exe));
            goto destroy;
        }
        if (r >= 0)
            times[r] = now_seconds() - s;
    }
    qsort(times, (size_t)o->repeats, sizeof *times, cmp_double);
    double med = times[o->repeats / 2], best = times[0];
    double rate = b->flops / med, sgemm = dev->peak_flops[XPB_PRECISION_FP32];
    double own = dev->peak_flops[b->precision];
    printf("%-34s %-5s %9.2f %9.2f %9.1f %8.0f%%", b->name, prec, med * 1e3, best * 1e3,
           rate * 1e-9, sgemm > 0 ? 100.0 * rate / sgemm : 0.0);
    if (b->precision != XPB_PRECISION_FP32 && own > 0)
        printf("  (%.0f%% of the bf16 peak)", 100.0 * rate / own);
    printf("  [compile %.2f s]\n", compile_s);
destroy:
    free(times);
    api->destroy(exe);
}

static int parse_args(struct bench_opts *o, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--threads") == 0 && v)
            o->threads = (uint32_t)atoi(v);
        else if (strcmp(argv[i], "--repeats") == 0 && v && atoi(v) > 0)
            o->repeats = atoi(v);
        else if (strcmp(argv[i], "--plugins") == 0 && v)
            o->plugins = v;
        else if (strcmp(argv[i], "--only") == 0 && v)
            o->only = v;
        else {
            fprintf(stderr, "usage: %s [--threads N] [--repeats N] [--plugins DIR] [--only TEXT]\n",
                    argv[0]);
            return 2;
        }
        i++;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct bench_opts o = {0, 10, XPB_BENCH_PLUGIN_DIR, NULL};
    int rc = parse_args(&o, argc, argv);
    if (rc)
        return rc;
    xpb_registry *reg = NULL;
    xpb_err err = {{0}};
    if (xpb_registry_load(&reg, &o.plugins, 1, &err) != XPB_OK) {
        fprintf(stderr, "bench_opset3: %s\n", err.msg);
        return 1;
    }
    const xpb_backend_api *api = xpb_registry_backend(reg, "cpu_onednn");
    xpb_backend *be = NULL;
    if (!api || api->open(&be, 0) != XPB_OK) {
        fprintf(stderr, "bench_opset3: cpu_onednn is not in %s or does not open\n", o.plugins);
        xpb_registry_free(reg);
        return 1;
    }
    print_load("before");
    xpb_device_info dev = {.struct_size = sizeof dev};
    api->device_info(be, &dev);
    printf(
        "%s, %s, %u threads; measured peaks: sgemm %.1f GFLOP/s, bf16 matmul %.1f GFLOP/s%s\n",
        dev.name, dev.libraries, o.threads ? o.threads : dev.threads,
        dev.peak_flops[XPB_PRECISION_FP32] * 1e-9, dev.peak_flops[XPB_PRECISION_BF16_MIXED] * 1e-9,
        (dev.emulated_precisions & XPB_PRECISION_BIT(XPB_PRECISION_BF16_MIXED)) ? " (bf16 emulated)"
                                                                                : "");
    const int64_t n = 2048, t = 35, b = 20, h = 650;
    const double lstm_fwd = 2.0 * (double)(t * b) * (double)(h + h) * (double)(4 * h);
    xpb_ct_list l = {0};
    struct bench all[6];
    const char *names[3] = {"MATMUL 2048^3", "LSTM forward T35 B20 650", "LSTM train T35 B20 650"};
    const double flops[3] = {2.0 * (double)n * (double)n * (double)n, lstm_fwd, 3.0 * lstm_fwd};
    for (int k = 0; k < 6; k++) {
        xpb_ct_case *c = xpb_ct_new(&l, names[k / 2], k / 2 == 2, "%s", names[k / 2]);
        if (!c)
            break;
        if (k / 2 == 0)
            build_matmul(c, n);
        else
            build_lstm(c, t, b, h, h, k / 2 == 2);
        all[k] = (struct bench){names[k / 2], k % 2 ? XPB_PRECISION_BF16_MIXED : XPB_PRECISION_FP32,
                                flops[k / 2], NULL};
    }
    if (l.oom) {
        fprintf(stderr, "bench_opset3: out of memory\n");
        rc = 1;
        goto out;
    }
    printf("\n%-34s %-5s %9s %9s %9s %9s\n", "benchmark", "prec", "med ms", "best ms", "GFLOP/s",
           "of sgemm");
    for (int k = 0; k < 6; k++) {
        all[k].c = &l.v[k]; /* the list has stopped growing: pointers are stable now */
        if (!o.only || strstr(all[k].name, o.only))
            run_bench(api, be, &all[k], &o, &dev);
    }
    print_load("after");
out:
    xpb_ct_list_free(&l);
    api->close(be);
    xpb_registry_free(reg);
    return rc;
}
