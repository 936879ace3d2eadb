#!/usr/bin/env python3
"""Replays a step dumped by `xpubench run --dump DIR` in PyTorch and compares.

    python3 tests/torch/check_dump.py DUMP_DIR [--tol 1e-4] [--float32] [--quiet]

The model named by manifest.json (conv6, vgg16, resnet18, cyclegan) is rebuilt from
xpb_torch_models.py; its variant and sizes are read from the dumped tensors (input size,
7x7 stem, number of residual blocks, ngf/ndf). The dumped initial parameters, batch-norm
statistics and batch are loaded, then one step runs as xpubench defines it:

  classifiers  train: cross-entropy, backward, SGD (manifest's lr/momentum/weight decay);
               inference: the forward pass in evaluation mode
  cyclegan     the reference implementation's optimize_parameters(): generators phase (LSGAN,
               cycle x10, identity x5; Adam on G_A, G_B), then the discriminators phase on the
               detached fakes (0.5 (real vs 1 + fake vs 0); Adam on D_A, D_B)

Every loss, output, parameter gradient, parameter and state after the step is compared with
the dump: error = max|dump - torch| / max|torch| (norm-relative max error), against --tol.

Two kinds of tensor need care and are reported as such, never silently passed:
  * a gradient that is zero in exact arithmetic (the bias of a convolution followed by
    instance norm: the norm removes any per-channel constant) is rounding noise on both
    sides; it passes ("~0") when both are below 1e-5 of the network's largest gradient;
  * Adam's first step moves every element by about lr * sign(grad), so where the gradient is
    such noise (or tiny against eps) the update is not comparable between two correct
    implementations; those parameters are checked against torch's Adam applied to the
    *dumped* gradient instead ("via dumped grad").

A ReLU or LeakyReLU input within rounding of 0 may fall on the other side of the kink in the
dump's fp32 forward than in the replay, and a max-pool window whose two largest inputs are
within rounding of each other may pick the other one; either changes one element of the
backward pass and every gradient below it by far more than 1e-4. When gradients disagree, the
replay looks for such inputs (within --kink-radius, 2e-5, of the call's largest |x|), flips
them one at a time (smallest margin first) and keeps a flip only when it removes at least a
tenth of the disagreement; each kept flip is printed ("kink: ..."), so a mismatch it explains
is visible, not hidden.

The replay runs in float64 (the better oracle) unless --float32 is given. Exit status: 0 when
everything agrees, 1 on a mismatch, 2 when the dump cannot be replayed.
"""

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # pragma: no cover - reported to the caller
    print("check_dump: PyTorch is not installed (Debian: apt-get install python3-torch)",
          file=sys.stderr)
    sys.exit(77)

import xpb_torch_models as xm  # noqa: E402

ZERO_GRAD = 1e-5  # below this fraction of the network's largest gradient, a gradient is ~0


