"""Time to accuracy side by side: xpubench's cpu_onednn (`mode: tta`) and PyTorch
(bench/tta_torch.py) train the same model with the same settings on the same Fashion-MNIST files
and threads, seed by seed, interleaved (xpubench seed 1, PyTorch seed 1, xpubench seed 2, ...),
so that whatever else the machine does hits both sides alike. Prints each seed's time to the
target, both Olympic means (the fastest and the slowest seed dropped), their ratio (target:
xpubench <= 0.8x PyTorch's time) and the share of xpubench's timed time its input pipeline made
the training wait (target: <= 2%).

    /usr/bin/python3 bench/tta_compare.py --xpubench build/xpubench conv6 --target 0.9 \\
        --lr 0.05 --runs 5
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def olympic(values):
    v = sorted(x if x is not None else float("inf") for x in values)
    if len(v) >= 3:
        v = v[1:-1]
    return sum(v) / len(v) if v else float("nan")


def xpubench_run(a, seed, folder):
    scen = os.path.join(folder, f"tta-{seed}.yaml")
    out = os.path.join(folder, f"tta-{seed}.json")
    with open(scen, "w") as f:
        f.write(f"name: tta-compare\n"
                f"runs:\n"
                f"  - name: {a.model}-tta\n"
                f"    model: {a.model}\n"
                + (f"    variant: cifar\n" if a.model == "resnet18" else "")
                + f"    mode: tta\n    data: fashion-mnist\n    backend: cpu_onednn\n"
                f"    threads: {a.threads}\n    batch: {a.batch}\n    lr: {a.lr}\n"
                f"    target: {a.target}\n    eval_every: {a.eval_every}\n"
                f"    max_epochs: {a.max_epochs}\n    runs: 1\n    seed: {seed}\n")
    subprocess.run([a.xpubench, "run", scen, "-o", out], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(out) as f:
        run = json.load(f)["runs"][0]
    r = run["tta"]["runs"][0]
    end = r["curve"][-1]["seconds"] if r["curve"] else None
    return {"seconds": r["seconds"], "epochs": r["epochs"], "converged": r["converged"],
            "wait": r["data_wait_seconds"], "timed": end}


def torch_run(a, seed):
    cmd = [sys.executable, os.path.join(HERE, "tta_torch.py"), a.model, "--target",
           str(a.target), "--lr", str(a.lr), "--batch", str(a.batch), "--eval-every",
           str(a.eval_every), "--max-epochs", str(a.max_epochs), "--seed", str(seed),
           "--threads", str(a.threads)]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True,
                                     text=True).stdout.strip().splitlines()[-1])


def per_epoch(side):
    """Seconds per epoch up to the target (evaluations included), or None: the speed apart
    from how many epochs the seed needed."""
    if not side.get("seconds") or not side.get("epochs"):
        return None
    return round(side["seconds"] / side["epochs"], 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--xpubench", default="build/xpubench")
    ap.add_argument("model", choices=["conv6", "resnet18"])
    ap.add_argument("--target", type=float, required=True)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--eval-every", type=float, default=0.5)
    ap.add_argument("--max-epochs", type=int, default=20)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json", help="write every measurement here")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for seed in range(a.first_seed, a.first_seed + a.runs):
            x = xpubench_run(a, seed, folder)
            t = torch_run(a, seed)
            rows.append({"seed": seed, "xpubench": x, "pytorch": t})
            print(f"seed {seed}: xpubench {x['seconds']} s ({x['epochs']} epochs, "
                  f"{per_epoch(x)} s per epoch), pytorch {t['seconds']} s ({t['epochs']} "
                  f"epochs, {per_epoch(t)} s per epoch), load {os.getloadavg()[0]:.1f}",
                  flush=True)
            if a.json:  # after every seed: an interrupted comparison keeps what it measured
                with open(a.json, "w") as f:
                    json.dump({"settings": vars(a), "rows": rows}, f, indent=2)
    xs = olympic(r["xpubench"]["seconds"] for r in rows)
    ts = olympic(r["pytorch"]["seconds"] for r in rows)
    wait = sum(r["xpubench"]["wait"] or 0 for r in rows)
    timed = sum(r["xpubench"]["timed"] or 0 for r in rows)
    print(f"time to {a.target}: xpubench {xs:.1f} s, pytorch {ts:.1f} s (Olympic means): "
          f"{xs / ts:.2f}x PyTorch's time (target <= 0.80)")
    print(f"input pipeline: the training waited {100 * wait / timed:.2f}% of xpubench's timed "
          f"time (target <= 2%)")


if __name__ == "__main__":
    main()
