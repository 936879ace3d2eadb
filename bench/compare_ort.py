#!/usr/bin/python3
"""xpubench's cpu_onednn against ONNX Runtime (CPU, MLAS) on batch-1 and batch-128 inference
(issue 27), side by side and interleaved in one run.

  bench/compare_ort.py [--xpubench BUILD/xpubench] [--threads 2] [--rounds 3] [--only REGEX]
                       [--quick] [--json OUT.json]

Needs ONNX Runtime's node binding next to bench/ort/ort_bench.js, installed once from the
committed lock file (the CPU provider is bundled; the skip stops its CUDA download):

  (cd bench/ort && ONNXRUNTIME_NODE_INSTALL=skip npm ci)

The three classifiers (conv6, vgg16-cifar, resnet18-cifar) are built by torch_models.py and
exported by onnx_export.py to bench/ort/models/ on first use. Each round runs, for every model
and batch (1: p50 latency, 128: samples/s), ONNX Runtime fp32 and `xpubench run
configs/<model>-infer-b<batch>.yaml` in fp32 and (where the CPU has it natively) bf16-mixed, with
the same intra-op threads; the order of the two sides alternates between rounds so neither
always runs after the other. Reported per cell: the median over rounds, the ratio (ORT latency /
xpubench latency at batch 1, xpubench/ORT samples/s at batch 128), the fraction of the
machine's peak (the median of what the xpubench runs measured: dnnl_sgemm fp32, a bf16 matmul
for bf16; low on a loaded machine), and
the CPU share other processes took meanwhile (on a shared 2-core machine this decides the
numbers; see README.md). Targets (issue 27): batch-1 ratio >= 1.15 on vgg16-cifar and
resnet18-cifar, >= 1.0 on conv6; batch-128 ratio >= 1.1 on all three; bf16 against ORT fp32.
"""

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare  # noqa: E402  (run_xpubench, fmt: the PyTorch comparison's xpubench side)

MODELS = [("conv6", "conv6", "cifar", 1.0), ("vgg16-cifar", "vgg16", "cifar", 1.15),
          ("resnet18-cifar", "resnet18", "cifar", 1.15)]
B128_TARGET = 1.1
ORT_DIR = os.path.join(HERE, "ort")


