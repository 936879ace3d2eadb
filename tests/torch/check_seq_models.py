#!/usr/bin/env python3
"""AlexNet, the LSTM language models, the Transformer and GPT-2 against independent PyTorch
definitions (xpb_torch_seq_models.py), as one test (ctest torch_check_seq_models):

1. for each published variant and a tiny instance of each model, `xpubench info MODEL --set ...
   --json` must report the same trainable parameters as the PyTorch module's named_parameters()
   (the same state-dict names with the same shapes, hence the same count) and the same forward
   FLOPs per sample (multiply-add = 2: linear layers, convolutions, the attention's matmuls and
   the LSTM's gates, counted by hooks in PyTorch and on the graph by xpubench);
2. with WORK_DIR, a tiny instance of each model (dropout 0: the masks are not dumped) trains one
   step on cpu_ref with --dump, and check_seq_dump.py replays every dump in PyTorch (loss,
   outputs, gradients, parameters after the update; 1e-4), inference of the two transformers
   too.

    python3 tests/torch/check_seq_models.py XPUBENCH [WORK_DIR] [--names]

--names prints every parameter name and shape. Exits 77 (ctest: skipped) when torch cannot be
imported, 1 when a check fails.
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

import check_seq_dump  # noqa: E402
import xpb_torch_seq_models as xm  # noqa: E402

# (model, variant, plugin parameters): the five published variants, then tiny instances whose
# sizes exercise the parameters (and AlexNet's adaptive pool at 1x1 and 12x12).
CASES = [
    ("alexnet", "imagenet", {}),
    ("lstm", "ptb-medium", {}),
    ("lstm", "ptb-large", {}),
    ("transformer", "base", {}),
    ("transformer", "gpt2-small", {}),
    ("alexnet", "imagenet", {"image_size": 64, "fc_width": 32, "num_classes": 10}),
    ("alexnet", "imagenet", {"image_size": 420, "fc_width": 16, "num_classes": 5}),
    ("lstm", "ptb-large", {"seq_len": 5, "vocab": 50, "hidden": 12, "layers": 3}),
    ("transformer", "base", {"seq_len": 6, "vocab": 40, "d_model": 16, "heads": 2, "layers": 2,
                             "d_ff": 24}),
    ("transformer", "gpt2-small", {"seq_len": 6, "vocab": 40, "d_model": 16, "heads": 4,
                                   "layers": 3, "context": 8}),
]


def xpubench_info(xpubench, model, variant, params):
    cmd = [xpubench, "info", model, "--set", "variant=" + variant, "--json"]
    for k, v in params.items():
        cmd += ["--set", "%s=%s" % (k, v)]
    env = dict(os.environ, XPB_NO_PROGRESS="1")
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True,
                                     env=env).stdout)


def info_parameters(info):
    """{name: shape} of the trainable parameters the layers of `xpubench info` use."""
    params = {}
    for layer in info["layers"]:
        for w in layer["weights"]:
            if w["trainable"]:
                params[w["name"]] = tuple(w["shape"])
    return params


def check(xpubench, model, variant, params, show_names):
    info = xpubench_info(xpubench, model, variant, params)
    module, args = xm.build(model, variant, **params)
    torch_params = {n: tuple(p.shape) for n, p in module.named_parameters()}
    ours = info_parameters(info)
    count = sum(p.numel() for p in module.parameters())
    flops = xm.forward_flops(module, args)
    problems = []
    for name in sorted(set(torch_params) | set(ours)):
        if name not in ours:
            problems.append("%s %s only in PyTorch" % (name, torch_params[name]))
        elif name not in torch_params:
            problems.append("%s %s only in xpubench" % (name, ours[name]))
        elif ours[name] != torch_params[name]:
            problems.append("%s: xpubench %s, PyTorch %s" % (name, ours[name], torch_params[name]))
    if info["parameters"] != count:
        problems.append("parameters: xpubench %d, PyTorch %d" % (info["parameters"], count))
    if info["flops_per_sample_forward"] != flops:
        problems.append("forward FLOPs: xpubench %d, PyTorch %d"
                        % (info["flops_per_sample_forward"], flops))
    label = "%s/%s%s" % (model, variant, "".join(" %s=%s" % kv for kv in params.items()))
    print("%-4s %s: %d parameters in %d tensors (PyTorch %d), forward FLOPs %d (PyTorch %d)"
          % ("FAIL" if problems else "ok", label, info["parameters"], len(ours), count,
             info["flops_per_sample_forward"], flops))
    for p in problems:
        print("       " + p)
    if show_names:
        for name, shape in torch_params.items():
            print("       %-60s %s" % (name, list(shape)))
    return not problems


# The dumped steps: tiny instances, batch 2 (3 for the three-layer LSTM), dropout 0.
DUMPS = """name: seq-dumps
description: tiny instances of the sequence models and AlexNet, one step each, dropout 0
defaults: {backend: cpu_ref, warmup: 0, min_steps: 1, min_time: 0, repeats: 1, mode: train,
           batch: 2, seed: 42}
