"""Time to accuracy in PyTorch, the same way xpubench's `mode: tta` measures it, for the side
by side of bench/tta_compare.py: the same model (Conv-6 or ResNet-18 on 1x28x28 inputs), the
same Fashion-MNIST IDX files, the same normalisation (the training split's own mean and
standard deviation of pixel / 255), the same optimizer (SGD with momentum 0.9), batch, target,
evaluation interval and threads; batches are assembled by a DataLoader-free loop over a
per-epoch permutation (the last partial batch dropped), as xpubench's pipeline does. The clock
starts at the first batch and stops at the evaluation that reached the target; every
evaluation is inside it. Prints one JSON line.

    /usr/bin/python3 bench/tta_torch.py conv6 --target 0.9 --lr 0.05 --batch 64 --seed 1
"""

import argparse
import gzip
import json
import os
import struct
import time

import torch
import torch.nn as nn

import torch_models

DATA = "/usr/share/datasets/fashion-mnist"


def read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return torch.frombuffer(bytearray(data[4 + 4 * ndim:]), dtype=torch.uint8).reshape(dims)


def find(folder, stem):
    for name in (stem + ".gz", stem):
        if os.path.exists(os.path.join(folder, name)):
            return os.path.join(folder, name)
    raise SystemExit(f"{folder}: {stem}(.gz) not found (apt-get install dataset-fashion-mnist)")


def load(folder):
    xs = read_idx(find(folder, "train-images-idx3-ubyte")).float() / 255
    ys = read_idx(find(folder, "train-labels-idx1-ubyte")).long()
    xt = read_idx(find(folder, "t10k-images-idx3-ubyte")).float() / 255
    yt = read_idx(find(folder, "t10k-labels-idx1-ubyte")).long()
    mean, std = xs.mean().item(), xs.std(unbiased=False).item()
    norm = lambda x: ((x - mean) / std).unsqueeze(1).contiguous()
    return norm(xs), ys, norm(xt), yt


def model_for(name):
    if name == "conv6":
        layers, c = [], 1
        for v in [64, 64, "M", 128, 128, "M", 256, 256, "M"]:
            if v == "M":
                layers.append(nn.MaxPool2d(2))
            else:
                layers += [nn.Conv2d(c, v, 3, padding=1), nn.ReLU(inplace=True)]
                c = v
        return nn.Sequential(*layers, nn.Flatten(), nn.Linear(256 * 3 * 3, 256),
                             nn.ReLU(inplace=True), nn.Linear(256, 256), nn.ReLU(inplace=True),
                             nn.Linear(256, 10))
    m = torch_models.resnet18("cifar")
    m.conv1 = nn.Conv2d(1, 64, 3, 1, 1, bias=False)
    return m


def accuracy(model, xt, yt, batch=500):
    model.eval()
    correct = 0
    with torch.inference_mode():
        for i in range(0, len(xt), batch):
            correct += (model(xt[i:i + batch]).argmax(1) == yt[i:i + batch]).sum().item()
    model.train()
    return correct / len(xt)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", choices=["conv6", "resnet18"])
    ap.add_argument("--target", type=float, required=True)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--eval-every", type=float, default=0.5, help="epochs")
    ap.add_argument("--max-epochs", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--data", default=DATA)
    a = ap.parse_args()

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    xs, ys, xt, yt = load(a.data)
    t_init = time.perf_counter()
    model = model_for(a.model)
    opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    model.train()
    init = time.perf_counter() - t_init
    batches = len(xs) // a.batch
    every = max(1, round(a.eval_every * batches))
    gen = torch.Generator().manual_seed(a.seed)
    curve, steps, reached = [], 0, None
    t0 = time.perf_counter()
    for epoch in range(a.max_epochs):
        order = torch.randperm(len(xs), generator=gen)
        for k in range(batches):
            idx = order[k * a.batch:(k + 1) * a.batch]
            x, y = xs[idx], ys[idx]
            opt.zero_grad(set_to_none=True)
            loss_fn(model(x), y).backward()
            opt.step()
            steps += 1
            if steps % every and not (epoch + 1 == a.max_epochs and k + 1 == batches):
                continue
            acc = accuracy(model, xt, yt)
            curve.append({"epochs": steps / batches, "seconds": time.perf_counter() - t0,
                          "accuracy": acc})
            if acc >= a.target:
                reached = curve[-1]
                break
        if reached:
            break
    print(json.dumps({
        "framework": "pytorch " + torch.__version__, "model": a.model, "batch": a.batch,
        "lr": a.lr, "target": a.target, "seed": a.seed, "threads": torch.get_num_threads(),
        "converged": reached is not None,
        "seconds": reached["seconds"] if reached else None,
        "epochs": reached["epochs"] if reached else None, "init_seconds": init,
        "steps": steps, "curve": curve}))


if __name__ == "__main__":
    main()