def cpu_busy():
    """(busy jiffies of the whole machine, CPU seconds of finished children) now."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    busy = sum(v) - v[3] - v[4]  # everything but idle and iowait
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return busy, ru.ru_utime + ru.ru_stime


def run_ort(model_path, batch, threads, quick, spin=True):
    """One ort_bench.js run as a dict, plus "others": the machine's CPU share other processes
    took meanwhile (the same measure as xpubench's interference.other_cpu_share)."""
    cmd = ["node", os.path.join(ORT_DIR, "ort_bench.js"), model_path, str(batch),
           "--threads", str(threads)]
    if quick:
        cmd += ["--min-steps", "3", "--min-time", "0", "--warmup", "1"]
    if not spin:
        cmd.append("--no-spin")
    b0, c0 = cpu_busy()
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    b1, c1 = cpu_busy()
    if p.returncode != 0:
        return {"error": p.stderr.strip()[-300:]}
    r = json.loads(p.stdout.strip().splitlines()[-1])
    hz = os.sysconf("SC_CLK_TCK")
    other = (b1 - b0) / hz - (c1 - c0)  # includes node's start-up and session creation
    r["others"] = max(0.0, other / (wall * os.cpu_count()))
    return r


def export(model, variant):
    """bench/ort/models/MODEL-VARIANT.onnx, exported on first use; its path."""
    out = os.path.join(ORT_DIR, "models", f"{model}-{variant}.onnx")
    if not os.path.exists(out):
        os.makedirs(os.path.dirname(out), exist_ok=True)
        subprocess.run([sys.executable, os.path.join(HERE, "onnx_export.py"), model, variant, out],
                       check=True)
    return out


def metric(r, batch):
    """The compared figure of one run: p50 ms at batch 1, samples/s at batch 128."""
    return r.get("p50_ms" if batch == 1 else "samples_per_s")


def fraction(v, batch, flops, peak):
    """FLOP/s of the figure v (p50 ms at batch 1, samples/s at 128) for `flops` per sample, over
    `peak` FLOP/s; None when something is unknown."""
    if not (peak and flops and v):
        return None
    per_s = flops / (v / 1e3) if batch == 1 else flops * v
    return per_s / peak


def med(xs):
    xs = [x for x in xs if isinstance(x, (int, float))]
    return statistics.median(xs) if xs else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--xpubench", default=os.path.join(compare.ROOT, "build", "xpubench"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="", help="regex on '<model>-b<batch>'")
    ap.add_argument("--json")
    ap.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                    help="for the xpubench runs, e.g. OMP_WAIT_POLICY=passive (README.md)")
    ap.add_argument("--no-bf16", action="store_true")
    ap.add_argument("--ort-no-spin", action="store_true",
                    help="ORT's pool threads block instead of spinning (with OMP_WAIT_POLICY=passive)")
    a = ap.parse_args()
    env = dict(kv.split("=", 1) for kv in a.env)
    if not os.path.exists(a.xpubench):
        sys.exit(f"compare_ort.py: {a.xpubench} not found (build first, or pass --xpubench)")
    if not os.path.isdir(os.path.join(ORT_DIR, "node_modules", "onnxruntime-node")):
        sys.exit("compare_ort.py: onnxruntime-node is not installed: "
                 "(cd bench/ort && ONNXRUNTIME_NODE_INSTALL=skip npm ci)")
    base = {"backend": "cpu_onednn", "threads": a.threads}
    cells = [(name, model, variant, target, batch) for name, model, variant, target in MODELS
             for batch in (1, 128) if re.search(a.only, f"{name}-b{batch}")]
    onnx = {(m, v): export(m, v) for _, m, v, _, _ in cells}
    rows = {}  # (name, batch) -> {"ort": [...], "fp32": [...], "bf16": [...]}
    with open("/proc/loadavg") as f:
        load0 = f.read().split()[:3]
    for rnd in range(a.rounds):
        for name, model, variant, _, batch in cells:
            row = rows.setdefault((name, batch), {"ort": [], "fp32": [], "bf16": []})
            sides = ["ort", "fp32"] + ([] if a.no_bf16 else ["bf16"])
            if rnd % 2:
                sides.reverse()
            for side in sides:
                if side == "ort":
                    r = run_ort(onnx[(model, variant)], batch, a.threads, a.quick, not a.ort_no_spin)
                else:
                    r = compare.run_xpubench(a.xpubench, f"{name}-infer-b{batch}",
                                             dict(base, precision=side), a.quick, env)
                    if side == "bf16" and r.get("precision_kind") not in ("native", ""):
                        r = {"skipped": f"bf16 {r.get('precision_kind') or 'unavailable'}"}
                row[side].append(r)
                err = r.get("error")
                print(f"round {rnd + 1} {name:15} b{batch:<4} {side:5} "
                      f"{compare.fmt(metric(r, batch)):>9} others "
                      f"{compare.fmt(100 * r['others'], '.0f') if r.get('others') is not None else '-':>3}%"
                      + (f"  ERROR {err}" if err else ""), flush=True)
    with open("/proc/loadavg") as f:
        load1 = f.read().split()[:3]

    # the peak: the median of what the xpubench runs measured (dnnl_sgemm and a bf16 matmul on
    # 2048^3 at their start); on a loaded machine it is low, and fractions can pass 100%
    peaks = [r["peak_flops"] for row in rows.values() for side in ("fp32", "bf16")
             for r in row[side] if r.get("peak_flops")]
    peak = {k: med(p.get(k) for p in peaks) for k in ("fp32", "bf16-mixed")}
    gflops = lambda k: compare.fmt((peak[k] or float("nan")) / 1e9, ".1f")
    print(f"\nmedian of {a.rounds} rounds, {a.threads} threads; load average before {' '.join(load0)},"
          f" after {' '.join(load1)}")
    print(f"peak measured by the xpubench runs (median): fp32 {gflops('fp32')} GFLOP/s, "
          f"bf16 {gflops('bf16-mixed')} GFLOP/s")
    print(f"xpubench environment: {' '.join(a.env) or '(as inherited)'}; ORT intra-op spinning "
          f"{'off' if a.ort_no_spin else 'on (its default)'}")
    print(f"{'model':15} {'batch':>5} {'ORT fp32':>9} {'xpb fp32':>9} {'ratio':>6} {'xpb bf16':>9} "
          f"{'ratio':>6} {'peak% ORT':>9} {'fp32':>5} {'bf16':>5} {'others%':>7}  target")
    out = {"threads": a.threads, "rounds": a.rounds, "env": env, "ort_spinning": not a.ort_no_spin,
           "peak_flops": peak, "load_before": load0, "load_after": load1, "cells": []}
    misses = 0
    for name, model, variant, target, batch in cells:
        row = rows[(name, batch)]
        flops = next((r["flops_per_sample"] for r in row["fp32"] if r.get("flops_per_sample")),
                     None)
        o, f, b = (med(metric(r, batch) for r in row[s]) for s in ("ort", "fp32", "bf16"))
        ratio = lambda x: (o / x if batch == 1 else x / o) if (o and x) else None
        pf = lambda v, prec: fraction(v, batch, flops,
                                      peak["bf16-mixed" if prec == "bf16" else "fp32"])
        others = med(r.get("others") for s in row for r in row[s])
        need = target if batch == 1 else B128_TARGET
        ok = [x >= need for x in (ratio(f), ratio(b)) if x is not None]
        misses += ok.count(False)
        print(f"{name:15} {batch:>5} {compare.fmt(o):>9} {compare.fmt(f):>9} {compare.fmt(ratio(f)):>6} "
              f"{compare.fmt(b):>9} {compare.fmt(ratio(b)):>6} "
              f"{compare.fmt(100 * (pf(o, 'fp32') or float('nan')), '.0f'):>9} "
              f"{compare.fmt(100 * (pf(f, 'fp32') or float('nan')), '.0f'):>5} "
              f"{compare.fmt(100 * (pf(b, 'bf16') or float('nan')), '.0f'):>5} "
              f"{compare.fmt(100 * (others or float('nan')), '.0f'):>7}  "
              f">= {need} {'PASS' if ok and all(ok) else 'MISS'}")
        out["cells"].append({"model": name, "batch": batch, "runs": row, "ort": o, "fp32": f,
                             "bf16": b, "ratio_fp32": ratio(f), "ratio_bf16": ratio(b),
                             "target": need})
    print("(batch 1: p50 ms, ratio = ORT / xpubench; batch 128: samples/s, ratio = xpubench / ORT;"
          " peak% = achieved FLOP/s over the median peak above)")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(out, fh, indent=2)
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
