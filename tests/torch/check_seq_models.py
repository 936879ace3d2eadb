#!/usr/bin/env python3
"""AlexNet, the LSTM language models, the Transformer and GPT-2 against independent PyTorch
definitions (xpb_torch_seq_models.py), as one test (ctest torch_check_seq_models):

for each published variant and a tiny instance of each model, `xpubench info MODEL --set ...
--json` must report the same trainable parameters as the PyTorch module's named_parameters()
(the same state-dict names with the same shapes, hence the same count) and the same forward
FLOPs per sample (multiply-add = 2: linear layers, convolutions, the attention's matmuls and the
LSTM's gates, counted by hooks in PyTorch and on the graph by xpubench).

    python3 tests/torch/check_seq_models.py XPUBENCH [--names]

--names prints every parameter name and shape. Exits 77 (ctest: skipped) when torch cannot be
imported, 1 when a check fails.
"""

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

try:
    import torch
except ImportError:
    print("torch is not installed for %s: PyTorch cross-checks skipped" % sys.executable)
    sys.exit(77)

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


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    torch.manual_seed(0)
    ok = True
    for model, variant, params in CASES:
        ok = check(sys.argv[1], model, variant, dict(params), "--names" in sys.argv) and ok
    print("PyTorch model definitions: %s" % ("passed" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