runs:
  - {name: alexnet, model: alexnet, variant: imagenet,
     params: {image_size: 64, fc_width: 32, num_classes: 10, dropout: 0}}
  - {name: lstm-medium, model: lstm, variant: ptb-medium,
     params: {seq_len: 5, vocab: 50, hidden: 12, dropout: 0}}
  - {name: lstm-large, model: lstm, variant: ptb-large, batch: 3,
     params: {seq_len: 4, vocab: 30, hidden: 8, layers: 3, dropout: 0}}
  - {name: base, model: transformer, variant: base,
     params: {seq_len: 6, vocab: 40, d_model: 16, heads: 2, layers: 2, d_ff: 24, dropout: 0}}
  - {name: base-infer, model: transformer, variant: base, mode: inference,
     params: {seq_len: 6, vocab: 40, d_model: 16, heads: 2, layers: 2, d_ff: 24}}
  - {name: gpt2, model: transformer, variant: gpt2-small,
     params: {seq_len: 6, vocab: 40, d_model: 16, heads: 4, layers: 2, context: 8, dropout: 0}}
  - {name: gpt2-infer, model: transformer, variant: gpt2-small, mode: inference,
     params: {seq_len: 6, vocab: 40, d_model: 16, heads: 4, layers: 2, context: 8}}
"""


def check_dumps(xpubench, work):
    """Runs DUMPS with --dump into work/ and replays every dump; True when all agree."""
    os.makedirs(work, exist_ok=True)
    scenario, dump = os.path.join(work, "seq-dumps.yaml"), os.path.join(work, "dumps")
    with open(scenario, "w") as f:
        f.write(DUMPS)
    shutil.rmtree(dump, ignore_errors=True)
    env = dict(os.environ, XPB_NO_PROGRESS="1")
    r = subprocess.run([xpubench, "run", scenario, "--dump", dump, "--force", "-o",
                        os.path.join(work, "seq-dumps.json")], env=env, capture_output=True,
                       text=True)
    if r.returncode != 0:
        print("FAIL xpubench run %s --dump: exit %d\n%s%s" % (scenario, r.returncode, r.stdout,
                                                             r.stderr))
        return False
    manifests = sorted(glob.glob(os.path.join(dump, "*", "manifest.json")))
    ok = len(manifests) == DUMPS.count("- {name:")
    if not ok:
        print("FAIL %d dumps written, expected %d" % (len(manifests), DUMPS.count("- {name:")))
    for manifest in manifests:
        ok = check_seq_dump.replay(os.path.dirname(manifest), quiet=True) == 0 and ok
    return ok


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if not args:
        print(__doc__)
        return 2
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    torch.manual_seed(0)
    ok = True
    for model, variant, params in CASES:
        ok = check(args[0], model, variant, dict(params), "--names" in sys.argv) and ok
    if len(args) > 1:
        ok = check_dumps(args[0], args[1]) and ok
    print("PyTorch model definitions: %s" % ("passed" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
