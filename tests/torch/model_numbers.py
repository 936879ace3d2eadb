#!/usr/bin/env python3
"""Parameter counts and forward FLOPs of every model variant, computed in PyTorch.

These are the independent values that tests/test_models.c asserts (and docs/models.md lists):
parameters by summing the modules' parameter sizes, FLOPs by forward hooks on every conv,
transposed conv and linear layer (multiply-add = 2, per sample). With torchvision installed,
the imagenet definitions are first checked against torchvision's own modules.

    python3 tests/torch/model_numbers.py
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import xpb_torch_models as xm  # noqa: E402


def params(module):
    return sum(p.numel() for p in module.parameters())


def main():
    print(xm.check_against_torchvision())
    rows = []
    for model, variant, size in (("conv6", "cifar", 32), ("vgg16", "cifar", 32),
                                 ("vgg16", "imagenet", 224), ("resnet18", "cifar", 32),
                                 ("resnet18", "imagenet", 224)):
        m = xm.build(model, variant)
        m.eval()
        x = torch.zeros(1, 3, size, size)
        first = next(mod for mod in m.modules() if isinstance(mod, torch.nn.Conv2d))
        rows.append((model + "/" + variant, params(m), xm.count_flops(m, x),
                     xm.count_flops(first, x)))
    for model, variant, size in (("cyclegan", "small", 128), ("cyclegan", "full", 256)):
        m = xm.build(model, variant)
        x = torch.zeros(1, 3, size, size)
        g, d = xm.count_flops(m.G_A, x), xm.count_flops(m.D_A, x)
        g1 = xm.count_flops(m.G_A.model[1], torch.zeros(1, 3, size + 6, size + 6))
        d1 = xm.count_flops(m.D_A.model[0], x)
        print("%s/%s: generator %d params, %d FLOPs; discriminator %d params, %d FLOPs; "
              "first convs %d / %d" % (model, variant, params(m.G_A), g, params(m.D_A), d, g1, d1))
        # forward = both generators; a training step: see docs/models.md
        rows.append((model + "/" + variant, params(m), 2 * g, None))
        print("  training step FLOPs = 18 G - 4 g1 + 16 D - 4 d1 = %d"
              % (18 * g - 4 * g1 + 16 * d - 4 * d1))
    print("%-20s %14s %18s %18s" % ("model", "parameters", "forward FLOPs", "train FLOPs"))
    for name, p, f, first in rows:
        train = "" if first is None else str(3 * f - first)
        print("%-20s %14d %18d %18s" % (name, p, f, train))


if __name__ == "__main__":
    main()
