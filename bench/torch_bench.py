#!/usr/bin/python3
"""PyTorch side of the comparison: one run of one model, printed as a JSON line.

  torch_bench.py MODEL VARIANT MODE BATCH [--bf16] [--threads N] [--lr LR] [--min-time S] [--min-steps N]
                 [--param NAME=INT ...]

MODE is train (samples/s of full training steps: forward, loss, backward, optimizer) or
inference (eval mode, no autograd; step-time percentiles; for a sequence model the forward of
one batch of sequences, GPT-2's prompt). The JSON line also gives the process's peak resident
set (`max_rss_mb`, getrusage), to compare with xpubench's `host_peak_rss_bytes`. --bf16 wraps forward and loss in
torch.autocast("cpu", dtype=torch.bfloat16), PyTorch's mixed precision on CPU. The training
recipe is xpubench's: softmax cross-entropy and SGD (lr 0.01, momentum 0.9) for classifiers,
CycleGAN's two Adam phases (lr 2e-4, betas 0.5/0.999) with LSGAN, cycle (10) and identity (5)
losses, on one fixed synthetic batch. The sequence models (lstm, transformer base and
gpt2-small; tests/torch/xpb_torch_seq_models.py, with xpubench's model parameters as --param)
train as docs/models.md says: the LSTM with SGD lr 1, clipping at 5 and the loss summed over
the steps; the Transformer with label smoothing 0.1 and Adam (0.9, 0.98, 1e-9) at 6.99e-4;
GPT-2 with AdamW (0.9, 0.95, 1e-8, weight decay 0.1) at 6e-4 and clipping at 1; dropout on.
"""

import argparse
import json
import os
import resource
import statistics
import sys
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "torch"))
import torch_models  # noqa: E402
import xpb_torch_seq_models  # noqa: E402


def classifier_step(model, opt, x, y, bf16):
    opt.zero_grad(set_to_none=True)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        loss = F.cross_entropy(model(x).float(), y)
    loss.backward()
    opt.step()
    return loss


def set_requires_grad(nets, flag):
    for n in nets:
        for p in n.parameters():
            p.requires_grad_(flag)


def cyclegan_step(m, opt_g, opt_d, real_a, real_b, bf16):
    ones = lambda t: torch.ones_like(t)
    # generators; the discriminators' weights get no gradient in this phase
    set_requires_grad([m.D_A, m.D_B], False)
    opt_g.zero_grad(set_to_none=True)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        fake_b = m.G_A(real_a)
        rec_a = m.G_B(fake_b)
        fake_a = m.G_B(real_b)
        rec_b = m.G_A(fake_a)
        idt_a = m.G_A(real_b)
        idt_b = m.G_B(real_a)
        pa, pb = m.D_A(fake_b).float(), m.D_B(fake_a).float()
        loss_g = (F.mse_loss(pa, ones(pa)) + F.mse_loss(pb, ones(pb))
                  + 10 * F.l1_loss(rec_a.float(), real_a) + 10 * F.l1_loss(rec_b.float(), real_b)
                  + 5 * F.l1_loss(idt_a.float(), real_b) + 5 * F.l1_loss(idt_b.float(), real_a))
    loss_g.backward()
    opt_g.step()
    # discriminators on the detached fakes
    set_requires_grad([m.D_A, m.D_B], True)
    opt_d.zero_grad(set_to_none=True)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        ra, fa = m.D_A(real_b).float(), m.D_A(fake_b.detach()).float()
        rb, fb = m.D_B(real_a).float(), m.D_B(fake_a.detach()).float()
        loss_d = 0.5 * (F.mse_loss(ra, ones(ra)) + F.mse_loss(fa, torch.zeros_like(fa))) \
            + 0.5 * (F.mse_loss(rb, ones(rb)) + F.mse_loss(fb, torch.zeros_like(fb)))
    loss_d.backward()
    opt_d.step()
    return loss_g


