#!/usr/bin/python3
"""Exports a classifier of torch_models.py to ONNX for the ONNX Runtime side of the comparison.

  onnx_export.py MODEL VARIANT OUT.onnx [--opset 13]

The model is built exactly as torch_bench.py builds it (torch.manual_seed(0), eval mode: batch
norm uses its running statistics, as xpubench's inference programs do) and exported by
torch.onnx.export with a dynamic batch axis, so one file serves batch 1 and batch 128. The
input is named "images", the output "logits". PyTorch folds eval-mode batch norm into the
convolutions while exporting; ONNX Runtime's own graph optimisations do the rest at session
creation (ort_bench.js).
"""

import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_models  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", choices=["conv6", "vgg16", "resnet18"])
    ap.add_argument("variant")
    ap.add_argument("out")
    ap.add_argument("--opset", type=int, default=13)
    a = ap.parse_args()
    torch.manual_seed(0)
    model, shape, _ = torch_models.build(a.model, a.variant)
    model.eval()
    x = torch.rand(1, *shape) * 2 - 1
    tmp = a.out + ".tmp"
    with torch.no_grad():
        torch.onnx.export(model, x, tmp, input_names=["images"], output_names=["logits"],
                          dynamic_axes={"images": {0: "batch"}, "logits": {0: "batch"}},
                          opset_version=a.opset, do_constant_folding=True)
    os.replace(tmp, a.out)  # never leave a half-written model where the next run finds it


if __name__ == "__main__":
    main()
