#!/usr/bin/env python3
"""The PyTorch cross-checks, as one test (ctest torch_check_dumps):

1. `xpubench info MODEL --set variant=V --json` for all seven variants against the parameter
   counts and forward FLOPs that PyTorch computes (model_numbers.py's method);
2. every scenario of a folder (configs/quick by default) is run with --dump, and every dumped
   step is replayed by check_dump.py (losses, gradients, parameters after the step, 1e-4).

    python3 tests/torch/run_checks.py XPUBENCH WORK_DIR [SCENARIO_DIR]

Exits 77 (ctest: skipped) when torch cannot be imported, 1 when a check fails.
"""

import glob
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

try:
    import torch
except ImportError:
    print("torch is not installed for %s: PyTorch cross-checks skipped" % sys.executable)
    sys.exit(77)

import xpb_torch_models as xm  # noqa: E402

VARIANTS = [("conv6", "cifar", 32), ("vgg16", "cifar", 32), ("vgg16", "imagenet", 224),
            ("resnet18", "cifar", 32), ("resnet18", "imagenet", 224),
            ("cyclegan", "small", 128), ("cyclegan", "full", 256)]


def check_numbers(xpubench):
    ok = True
    for model, variant, size in VARIANTS:
        out = subprocess.run([xpubench, "info", model, "--set", "variant=" + variant, "--json"],
                             check=True, capture_output=True, text=True).stdout
        info = json.loads(out)
        m = xm.build(model, variant)
        x = torch.zeros(1, 3, size, size)
        params = sum(p.numel() for p in m.parameters())
        if model == "cyclegan":
            flops = xm.count_flops(m.G_A, x) + xm.count_flops(m.G_B, x)
        else:
            m.eval()
            flops = xm.count_flops(m, x)
        good = info["parameters"] == params and info["flops_per_sample_forward"] == flops
        ok &= good
        print("%-4s %s/%s: parameters %d (torch %d), forward FLOPs %d (torch %d)"
              % ("ok" if good else "FAIL", model, variant, info["parameters"], params,
                 info["flops_per_sample_forward"], flops))
    return ok


def check_dumps(xpubench, work, scenarios):
    ok = True
    env = dict(os.environ, XPB_NO_PROGRESS="1")
    for path in sorted(glob.glob(os.path.join(scenarios, "*.yaml"))):
        name = os.path.splitext(os.path.basename(path))[0]
        dump = os.path.join(work, name)
        shutil.rmtree(dump, ignore_errors=True)
        r = subprocess.run([xpubench, "run", path, "--dump", dump, "--force", "-o",
                            os.path.join(work, name + ".json")], env=env,
                           capture_output=True, text=True)
        if r.returncode != 0:
            print("FAIL xpubench run %s --dump: exit %d\n%s%s"
                  % (path, r.returncode, r.stdout, r.stderr))
            ok = False
            continue
        manifests = sorted(glob.glob(os.path.join(dump, "**", "manifest.json"), recursive=True))
        if not manifests:
            print("FAIL %s: no dump written" % path)
            ok = False
        for manifest in manifests:
            r = subprocess.run([sys.executable, os.path.join(HERE, "check_dump.py"),
                                os.path.dirname(manifest), "--quiet"],
                               capture_output=True, text=True)
            print(r.stdout, end="")
            if r.returncode != 0:
                print("FAIL %s (exit %d)\n%s" % (manifest, r.returncode, r.stderr))
                ok = False
    return ok


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    xpubench, work = sys.argv[1], sys.argv[2]
    scenarios = sys.argv[3] if len(sys.argv) > 3 else os.path.join(HERE, "..", "..", "configs",
                                                                   "quick")
    os.makedirs(work, exist_ok=True)
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    ok = check_numbers(xpubench)
    ok = check_dumps(xpubench, work, scenarios) and ok
    print("PyTorch cross-checks: %s" % ("passed" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
