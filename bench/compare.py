#!/usr/bin/python3
"""xpubench's cpu_onednn backend against PyTorch, side by side in one run (issue 4's targets).

  bench/compare.py [--xpubench BUILD/xpubench] [--threads 2] [--quick] [--only REGEX]
                   [--skip-torch] [--json OUT.json] [--param NAME=VALUE ...] [--rounds N]
                   [--batch N] [--no-bf16]

For every standard run of docs/workloads.md it runs `xpubench run configs/<run>.yaml --set
backend=cpu_onednn ...` and bench/torch_bench.py with the same model, batch, precision and
thread count, then prints the throughput ratios and checks the targets:

  fp32 training     geometric mean of xpubench/PyTorch >= 1.2, every run >= 1.0
  bf16 training     geometric mean vs PyTorch autocast >= 1.5; xpubench bf16 >= 2x its own
                    fp32 on VGG16 and ResNet18
  inference         batch-1 p50 latency <= PyTorch's; batch-128 throughput >= 1.2x
  efficiency        VGG16-cifar fp32 training GFLOP/s >= 75% of dnnl_sgemm on 2048^3
                    (measured here, same threads)
  overhead          host time outside the backend < 1% of the step for every run
  fusion            inference latency with fusion on vs off (reported)

The sources' other workloads (issue 24) are rows like the others: AlexNet (training, and
inference at batch 1 and 128), the LSTMs (ptb-medium, ptb-large), the Transformer base and GPT-2
small (training; GPT-2 also the latency of one 512-token prompt), with their own targets:

  issue 24          fp32 training of each >= 1.2x PyTorch; bf16 (native) >= 1.2x autocast;
                    batch-1 latency of AlexNet and the GPT-2 prompt <= 0.5x PyTorch's; each
                    training run's peak process memory <= PyTorch's (xpubench's
                    host_peak_rss_bytes against the PyTorch process's getrusage maximum)

Every training row also gives its GFLOP/s as a share of the machine's peak that the run measured
(dnnl_sgemm, or the bf16 matmul peak for bf16). --param NAME=VALUE sets a model parameter on both sides and
--batch the batch (for reduced sizes; use them with --only, as the parameters differ between
models); --rounds N runs each training row N times, xpubench and PyTorch alternately, and
reports the median of each side.

PyTorch is Debian's python3-torch; install libopenblas0-pthread first (the script warns when
libblas.so.3 is the reference BLAS). Use --quick for a smoke test (few steps; numbers noisy).
"""

import argparse
import ctypes
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

TRAIN = [("conv6-train", "conv6", "cifar", 64), ("vgg16-cifar-train", "vgg16", "cifar", 64),
         ("resnet18-cifar-train", "resnet18", "cifar", 64),
         ("vgg16-imagenet-train", "vgg16", "imagenet", 8),
         ("resnet18-imagenet-train", "resnet18", "imagenet", 16),
         ("cyclegan-small-train", "cyclegan", "small", 1),
         ("cyclegan-full-train", "cyclegan", "full", 1),
         ("alexnet-train", "alexnet", "imagenet", 64),
         ("lstm-ptb-medium-train", "lstm", "ptb-medium", 20),
         ("lstm-ptb-large-train", "lstm", "ptb-large", 20),
         ("transformer-base-train", "transformer", "base", 16),
         ("gpt2-small-train", "transformer", "gpt2-small", 4)]
# the rows of issue 24's targets
SOURCES = ("alexnet-train", "lstm-ptb-medium-train", "lstm-ptb-large-train",
           "transformer-base-train", "gpt2-small-train")
# model parameters the standard scenarios set (configs/<run>.yaml), given to PyTorch too
SCENARIO_PARAMS = {"gpt2-small-train": {"seq_len": "512"}}
CLASSIFIERS = [("conv6", "conv6", "cifar"), ("vgg16-cifar", "vgg16", "cifar"),
               ("vgg16-imagenet", "vgg16", "imagenet"), ("resnet18-cifar", "resnet18", "cifar"),
               ("resnet18-imagenet", "resnet18", "imagenet"), ("alexnet", "alexnet", "imagenet")]
# sequence models' inference rows: id, model, variant, batch, parameters (configs/<id>.yaml)
SEQ_INFER = [("gpt2-small-infer-b1", "transformer", "gpt2-small", 1, {"seq_len": "512"})]


