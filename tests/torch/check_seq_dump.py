#!/usr/bin/env python3
"""Replays a dumped step (`xpubench run --dump`, docs/dump.md) of AlexNet, an LSTM language model,
the Transformer or GPT-2 in PyTorch (xpb_torch_seq_models.py) and compares it:

the model is rebuilt from the manifest's model, variant and parameters, loaded with the dumped
parameters and batch, and run forward and backward in float64 with the plugin's loss (AlexNet:
cross-entropy; lstm: 35 x the token cross-entropy, the paper's sum over steps; base: label
smoothing 0.1; GPT-2: the token cross-entropy), gradients clipped as the model clips them (lstm
at 5, GPT-2 at 1). The loss, the outputs and every gradient must agree with the dump, and every
parameter after the step must be what PyTorch's optimizer (SGD, Adam, AdamW with the manifest's
settings) makes of the dumped parameter and gradient. Error = max |dump - torch| / max |torch|,
tolerance 1e-4 (--tol).

    python3 tests/torch/check_seq_dump.py DUMP_DIR [--tol T] [--quiet]

Exits 0 when everything agrees, 1 on a mismatch, 2 when the step cannot be replayed (dropout:
its masks are not in the dump), 77 without torch.
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
except ImportError:
    print("torch is not installed for %s: replay skipped" % sys.executable)
    sys.exit(77)

import xpb_torch_seq_models as xm  # noqa: E402

# The dropout a model runs with when its parameter is left at the default.
DEFAULT_DROPOUT = {"alexnet": 0.5, "transformer": 0.1,
                   "lstm": {"ptb-medium": 0.5, "ptb-large": 0.65}}
CLIP = {"lstm": 5.0, "transformer/gpt2-small": 1.0}
# The optimizer each model declares. A manifest names only "sgd" and "adam" (the host writes
# "sgd" for AdamW); the replay uses the model's own and says when the manifest differs.
OPTIMIZER = {"alexnet": "sgd", "lstm": "sgd", "transformer/base": "adam",
             "transformer/gpt2-small": "adamw"}


def typed_params(params):
    """The manifest's parameters (strings) as the builders of xpb_torch_seq_models take them."""
    return {k: (float(v) if k == "dropout" else int(v)) for k, v in params.items()}


def effective_dropout(model, variant, params):
    p = params.get("dropout")
    default = DEFAULT_DROPOUT[model]
    if isinstance(default, dict):
        default = default[variant]
    return default if p is None or p < 0 else p


def rel_error(ours, ref):
    ref = ref.detach().double()
    ours = torch.as_tensor(ours, dtype=torch.float64).reshape(ref.shape)
    scale = float(ref.abs().max()) if ref.numel() else 0.0
    diff = float((ours - ref).abs().max()) if ref.numel() else 0.0
    return diff / scale if scale > 0 else diff


def forward(model, variant, module, inputs):
    """(weighted loss, logits as the dump holds them) of the plugin's model."""
    if model == "alexnet":
        logits = module(inputs["images"])
        return F.cross_entropy(logits, inputs["labels"].reshape(-1)), logits
    if model == "lstm":
        tokens, targets = inputs["tokens"], inputs["targets"]
        logits = module(tokens.t()).transpose(0, 1)  # [S, N, V] -> [N, S, V]
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        return tokens.shape[1] * loss, logits
    if variant == "base":
        logits = module(inputs["src"].t(), inputs["tgt"].t()).transpose(0, 1)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                               inputs["targets"].reshape(-1), label_smoothing=0.1)
        return loss, logits
    logits = module(inputs["tokens"])
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), inputs["targets"].reshape(-1))
    return loss, logits


def optimizer(spec, kind, params):
    if kind == "sgd":
        return torch.optim.SGD(params, lr=spec["lr"], momentum=spec["momentum"],
                               weight_decay=spec["weight_decay"])
    cls = torch.optim.AdamW if kind == "adamw" else torch.optim.Adam
    return cls(params, lr=spec["lr"], betas=(spec["beta1"], spec["beta2"]), eps=spec["eps"],
               weight_decay=spec["weight_decay"])


def replay(dump, tol=1e-4, quiet=False):
    """Returns 0 (agrees), 1 (mismatch) or 2 (cannot replay)."""
    man = json.load(open(os.path.join(dump, "manifest.json")))
    model, variant = man["model"], man["variant"]
    params = typed_params(man.get("params") or {})
    p = effective_dropout(model, variant, params)
    if man["mode"] == "train" and p > 0:
        print("%s: dropout %g: the masks are not in the dump, cannot replay" % (dump, p))
        return 2
    files = {t["kind"] + "." + (t.get("of") or t["name"]): os.path.join(dump, t["file"])
             for t in man["tensors"]}
    module, _ = xm.build(model, variant, **params)
    module = module.double()
    module.train(man["mode"] == "train")
    named = dict(module.named_parameters())
    with torch.no_grad():
        for name, prm in named.items():
            prm.copy_(torch.from_numpy(np.load(files["param." + name])))
    inputs = {}
    for key, path in files.items():
        if key.startswith("input."):
            a = np.load(path)
            inputs[key[6:]] = torch.from_numpy(a).long() if a.dtype == np.int32 else \
                torch.from_numpy(a).double()
    rows = []
    loss, logits = forward(model, variant, module, inputs)
    if man["mode"] == "train":
        rows.append(("loss", abs(man["loss"] - float(loss)) / max(abs(float(loss)), 1e-30)))
    for key, path in files.items():
        if key.startswith("output."):
            rows.append((key, rel_error(np.load(path), logits)))
    if man["mode"] == "train":
        loss.backward()
        clip = CLIP.get(model, CLIP.get(model + "/" + variant))
        if clip:
            torch.nn.utils.clip_grad_norm_(list(named.values()), clip)
        for name, prm in named.items():
            rows.append(("grad." + name, rel_error(np.load(files["grad." + name]), prm.grad)))
        # the update, from the dumped parameter and gradient
        with torch.no_grad():
            for name, prm in named.items():
                prm.grad = torch.from_numpy(np.load(files["grad." + name])).double()
        spec = man["optimizers"][0]
        kind = OPTIMIZER.get(model, OPTIMIZER.get(model + "/" + variant))
        if spec["kind"] != kind:
            print("  note: the manifest says optimizer '%s'; %s/%s trains with %s: replayed as %s"
                  % (spec["kind"], model, variant, kind, kind))
        optimizer(spec, kind, list(named.values())).step()
        for name, prm in named.items():
            rows.append(("param_after." + name,
                         rel_error(np.load(files["param_after." + name]), prm)))
    bad = [r for r in rows if not r[1] <= tol]
    worst = max(rows, key=lambda r: r[1])
    for key, err in rows:
        if not quiet or err > tol:
            print("  %-4s %-60s %.2e" % ("ok" if err <= tol else "FAIL", key, err))
    print("%s %s/%s %s: %d tensors, worst %.2e (%s)" % ("ok  " if not bad else "FAIL", model,
                                                        variant, dump, len(rows), worst[1],
                                                        worst[0]))
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description="Replays a dumped step of a sequence model or AlexNet.")
    ap.add_argument("dump")
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args()
    return replay(a.dump, a.tol, a.quiet)


if __name__ == "__main__":
    sys.exit(main())