def seq_setup(a):
    """The step function of a sequence model's training (docs/models.md's recipes)."""
    params = dict(kv.split("=", 1) for kv in a.param)
    params = {k: float(v) if k == "dropout" else int(v) for k, v in params.items()}
    model, args = xpb_torch_seq_models.build(a.model, a.variant, **params)
    model.train()
    vocab = params.get("vocab") or {"lstm": 10000, "base": 37000, "gpt2-small": 50257}[
        "lstm" if a.model == "lstm" else a.variant]
    # tokens as the model's forward takes them: [S, B] for the LSTM and nn.Transformer,
    # [B, S] for GPT-2; targets in the logits' order
    shapes = [tuple(a.batch if d == 1 else d for d in x.shape) for x in args]
    inputs = [torch.randint(0, vocab, s) for s in shapes]
    targets = torch.randint(0, vocab, shapes[-1])
    clip, smoothing, scale = None, 0.0, 1.0
    if a.model == "lstm":
        opt = torch.optim.SGD(model.parameters(), lr=1.0 if a.lr is None else a.lr)
        clip, scale = 5.0, float(shapes[0][0])  # the loss summed over the unrolled steps
    elif a.variant == "base":
        opt = torch.optim.Adam(model.parameters(), lr=6.99e-4 if a.lr is None else a.lr,
                               betas=(0.9, 0.98), eps=1e-9)
        smoothing = 0.1
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=6e-4 if a.lr is None else a.lr,
                                betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)
        clip = 1.0

    if a.mode == "inference":
        model.eval()

        def forward():
            with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16,
                                                        enabled=a.bf16):
                model(*inputs)
        return forward

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.bf16):
            logits = model(*inputs).float()
            loss = scale * F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                           targets.reshape(-1), label_smoothing=smoothing)
        loss.backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
    return step


def timed(fn, warmup, min_steps, min_time):
    for _ in range(warmup):
        fn()
    times, start = [], time.perf_counter()
    while len(times) < min_steps or time.perf_counter() - start < min_time:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("variant")
    ap.add_argument("mode", choices=["train", "inference"])
    ap.add_argument("batch", type=int)
    ap.add_argument("--bf16", action="store_true")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--lr", type=float, help="learning rate (default: the model's, as xpubench)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--min-steps", type=int, default=10)
    ap.add_argument("--min-time", type=float, default=3.0)
    ap.add_argument("--param", action="append", default=[],
                    help="NAME=VALUE: a model parameter of a sequence model, as xpubench's")
    a = ap.parse_args()

    torch.set_num_threads(a.threads)  # Debian's torch defaults to 1 thread here
    torch.manual_seed(0)
    if a.model in ("lstm", "transformer"):
        step = seq_setup(a)
        model = shape = classes = x = None
    else:
        model, shape, classes = torch_models.build(a.model, a.variant)
        x = torch.rand(a.batch, *shape) * 2 - 1
    if model is None:
        pass
    elif a.mode == "inference":
        net = model.G_A if a.model == "cyclegan" else model
        net.eval()

        def step():
            with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16,
                                                        enabled=a.bf16):
                net(x)
    elif a.model == "cyclegan":
        real_b = torch.rand(a.batch, *shape) * 2 - 1
        g = list(model.G_A.parameters()) + list(model.G_B.parameters())
        d = list(model.D_A.parameters()) + list(model.D_B.parameters())
        lr = 2e-4 if a.lr is None else a.lr
        opt_g = torch.optim.Adam(g, lr=lr, betas=(0.5, 0.999))
        opt_d = torch.optim.Adam(d, lr=lr, betas=(0.5, 0.999))
        model.train()

        def step():
            cyclegan_step(model, opt_g, opt_d, x, real_b, a.bf16)
    else:
        y = torch.randint(0, classes, (a.batch,))
        opt = torch.optim.SGD(model.parameters(), lr=0.01 if a.lr is None else a.lr, momentum=0.9)
        model.train()

        def step():
            classifier_step(model, opt, x, y, a.bf16)

    times = timed(step, a.warmup, a.min_steps, a.min_time)
    times.sort()
    pct = lambda p: times[min(len(times) - 1, int(p * len(times)))]
    print(json.dumps({
        "framework": "pytorch " + torch.__version__, "model": a.model, "variant": a.variant,
        "mode": a.mode, "batch": a.batch, "params": a.param, "precision": "bf16" if a.bf16 else "fp32",
        "threads": torch.get_num_threads(), "steps": len(times),
        "samples_per_s": a.batch * len(times) / sum(times),
        "p50_ms": 1e3 * statistics.median(times), "p95_ms": 1e3 * pct(0.95),
        "blas": os.path.realpath("/usr/lib/x86_64-linux-gnu/libblas.so.3"),
        "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}))


if __name__ == "__main__":
    main()