def sgemm_gflops(threads, n=2048, reps=10):
    """dnnl_sgemm on n^3 through ctypes (best of reps after one warm-up call), in a child so
    OMP_NUM_THREADS holds."""
    code = f"""
import ctypes, time
lib = ctypes.CDLL("libdnnl.so.2")
n = {n}
A = (ctypes.c_float * (n * n))(); B = (ctypes.c_float * (n * n))(); C = (ctypes.c_float * (n * n))()
for i in range(0, n * n, 997): A[i] = 1.0; B[i] = 0.5
f = lib.dnnl_sgemm
f.argtypes = [ctypes.c_char, ctypes.c_char] + [ctypes.c_int64] * 3 + [ctypes.c_float,
    ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_float,
    ctypes.c_void_p, ctypes.c_int64]
f(b"N", b"N", n, n, n, 1.0, A, n, B, n, 0.0, C, n)  # warm-up: thread pool, JIT kernels
best = 0
for r in range({reps}):
    t = time.perf_counter()
    f(b"N", b"N", n, n, n, 1.0, A, n, B, n, 0.0, C, n)
    dt = time.perf_counter() - t
    best = max(best, 2.0 * n ** 3 / dt)
print(best / 1e9)
"""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    return float(out.stdout.strip()) if out.returncode == 0 else float("nan")


def run_xpubench(exe, config, sets, quick, env=None):
    """One xpubench run as a dict; env: extra environment variables (compare_ort.py)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        cmd = [exe, "run", os.path.join(ROOT, "configs", config + ".yaml"), "-o", out]
        for k, v in sets.items():
            cmd += ["--set", f"{k}={v}"]
        if quick:
            cmd += ["--set", "min_steps=3", "--set", "min_time=0", "--set", "repeats=1",
                    "--set", "warmup=1"]
        p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, **(env or {})))
        if p.returncode != 0 or not os.path.exists(out):
            return {"error": (p.stderr or p.stdout).strip()[-300:]}
        run = json.load(open(out))["runs"][0]
        if run.get("status") != "ok":
            return {"error": run.get("status")}
        m = run["metrics"]
        # "native" or "emulated" (bf16-mixed on a CPU without AVX512-BF16 or AMX); "" before
        # results schema 2
        kind = run["device"].get("precisions", {}).get(run["config"].get("precision"), "")
        return {"samples_per_s": m["throughput"]["median"], "p50_ms": 1e3 * m["step_time_s"]["p50"],
                "gflops": m["flops_per_s"] / 1e9, "overhead": m.get("host_overhead_fraction"),
                "device": run["device"].get("libraries", ""), "precision_kind": kind,
                "lr": run["config"].get("optimizer", {}).get("lr"),
                # the machine's peak measured by this run (dnnl_sgemm / bf16 matmul), the model's
                # forward FLOPs and the CPU share other processes took meanwhile (compare_ort.py)
                "peak_flops": run["device"].get("peak_flops", {}),
                "flops_per_sample": run["model"].get("flops_per_sample_forward"),
                "others": m.get("interference", {}).get("other_cpu_share"),
                "rss_mb": m["memory"]["host_peak_rss_bytes"] / 2**20,
                "p95_ms": 1e3 * m["step_time_s"]["p95"]}


def run_torch(model, variant, mode, batch, bf16, threads, quick, lr=None, params=None):
    cmd = [sys.executable, os.path.join(HERE, "torch_bench.py"), model, variant, mode, str(batch),
           "--threads", str(threads)]
    for k, v in (params or {}).items():
        cmd += ["--param", f"{k}={v}"]
    if lr is not None:
        cmd += ["--lr", repr(lr)]
    if bf16:
        cmd.append("--bf16")
    if quick:
        cmd += ["--min-steps", "3", "--min-time", "0", "--warmup", "1"]
    elif mode == "inference" and batch == 1:  # latency percentiles want many steps
        cmd += ["--min-steps", "50", "--warmup", "5"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return {"error": p.stderr.strip()[-300:]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def peak_share(x, prec):
    """The run's GFLOP/s over the peak it measured for its precision (None when unknown)."""
    peak = (x.get("peak_flops") or {}).get("bf16-mixed" if prec == "bf16" else "fp32")
    if not peak or "gflops" not in x:
        return None
    return x["gflops"] * 1e9 / peak