class Replay:
    def __init__(self, path, dtype):
        self.dir = path
        with open(os.path.join(path, "manifest.json")) as f:
            self.m = json.load(f)
        if self.m.get("format") != "xpubench-dump":
            raise SystemExit("check_dump: %s is not an xpubench dump" % path)
        self.dtype = dtype
        self.t = {}  # (kind, name) -> numpy array
        for e in self.m["tensors"]:
            self.t[(e["kind"], e["name"])] = np.load(os.path.join(path, e["file"]))
        self.rows = []  # (status, kind, name, shape, max_abs, rel, note)

    def get(self, kind, name):
        return self.t.get((kind, name))

    def names(self, kind):
        return [n for (k, n) in self.t if k == kind]

    def tensor(self, kind, name):
        a = self.get(kind, name)
        if a is None:
            raise SystemExit("check_dump: the dump has no %s '%s'" % (kind, name))
        if a.dtype == np.int32:
            return torch.from_numpy(a.astype(np.int64))
        return torch.from_numpy(a.astype(np.float64 if self.dtype == torch.float64 else np.float32))

    # ---- the model ----

    def infer_config(self):
        """model, variant and keyword sizes from the manifest and the tensors' shapes."""
        model = self.m["model"]
        params = self.m.get("params") or {}
        kw = {}
        if str(params.get("dropout", "false")).lower() in ("true", "yes", "on", "1"):
            raise SystemExit("check_dump: the run used dropout; its masks are not in the dump, "
                             "so the step cannot be replayed (rerun without dropout)")
        if model == "conv6":
            variant = "cifar"
        elif model == "vgg16":
            variant = "imagenet" if self.get("param", "classifier.0.weight") is not None else "cifar"
        elif model == "resnet18":
            variant = "imagenet" if self.get("param", "conv1.weight").shape[2] == 7 else "cifar"
        elif model == "cyclegan":
            blocks = len([n for n in self.names("param")
                          if n.startswith("G_A.") and n.endswith("conv_block.1.weight")])
            variant = {6: "small", 9: "full"}.get(blocks)
            if variant is None:
                raise SystemExit("check_dump: cyclegan with %d residual blocks" % blocks)
            kw["ngf"] = self.get("param", "G_A.model.1.weight").shape[0]
            kw["ndf"] = self.get("param", "D_A.model.0.weight").shape[0]
        else:
            raise SystemExit("check_dump: unknown model '%s'" % model)
        if self.m.get("variant") not in (None, variant):
            raise SystemExit("check_dump: manifest variant '%s' but the tensors are '%s'"
                             % (self.m["variant"], variant))
        return model, variant, kw

    def load_model(self):
        model, variant, kw = self.infer_config()
        self.model_name, self.variant = model, variant
        torch.manual_seed(0)
        net = xm.build(model, variant, **kw).to(self.dtype)
        dumped = set(self.names("param"))
        for name, p in net.named_parameters():
            if name not in dumped:
                raise SystemExit("check_dump: torch parameter '%s' is not in the dump" % name)
            if tuple(p.shape) != self.get("param", name).shape:
                raise SystemExit("check_dump: '%s' is %s in torch, %s in the dump"
                                 % (name, tuple(p.shape), self.get("param", name).shape))
            with torch.no_grad():
                p.copy_(self.tensor("param", name))
            dumped.discard(name)
        if dumped:
            raise SystemExit("check_dump: dumped parameters unknown to torch: %s"
                             % ", ".join(sorted(dumped)))
        for name, b in net.named_buffers():
            if name.endswith("num_batches_tracked"):
                continue
            if self.get("state", name) is None:
                raise SystemExit("check_dump: torch buffer '%s' is not in the dump" % name)
            with torch.no_grad():
                b.copy_(self.tensor("state", name))
        self.net = net
        return net

    # ---- comparison ----

    def compare(self, kind, name, ours, ref, note=""):
        ours = np.asarray(ours, dtype=np.float64)
        ref = ref.detach().to(torch.float64).numpy() if torch.is_tensor(ref) else np.asarray(ref, np.float64)
        if ours.shape != ref.shape and ours.size == ref.size:
            ours = ours.reshape(ref.shape)
        if ours.shape != ref.shape:
            self.rows.append(("FAIL", kind, name, ref.shape, float("nan"), float("nan"),
                              "shape %s in the dump" % (ours.shape,)))
            return
        err = float(np.max(np.abs(ours - ref))) if ref.size else 0.0
        scale = float(np.max(np.abs(ref))) if ref.size else 0.0
        rel = err / scale if scale > 0 else (0.0 if err == 0 else float("inf"))
        ok = rel <= self.tol and np.all(np.isfinite(ours))
        self.rows.append(("ok" if ok else "FAIL", kind, name, ref.shape, err, rel, note))

    def compare_grad(self, name, ref, net_scale):
        ours = self.get("grad", name + ".grad")
        if ours is None:
            self.rows.append(("FAIL", "grad", name, tuple(ref.shape), float("nan"),
                              float("nan"), "not in the dump"))
            return False
        refmax = float(ref.abs().max())
        oursmax = float(np.max(np.abs(ours)))
        if refmax <= ZERO_GRAD * net_scale:
            ok = oursmax <= ZERO_GRAD * net_scale
            self.rows.append(("~0" if ok else "FAIL", "grad", name + ".grad", tuple(ref.shape),
                              abs(oursmax - refmax), float("nan"),
                              "zero in exact arithmetic: max |dump| %.2e, |torch| %.2e, "
                              "network max %.2e" % (oursmax, refmax, net_scale)))
            return True
        self.compare("grad", name + ".grad", ours, ref)
        return False

    def grad_error(self, name, ref, net_scale):
        """Norm-relative error of the dumped gradient of `name`, None when both sides are ~0
        (see ZERO_GRAD), inf when it is not in the dump."""
        ours = self.get("grad", name + ".grad")
        if ours is None:
            return float("inf")
        refmax = float(ref.abs().max())
        if refmax <= ZERO_GRAD * net_scale and float(np.max(np.abs(ours))) <= ZERO_GRAD * net_scale:
            return None
        return float(np.max(np.abs(ours - ref.detach().numpy()))) / max(refmax, 1e-300)

    def gradients(self, total, modules):
        """Differentiates `total` for every parameter of `modules` ((prefix, module) pairs),
        resolving ReLU kink flips (KinkLog) when the gradients disagree, stores the gradients
        in .grad and compares them. Returns the names of the ~0 gradients."""
        plist = [(prefix + n, p, m) for prefix, m in modules for n, p in m.named_parameters()]
        params = [p for _, p, _ in plist]

        def evaluate(grads):
            scales = {}
            for (n, p, m), g in zip(plist, grads):
                scales[id(m)] = max(scales.get(id(m), 0.0), float(g.abs().max()))
            errs = [self.grad_error(n, g, scales[id(m)]) for (n, p, m), g in zip(plist, grads)]
            live = [min(e, 1e6) for e in errs if e is not None]
            return sum(live), max(live) if live else 0.0

        def full():
            xm.KinkLog.record = True
            g = torch.autograd.grad(total, params, retain_graph=True)
            xm.KinkLog.record = False
            return list(g)

        grads = full()
        score, worst = evaluate(grads)
        cands = sorted(((float(c.rel[j]), c, j) for c in xm.KinkLog.calls
                        for j in range(c.idx.numel())), key=lambda t: t[0])
        tried = 0
        for rel, call, j in cands:
            if worst <= self.tol or tried >= self.max_flips:
                break
            gy = float(call.gy[j])
            if gy == 0.0:
                continue  # no gradient reaches this input: its mask cannot matter
            tried += 1
            # A flip changes d(total)/dx of the call's input by trial_vector(j); its effect on
            # the parameter gradients is the vector-Jacobian product below x.
            d = torch.autograd.grad(call.x, params, grad_outputs=call.trial_vector(j),
                                    retain_graph=True, allow_unused=True)
            g2 = [g if dg is None else g + dg for g, dg in zip(grads, d)]
            s2, w2 = evaluate(g2)
            if s2 < 0.9 * score:
                call.flip[j] = True
                grads = full()  # exact, and refreshes the incoming gradients
                score, worst = evaluate(grads)
                where = np.unravel_index(int(call.idx[j]), call.shape)
                what = ("max-pool window, top two %.2e apart" if isinstance(call, xm.PoolCall)
                        else "|x| = %.2e") % rel
                self.kinks.append("%s at %s: %s (relative to the call's largest |x|)"
                                  % (call.name, list(int(i) for i in where), what))
        self.kink_trials += tried
        xm.KinkLog.active = False
        zero = set()
        for (n, p, m), g in zip(plist, grads):
            p.grad = g.detach().clone()
        for prefix, m in modules:
            scale = max(float(p.grad.abs().max()) for p in m.parameters())
            for n, p in m.named_parameters():
                if self.compare_grad(prefix + n, p.grad, scale):
                    zero.add(prefix + n)
        return zero

    def compare_after(self, net, opt_of, zero_grads, adam):
        for name, p in net.named_parameters():
            after = self.get("param_after", name)
            if after is None:
                self.rows.append(("FAIL", "param_after", name, tuple(p.shape), float("nan"),
                                  float("nan"), "not in the dump"))
                continue
            if adam and self.adam_sensitive(name, zero_grads):
                # torch's Adam on the dumped gradient, from the dumped initial value
                q = self.tensor("param", name).clone().requires_grad_(True)
                q.grad = self.tensor("grad", name + ".grad")
                o = opt_of(name)
                torch.optim.Adam([q], lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=o["eps"],
                                 weight_decay=o["weight_decay"]).step()
                self.compare("param_after", name, after, q, "via dumped grad")
            else:
                self.compare("param_after", name, after, p)
        for name, b in net.named_buffers():
            if name.endswith("num_batches_tracked"):
                continue
            self.compare("state_after", name, self.get("state_after", name), b)

    def adam_sensitive(self, name, zero_grads):
        """True when Adam's first step is ill-conditioned for this parameter: its gradient is
        ~0, or some element is within 1e3 of eps (the update's sign/size then hinges on
        rounding)."""
        if name in zero_grads:
            return True
        g = self.get("grad", name + ".grad")
        return g is not None and float(np.min(np.abs(g))) < 1e-5

    # ---- the step ----

    def optimizer(self, phase):
        for o in self.m.get("optimizers", []):
            if o["phase"] == phase:
                return o
        raise SystemExit("check_dump: no optimizer for phase '%s' in the manifest" % phase)

    def run_classifier(self):
        net = self.net
        x, labels = self.tensor("input", "images"), self.tensor("input", "labels")
        outputs = self.names("output")
        if self.m["mode"] == "inference":
            net.eval()
            with torch.no_grad():
                logits = net(x)
            for name in outputs:
                self.compare("output", name, self.get("output", name), logits)
            return
        net.train()
        xm.KinkLog.start(self.kink_radius)
        logits = net(x)
        loss = F.cross_entropy(logits, labels)
        for name in outputs:
            self.compare("output", name, self.get("output", name), logits)
        for e in self.m["losses"]:
            self.compare("loss", e["tensor"], np.array([e["value"]]), loss.reshape(1))
        zero = self.gradients(loss, [("", net)])
        o = self.optimizer(self.m["losses"][0]["phase"])
        if o["kind"] != "sgd":
            raise SystemExit("check_dump: classifier optimizer '%s'" % o["kind"])
        torch.optim.SGD(net.parameters(), lr=o["lr"], momentum=o["momentum"],
                        weight_decay=o["weight_decay"]).step()
        self.compare_after(net, lambda n: o, zero, adam=False)

    def run_cyclegan(self):
        net = self.net
        real_a, real_b = self.tensor("input", "real_A"), self.tensor("input", "real_B")
        dumped = {e["tensor"]: e for e in self.m["losses"]}
        for name, w in (xm.CYCLEGAN_WEIGHTS.items() if self.m["mode"] == "train" else ()):
            if name not in dumped:
                raise SystemExit("check_dump: loss '%s' is not in the manifest" % name)
            if abs(dumped[name]["weight"] - w) > 1e-12:
                raise SystemExit("check_dump: loss '%s' has weight %g, the reference %g"
                                 % (name, dumped[name]["weight"], w))
        gens = [net.G_A, net.G_B]
        discs = [net.D_A, net.D_B]
        outputs = {n.split("/")[0]: n for n in self.names("output")}
        if self.m["mode"] == "inference":
            with torch.no_grad():
                refs = {"fake_B": net.G_A(real_a), "fake_A": net.G_B(real_b)}
            for short, name in outputs.items():
                self.compare("output", name, self.get("output", name), refs[short])
            return
        o_g, o_d = self.optimizer("generators"), self.optimizer("discriminators")
        for o in (o_g, o_d):
            if o["kind"] != "adam":
                raise SystemExit("check_dump: cyclegan optimizer '%s'" % o["kind"])

        def adam(modules, o):
            return torch.optim.Adam([p for m in modules for p in m.parameters()], lr=o["lr"],
                                    betas=(o["beta1"], o["beta2"]), eps=o["eps"],
                                    weight_decay=o["weight_decay"])

        opt_g, opt_d = adam(gens, o_g), adam(discs, o_d)
        # generators phase (set_requires_grad(D, False), as the reference)
        for p in net.D_A.parameters():
            p.requires_grad_(False)
        for p in net.D_B.parameters():
            p.requires_grad_(False)
        xm.KinkLog.start(self.kink_radius)
        fake_b, fake_a, lg = xm.cyclegan_losses_g(net, real_a, real_b)
        refs = {"fake_B": fake_b, "fake_A": fake_a}
        for short, name in outputs.items():
            self.compare("output", name, self.get("output", name), refs[short])
        for name, v in lg.items():
            self.compare("loss", name, np.array([dumped[name]["value"]]), v.reshape(1))
        total = sum(xm.CYCLEGAN_WEIGHTS[n] * v for n, v in lg.items())
        zero = self.gradients(total, [("G_A.", net.G_A), ("G_B.", net.G_B)])
        opt_g.step()
        # discriminators phase, on the fakes computed before the generators' update
        for p in net.D_A.parameters():
            p.requires_grad_(True)
        for p in net.D_B.parameters():
            p.requires_grad_(True)
        ld = xm.cyclegan_losses_d(net, real_a, real_b, fake_b, fake_a)
        for name, v in ld.items():
            self.compare("loss", name, np.array([dumped[name]["value"]]), v.reshape(1))
        xm.KinkLog.start(self.kink_radius)
        total = sum(xm.CYCLEGAN_WEIGHTS[n] * v for n, v in ld.items())
        zero |= self.gradients(total, [("D_A.", net.D_A), ("D_B.", net.D_B)])
        opt_d.step()
        self.compare_after(net, lambda n: o_g if n.startswith("G_") else o_d, zero, adam=True)

    def run(self, tol, max_flips, kink_radius=2e-5):
        self.tol, self.max_flips, self.kink_radius = tol, max_flips, kink_radius
        self.kinks, self.kink_trials = [], 0
        self.load_model()
        xm.name_kinks(self.net)
        if self.model_name == "cyclegan":
            self.run_cyclegan()
        else:
            self.run_classifier()

    def report(self, quiet):
        m = self.m
        print("dump %s: %s/%s %s batch %s on %s (%s), replayed in torch %s (%s)"
              % (self.dir, m["model"], self.variant, m["mode"], m["batch"], m["backend"],
                 m["precision"], torch.__version__, str(self.dtype).replace("torch.", "")))
        print("%-4s  %-11s  %-48s  %-18s  %10s  %10s  %s"
              % ("", "kind", "tensor", "shape", "max |diff|", "rel error", "note"))
        worst = {}
        for st, kind, name, shape, err, rel, note in self.rows:
            if not (rel != rel) and rel > worst.get(kind, (-1, ""))[0]:
                worst[kind] = (rel, name)
            if quiet and st in ("ok", "~0"):
                continue
            print("%-4s  %-11s  %-48s  %-18s  %10.3e  %10.3e  %s"
                  % (st, kind, name, "x".join(str(d) for d in shape), err, rel, note))
        failed = [r for r in self.rows if r[0] == "FAIL"]
        zeros = [r for r in self.rows if r[0] == "~0"]
        print("summary: %d tensors compared, %d failed, %d gradients ~0 on both sides, "
              "tolerance %.1e" % (len(self.rows), len(failed), len(zeros), self.tol))
        for k in self.kinks:
            print("  kink: %s (the dump's fp32 forward took the other side)" % k)
        if self.kink_trials:
            print("  %d near-kink inputs tried, %d flips kept" % (self.kink_trials, len(self.kinks)))
        for kind in sorted(worst):
            print("  worst %-11s %.3e  %s" % (kind, worst[kind][0], worst[kind][1]))
        return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dump", help="folder written by xpubench run --dump")
    ap.add_argument("--tol", type=float, default=1e-4, help="norm-relative tolerance (1e-4)")
    ap.add_argument("--float32", action="store_true", help="replay in float32, not float64")
    ap.add_argument("--quiet", action="store_true", help="print only mismatches and the summary")
    ap.add_argument("--max-flips", type=int, default=200,
                    help="near-kink inputs to try when gradients disagree (200)")
    ap.add_argument("--kink-radius", type=float, default=2e-5,
                    help="a ReLU input within this fraction of the call's largest |x| is a "
                         "near-kink candidate (2e-5; deep fp32 forwards may need 1e-4)")
    args = ap.parse_args()
    if not os.path.exists(os.path.join(args.dump, "manifest.json")):
        print("check_dump: %s/manifest.json not found" % args.dump, file=sys.stderr)
        return 2
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    r = Replay(args.dump, torch.float32 if args.float32 else torch.float64)
    try:
        r.run(args.tol, args.max_flips, args.kink_radius)
    except SystemExit as e:
        print(e, file=sys.stderr)
        return 2
    return r.report(args.quiet)


if __name__ == "__main__":
    sys.exit(main())