def median_run(runs):
    """The run of median throughput among `runs` (the first error when one failed)."""
    ok = [r for r in runs if "samples_per_s" in r]
    if len(ok) < len(runs) or not ok:
        return next((r for r in runs if "samples_per_s" not in r), {})
    return sorted(ok, key=lambda r: r["samples_per_s"])[(len(ok) - 1) // 2]


def geomean(xs):
    xs = [x for x in xs if x and x > 0 and math.isfinite(x)]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def fmt(x, spec=".2f"):
    return format(x, spec) if isinstance(x, (int, float)) and math.isfinite(x) else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--xpubench", default=os.path.join(ROOT, "build", "xpubench"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="", help="regex on run ids")
    ap.add_argument("--skip-torch", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--param", action="append", default=[],
                    help="NAME=VALUE: a model parameter for the selected training rows, both sides")
    ap.add_argument("--batch", type=int, help="the batch of the selected training rows")
    ap.add_argument("--rounds", type=int, default=1,
                    help="training rows: N alternating runs of each side, medians reported")
    ap.add_argument("--no-bf16", action="store_true", help="training rows in fp32 only")
    a = ap.parse_args()
    user_params = dict(kv.split("=", 1) for kv in a.param)
    if not os.path.exists(a.xpubench):
        sys.exit(f"compare.py: {a.xpubench} not found (build first, or pass --xpubench)")
    blas = os.path.realpath("/usr/lib/x86_64-linux-gnu/libblas.so.3")
    if "openblas" not in blas:
        print(f"warning: libblas.so.3 is {blas}; install libopenblas0-pthread so PyTorch does not "
              "use the reference BLAS", file=sys.stderr)
    sel = lambda rid: re.search(a.only, rid) is not None
    results = {"threads": a.threads, "blas": blas, "started": time.strftime("%Y-%m-%dT%H:%M:%S"),
               "train": [], "inference": []}
    # allow_emulated: on an AVX-512 CPU without AVX512-BF16 or AMX, cpu_onednn offers bf16-mixed
    # only as emulated (slower than its fp32; PyTorch's autocast is emulated there too): measure
    # it anyway, and say so in the row
    base = {"backend": "cpu_onednn", "threads": a.threads, "allow_emulated": "true"}

    results["sgemm_gflops"] = sgemm_gflops(a.threads)
    print(f"dnnl_sgemm 2048^3, {a.threads} threads: {fmt(results['sgemm_gflops'], '.1f')} GFLOP/s\n")

    print(f"{'training run':26} {'prec':5} {'xpubench/s':>11} {'torch/s':>9} {'ratio':>6} "
          f"{'GFLOP/s':>8} {'of peak':>7} {'overhead':>9} {'RSS MiB':>15}")
    for rid, model, variant, batch in TRAIN:
        if not sel(rid):
            continue
        params = dict(SCENARIO_PARAMS.get(rid, {}), **user_params)
        batch = a.batch or batch
        for prec in ("fp32",) if a.no_bf16 else ("fp32", "bf16"):
            sets = dict(base, precision=prec, batch=batch,
                        **{"params." + k: v for k, v in params.items()})
            xs, ts = [], []
            for _ in range(a.rounds):
                xs.append(run_xpubench(a.xpubench, rid, sets, a.quick))
                # the learning rate the scenario gave xpubench (vgg16-imagenet-train lowers it)
                ts.append({} if a.skip_torch else run_torch(model, variant, "train", batch,
                                                            prec == "bf16", a.threads, a.quick,
                                                            xs[-1].get("lr"), params))
            x, t = median_run(xs), median_run(ts)
            ratio = x.get("samples_per_s", float("nan")) / t.get("samples_per_s", float("nan"))
            results["train"].append({"id": rid, "precision": prec, "batch": batch,
                                     "params": params, "xpubench": x, "torch": t,
                                     "ratio": ratio, "rounds": {"xpubench": xs, "torch": ts}})
            results["train"][-1]["peak_share"] = share = peak_share(x, prec)
            err = x.get("error") or t.get("error")
            emulated = "  (bf16 emulated)" if x.get("precision_kind") == "emulated" else ""
            rss = f"{fmt(x.get('rss_mb'), '.0f')}/{fmt(t.get('max_rss_mb'), '.0f')}"
            print(f"{rid:26} {prec:5} {fmt(x.get('samples_per_s')):>11} "
                  f"{fmt(t.get('samples_per_s')):>9} {fmt(ratio):>6} {fmt(x.get('gflops'), '.1f'):>8} "
                  f"{fmt(100 * share, '.0f') + '%' if share is not None else '-':>7} "
                  f"{fmt(100 * x['overhead'], '.3f') + '%' if x.get('overhead') is not None else '-':>9}"
                  f" {rss:>15}" + emulated + (f"  ERROR {err}" if err else ""), flush=True)
            if a.rounds > 1:
                each = lambda rs: " ".join(fmt(r.get("samples_per_s")) for r in rs)
                print(f"{'':26} rounds: xpubench {each(xs)}; torch {each(ts)}", flush=True)

    print(f"\n{'inference':20} {'batch':>5} {'fusion':6} {'prec':5} {'xpubench':>10} "
          f"{'torch':>10} {'ratio':>6}   (b1: p50 ms, ratio torch/xpubench; b128: samples/s)")
    for name, model, variant in CLASSIFIERS:
        for batch in (1, 128):
            rid = f"{name}-infer-b{batch}"
            if not sel(rid):
                continue
            for prec in ("fp32", "bf16"):
                t = {} if a.skip_torch else run_torch(model, variant, "inference", batch,
                                                      prec == "bf16", a.threads, a.quick)
                for fusion in ((True, False) if prec == "fp32" else (True,)):
                    x = run_xpubench(a.xpubench, rid,
                                     dict(base, precision=prec, fusion=str(fusion).lower()),
                                     a.quick)
                    if batch == 1:
                        ratio = t.get("p50_ms", float("nan")) / x.get("p50_ms", float("nan"))
                        xv, tv = x.get("p50_ms"), t.get("p50_ms")
                    else:
                        ratio = x.get("samples_per_s", float("nan")) / t.get("samples_per_s",
                                                                              float("nan"))
                        xv, tv = x.get("samples_per_s"), t.get("samples_per_s")
                    results["inference"].append({"id": rid, "precision": prec, "fusion": fusion,
                                                 "xpubench": x, "torch": t, "ratio": ratio})
                    err = x.get("error") or t.get("error")
                    emulated = ("  (bf16 emulated)" if x.get("precision_kind") == "emulated"
                                else "")
                    print(f"{name:20} {batch:>5} {'on' if fusion else 'off':6} {prec:5} "
                          f"{fmt(xv):>10} {fmt(tv):>10} {fmt(ratio):>6}" + emulated
                          + (f"  ERROR {err}" if err else ""), flush=True)

    for rid, model, variant, batch, params in SEQ_INFER:
        if not sel(rid):
            continue
        for prec in ("fp32", "bf16"):
            t = {} if a.skip_torch else run_torch(model, variant, "inference", batch,
                                                  prec == "bf16", a.threads, a.quick,
                                                  params=params)
            x = run_xpubench(a.xpubench, rid, dict(base, precision=prec), a.quick)
            ratio = t.get("p50_ms", float("nan")) / x.get("p50_ms", float("nan"))
            results["inference"].append({"id": rid, "precision": prec, "fusion": True,
                                         "xpubench": x, "torch": t, "ratio": ratio})
            err = x.get("error") or t.get("error")
            print(f"{rid[:20]:20} {batch:>5} {'on':6} {prec:5} {fmt(x.get('p50_ms')):>10} "
                  f"{fmt(t.get('p50_ms')):>10} {fmt(ratio):>6}" + (f"  ERROR {err}" if err else ""),
                  flush=True)

    # ---- targets ----
    print("\ntargets")
    tr = lambda p: [r for r in results["train"] if r["precision"] == p]
    checks = []
    fp32 = [r["ratio"] for r in tr("fp32")]
    if fp32 and not a.skip_torch:
        checks.append(("fp32 training geomean >= 1.2x PyTorch", geomean(fp32), geomean(fp32) >= 1.2))
        checks.append(("fp32 training every run >= 1.0x", min(fp32), min(fp32) >= 1.0))
    bf = [r["ratio"] for r in tr("bf16")]
    if bf and not a.skip_torch:
        checks.append(("bf16 training geomean >= 1.5x autocast", geomean(bf), geomean(bf) >= 1.5))
    for rid in ("vgg16-cifar-train", "resnet18-cifar-train", "vgg16-imagenet-train",
                "resnet18-imagenet-train"):
        f = [r for r in results["train"] if r["id"] == rid]
        if len(f) == 2 and "samples_per_s" in f[0]["xpubench"] and "samples_per_s" in f[1]["xpubench"]:
            s = f[1]["xpubench"]["samples_per_s"] / f[0]["xpubench"]["samples_per_s"]
            checks.append((f"{rid} bf16 >= 2x own fp32", s, s >= 2.0))
    v = [r for r in results["train"] if r["id"] == "vgg16-cifar-train" and r["precision"] == "fp32"]
    if v and "gflops" in v[0]["xpubench"]:
        eff = v[0]["xpubench"]["gflops"] / results["sgemm_gflops"]
        checks.append(("vgg16-cifar fp32 >= 75% of sgemm GFLOP/s", eff, eff >= 0.75))
    inf = [r for r in results["inference"] if r["fusion"] and r["precision"] == "fp32"]
    if inf and not a.skip_torch:
        b1 = [r["ratio"] for r in inf if r["id"].endswith("-b1")]
        b128 = [r["ratio"] for r in inf if r["id"].endswith("-b128")]
        if b1:
            checks.append(("inference b1 p50 <= PyTorch (min torch/xpubench)", min(b1), min(b1) >= 1.0))
        if b128:
            checks.append(("inference b128 >= 1.2x PyTorch (min)", min(b128), min(b128) >= 1.2))
    ov = [r["xpubench"]["overhead"] for r in results["train"] + results["inference"]
          if r["xpubench"].get("overhead") is not None]
    if ov:
        checks.append(("host overhead < 1% (max)", max(ov), max(ov) < 0.01))
    for name in [c[0] for c in CLASSIFIERS]:
        on = [r for r in results["inference"] if r["id"] == f"{name}-infer-b1" and r["fusion"]
              and r["precision"] == "fp32"]
        off = [r for r in results["inference"] if r["id"] == f"{name}-infer-b1"
               and not r["fusion"]]
        if on and off and "p50_ms" in on[0]["xpubench"] and "p50_ms" in off[0]["xpubench"]:
            gain = 1 - on[0]["xpubench"]["p50_ms"] / off[0]["xpubench"]["p50_ms"]
            checks.append((f"fusion: {name} b1 latency reduction (info)", gain, None))
    # issue 24: the sources' other workloads
    for r in results["train"]:
        if r["id"] not in SOURCES or a.skip_torch:
            continue
        if r["precision"] == "fp32":
            checks.append((f"{r['id']} fp32 >= 1.2x PyTorch", r["ratio"], r["ratio"] >= 1.2))
        elif r["xpubench"].get("precision_kind") == "native":
            checks.append((f"{r['id']} bf16 >= 1.2x autocast", r["ratio"], r["ratio"] >= 1.2))
        xm, tm = r["xpubench"].get("rss_mb"), r["torch"].get("max_rss_mb")
        if r["precision"] == "fp32" and xm and tm:
            checks.append((f"{r['id']} peak memory <= PyTorch's (ratio)", xm / tm, xm <= tm))
    for r in results["inference"]:
        if (r["id"] in ("alexnet-infer-b1", "gpt2-small-infer-b1") and r["fusion"]
                and not a.skip_torch
                and (r["precision"] == "fp32" or r["xpubench"].get("precision_kind") == "native")):
            lat = 1 / r["ratio"] if r["ratio"] else float("nan")  # xpubench p50 / torch p50
            checks.append((f"{r['id']} {r['precision']} latency <= 0.5x PyTorch's", lat,
                           lat <= 0.5))
    for name, value, ok in checks:
        status = "info" if ok is None else ("PASS" if ok else "MISS")
        print(f"  {name:52} {fmt(value, '.3f'):>8}  {status}")
    results["checks"] = [{"check": c[0], "value": c[1], "pass": c[2]} for c in checks]
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0 if all(c[2] is not False for c in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
