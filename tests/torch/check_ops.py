#!/usr/bin/env python3
"""Every op of op set 3 of the reference backend, forward and backward, against PyTorch 1.13 on
random shapes (ctest torch_check_ops; docs/ops.md is the definition, PyTorch its oracle):

    python3 tests/torch/check_ops.py REF_OP_NPY WORK_DIR [--trials N] [--seed S] [--verbose]

REF_OP_NPY (tests/torch/ref_op_npy.c) runs one cpu_ref kernel on .npy files. For each op this
script draws random shapes and attributes (broadcast batch dims, odd sizes, transposes, masks
with -inf and causal masking, repeated embedding indices and the padding row, LSTMs with and
without initial states, ignored labels and label smoothing, several AdamW steps, clipping below
and above max_norm), runs the kernel, and computes the same thing with PyTorch twice: in
float64 from the same fp32 inputs (the oracle) and in float32 (what PyTorch itself gets).

Error of a tensor: max|ours - torch64| / max|torch64|, the norm-relative max error, printed in
units of fp32's epsilon 2^-23 ("ulps at the scale of the result"): a correctly rounded fp32
result is within 0.5. NaNs must sit where PyTorch has them. The check passes when every tensor
is within TOL_ULPS (the fp32 error of sums over up to a few hundred terms, as PyTorch's own
float32 results have; the table prints those too). A backward op is compared with PyTorch's
gradient of the forward op from the forward's inputs (autograd), except SOFTMAX_BWD, whose
own inputs (dy and the fp32 softmax y) go to PyTorch's softmax backward; the chain SOFTMAX ->
SOFTMAX_BWD against autograd is then a row of its own, allowed twice PyTorch's float32 error
(where dy - sum(dy y) cancels, y's rounding is amplified for every fp32 implementation).
Exits 77 without torch, 1 on a failure.
"""

import argparse
import os
import subprocess
import sys

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
except ImportError:
    print("torch (or numpy) is not installed for %s: op cross-checks skipped" % sys.executable)
    sys.exit(77)

EPS32 = 2.0 ** -23
TOL_ULPS = 64.0  # norm-relative 7.6e-6


class Check:
    """Runs ref_op_npy and keeps the worst error of every (op, tensor)."""

    def __init__(self, driver, work, verbose):
        self.driver, self.work, self.verbose = driver, work, verbose
        self.worst = {}  # op -> the worst tensor: [ours vs f64, torch f32 vs f64, name, case]
        self.failures = []
        self.calls = 0
        os.makedirs(work, exist_ok=True)

    def run(self, op, attrs, ins, outs, write_inputs=False):
        """ins: arrays (None: absent); outs: (shape, dtype) or None (unwanted). Returns the
        outputs (None where unwanted), and the inputs read back when write_inputs."""
        self.calls += 1
        args = [self.driver, op] + ["%s=%s" % kv for kv in attrs.items()]
        paths = []
        for i, a in enumerate(ins):
            if a is None:
                args.append("in=-")
                paths.append(None)
                continue
            p = os.path.join(self.work, "in%d.npy" % i)
            np.save(p, np.ascontiguousarray(a))
            args.append("in=" + p)
            paths.append(p)
        out_paths = []
        for j, o in enumerate(outs):
            if o is None:
                args.append("out=-")
                out_paths.append(None)
                continue
            shape, dtype = o
            p = os.path.join(self.work, "out%d.npy" % j)
            spec = "x".join(str(d) for d in shape) + (":i32" if dtype == np.int32 else "")
            args.append("out=%s:%s" % (p, spec))
            out_paths.append(p)
        if write_inputs:
            args.append("write_inputs=1")
        r = subprocess.run(args, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("%s failed: %s" % (" ".join(args), r.stderr.strip()))
        res = [None if p is None else np.load(p) for p in out_paths]
        if write_inputs:
            return res, [None if p is None else np.load(p) for p in paths]
        return res

    def compare(self, op, name, ours, ref64, ref32, case, relaxed=False):
        """Records the error of one tensor (ours against torch float64; torch float32 too).
        `relaxed`: a chain of ops whose conditioning amplifies the rounding of an intermediate;
        it passes when within TOL_ULPS or within twice PyTorch's own float32 error."""
        ours = np.asarray(ours, dtype=np.float64)
        ref64 = np.asarray(ref64.detach() if torch.is_tensor(ref64) else ref64, np.float64)
        ref32 = None if ref32 is None else np.asarray(
            ref32.detach() if torch.is_tensor(ref32) else ref32, np.float64)
        if ours.shape != ref64.shape:
            ours = ours.reshape(ref64.shape)
        err = self.error(ours, ref64)
        err32 = self.error(ref32.reshape(ref64.shape), ref64) if ref32 is not None else 0.0
        w = self.worst.setdefault(op, [0.0, 0.0, "", ""])
        if err > w[0] or (err == w[0] and not w[2]):
            w[:] = [err, err32, name, case]
        if self.verbose:
            print("  %-22s %-8s %8.2f ulps (torch f32 %6.2f)  %s"
                  % (op, name, err / EPS32, err32 / EPS32, case))
        if not (err / EPS32 <= TOL_ULPS or (relaxed and err <= 2 * err32)):
            self.failures.append("%s %s: %.3g ulps at the scale of the result (%s)"
                                 % (op, name, err / EPS32, case))

    @staticmethod
    def error(a, ref):
        nan_a, nan_r = np.isnan(a), np.isnan(ref)
        if (nan_a != nan_r).any():
            return float("inf")
        a, ref = a[~nan_r], ref[~nan_r]
        if a.size == 0:
            return 0.0
        if (np.isinf(a) | np.isinf(ref)).any():
            return 0.0 if np.array_equal(a, ref) else float("inf")
        scale = np.abs(ref).max()
        return float(np.abs(a - ref).max() / max(scale, 1e-30))


def f32(rng, *shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def both(fn):
    """fn(dtype) computed in float64 and float32: (r64, r32)."""
    return fn(torch.float64), fn(torch.float32)


def t(a, dtype, grad=False):
    x = torch.tensor(np.asarray(a), dtype=dtype)
    return x.requires_grad_(grad)


def grads(fn, arrays, dy, dtype):
    """The outputs of fn(*tensors) and the gradients of sum(dy * out) w.r.t. every tensor
    (None where an array is None or an int array)."""
    ts = [None if a is None else t(a, torch.long if a.dtype == np.int32 else dtype,
                                   a.dtype != np.int32) for a in arrays]
    out = fn(*ts)
    outs = out if isinstance(out, tuple) else (out,)
    loss = sum((o * t(d, dtype)).sum() for o, d in zip(outs, dy) if d is not None)
    gs = torch.autograd.grad(loss, [x for x in ts if x is not None and x.requires_grad],
                             allow_unused=True)
    it = iter(gs)
    return outs, [None if x is None or not x.requires_grad else next(it) for x in ts]


# ---- the ops ----

def op_t(x, tr):
    return x.transpose(-1, -2) if tr else x


def check_matmul(c, rng, trial):
    m, k, n = (int(v) for v in rng.integers(1, 48, size=3))
    tr = int(rng.integers(0, 4))
    ta, tb = tr & 1, tr >> 1
    a = f32(rng, *((k, m) if ta else (m, k)))
    b = f32(rng, *((n, k) if tb else (k, n)))
    bias = f32(rng, n) if trial % 2 == 0 else None
    case = "a %s b %s transpose %d%s" % (a.shape, b.shape, tr, " bias" if bias is not None else "")
    ins = [a, b] + ([bias] if bias is not None else [])
    (y,) = c.run("MATMUL", {"transpose": tr}, ins, [((m, n), np.float32)])
    dy = f32(rng, m, n)

    def f(a_, b_, *bias_):
        r = op_t(a_, ta) @ op_t(b_, tb)
        return r + bias_[0] if bias_ else r
    (r64,), g64 = grads(f, ins, [dy], torch.float64)
    (r32,), g32 = grads(f, ins, [dy], torch.float32)
    c.compare("MATMUL", "y", y, r64, r32, case)
    want = [(a.shape, np.float32), (b.shape, np.float32)]
    if bias is not None:
        want.append(((n,), np.float32))
    if trial % 3 == 1:
        want[0] = None  # da not wanted
    outs = c.run("MATMUL_BWD", {"transpose": tr}, [dy, a, b], want)
    for i, name in enumerate(["da", "db", "dbias"][:len(outs)]):
        if outs[i] is not None:
            c.compare("MATMUL_BWD", name, outs[i], g64[i], g32[i], case)


def batch_shapes(rng):
    nd = int(rng.integers(1, 3))  # batch dims of y
    dims = [int(v) for v in rng.integers(1, 4, size=nd)]
    shapes = []
    for _ in range(2):
        own = int(rng.integers(1, 3)) if nd == 2 else 1  # 3-D or 4-D operand
        own = min(own, nd) if rng.random() < 0.7 else nd
        bd = [d if rng.random() < 0.7 else 1 for d in dims[nd - own:]]
        shapes.append(bd)
    return shapes


def check_batched_matmul(c, rng, trial):
    ba, bb = batch_shapes(rng)
    m, k, n = (int(v) for v in rng.integers(1, 24, size=3))
    tr = int(rng.integers(0, 4))
    ta, tb = tr & 1, tr >> 1
    a = f32(rng, *(ba + ([k, m] if ta else [m, k])))
    b = f32(rng, *(bb + ([n, k] if tb else [k, n])))
    case = "a %s b %s transpose %d" % (a.shape, b.shape, tr)
    f = lambda a_, b_: torch.matmul(op_t(a_, ta), op_t(b_, tb))
    yshape = tuple(f(torch.tensor(a), torch.tensor(b)).shape)
    (y,) = c.run("BATCHED_MATMUL", {"transpose": tr}, [a, b], [(yshape, np.float32)])
    dy = f32(rng, *yshape)
    (r64,), g64 = grads(f, [a, b], [dy], torch.float64)
    (r32,), g32 = grads(f, [a, b], [dy], torch.float32)
    c.compare("BATCHED_MATMUL", "y", y, r64, r32, case)
    da, db = c.run("BATCHED_MATMUL_BWD", {"transpose": tr}, [dy, a, b],
                   [(a.shape, np.float32), (b.shape, np.float32)])
    c.compare("BATCHED_MATMUL_BWD", "da", da, g64[0], g32[0], case)
    c.compare("BATCHED_MATMUL_BWD", "db", db, g64[1], g32[1], case)


def check_permute(c, rng, trial):
    nd = int(rng.integers(1, 5))
    shape = [int(v) for v in rng.integers(1, 7, size=nd)]
    perm = [int(v) for v in rng.permutation(nd)]
    x = f32(rng, *shape)
    if trial % 2:
        x = rng.integers(-1000, 1000, size=shape).astype(np.int32)
    want = np.ascontiguousarray(np.transpose(x, perm))
    (y,) = c.run("PERMUTE", {"perm": ",".join(map(str, perm))}, [x],
                 [(want.shape, x.dtype.type)])
    c.compare("PERMUTE", "y", y, torch.tensor(x).permute(perm).double(), None,
              "x %s perm %s %s" % (x.shape, perm, x.dtype))


def bcast_pair(rng):
    nd = int(rng.integers(1, 5))
    y = [int(v) for v in rng.integers(1, 6, size=nd)]
    ops = []
    for _ in range(2):
        own = int(rng.integers(1, nd + 1))
        ops.append([d if rng.random() < 0.6 else 1 for d in y[nd - own:]])
    return ops


def check_broadcast(c, rng, trial):
    sa, sb = bcast_pair(rng)
    a, b = f32(rng, *sa), f32(rng, *sb)
    case = "a %s b %s" % (a.shape, b.shape)
    for op in ("ADD_BROADCAST", "MUL"):
        f = (lambda x, z: x + z) if op == "ADD_BROADCAST" else (lambda x, z: x * z)
        yshape = tuple(f(torch.tensor(a), torch.tensor(b)).shape)
        (y,) = c.run(op, {}, [a, b], [(yshape, np.float32)])
        dy = f32(rng, *yshape)
        (r64,), g64 = grads(f, [a, b], [dy], torch.float64)
        (r32,), g32 = grads(f, [a, b], [dy], torch.float32)
        c.compare(op, "y", y, r64, r32, case)
        # the autodiff's backward: (MUL(dy, other) for MUL), then SUM_TO the operand's shape
        for i, (mine, other) in enumerate(((a, b), (b, a))):
            g = dy
            if op == "MUL":
                (g,) = c.run("MUL", {}, [dy, other], [(yshape, np.float32)])
            (d,) = c.run("SUM_TO", {}, [g], [(mine.shape, np.float32)])
            c.compare(op + " (bwd)", "d" + "ab"[i], d, g64[i], g32[i], case)


def check_sum_to_and_scale(c, rng, trial):
    sx, sy = bcast_pair(rng)
    x = f32(rng, *(np.broadcast_shapes(tuple(sx), tuple(sy))))
    (y,) = c.run("SUM_TO", {}, [x], [(tuple(sy), np.float32)])
    r64, r32 = both(lambda dt: t(x, dt).sum_to_size(*sy))
    c.compare("SUM_TO", "y", y, r64, r32, "x %s -> %s" % (x.shape, tuple(sy)))
    value = float(np.float32(rng.uniform(-3, 3)))
    (y,) = c.run("SCALE", {"value": repr(value)}, [x], [(x.shape, np.float32)])
    r64, r32 = both(lambda dt: value * t(x, dt))
    c.compare("SCALE", "y", y, r64, r32, "x %s value %g" % (x.shape, value))


def check_softmax(c, rng, trial):
    nd = int(rng.integers(1, 5)) if trial % 3 == 0 else int(rng.integers(2, 5))
    shape = [int(v) for v in rng.integers(1, 4, size=nd)]
    shape[-1] = int(rng.integers(1, 40))
    if nd > 1:
        shape[-2] = int(rng.integers(1, 20))
    sq, sk = (shape[-2] if nd > 1 else 1), shape[-1]
    causal = int(nd > 1 and trial % 2 == 1)
    masked = nd > 1 and trial % 3 != 2
    scale = float(np.float32(rng.uniform(0.05, 2.0)))
    x = f32(rng, *shape, lo=-4, hi=4)
    mask = None
    if masked:
        mask = f32(rng, sq, sk, lo=-2, hi=2)
        hide = rng.random((sq, sk)) < 0.3
        hide[:, 0] = False  # key 0 stays visible: no row is all -inf
        mask[hide] = -np.inf
    case = "x %s scale %.3g%s%s" % (x.shape, scale, " causal" if causal else "",
                                     " mask" if masked else "")
    attrs = {"scale": repr(scale), "causal": causal}
    (y,) = c.run("SOFTMAX", attrs, [x] + ([mask] if masked else []), [(x.shape, np.float32)])

    def f(x_, dt):
        z = scale * x_
        if mask is not None:
            z = z + t(mask, dt)
        if causal:
            z = z.masked_fill(torch.ones(sq, sk, dtype=torch.bool).triu(1), float("-inf"))
        return torch.softmax(z, -1)
    dy = f32(rng, *shape)
    (r64,), g64 = grads(lambda x_: f(x_, torch.float64), [x], [dy], torch.float64)
    (r32,), g32 = grads(lambda x_: f(x_, torch.float32), [x], [dy], torch.float32)
    c.compare("SOFTMAX", "y", y, r64, r32, case)
    (dx,) = c.run("SOFTMAX_BWD", attrs, [dy, y], [(x.shape, np.float32)])
    # the op: PyTorch's softmax backward on the op's own inputs (dy and the fp32 y)
    r64, r32 = both(lambda dt: scale * torch._softmax_backward_data(t(dy, dt), t(y, dt), -1, dt))
    c.compare("SOFTMAX_BWD", "dx", dx, r64, r32, case)
    # the chain against autograd from x: y's fp32 rounding is amplified where dy - sum(dy y)
    # cancels, for PyTorch's float32 as for us
    c.compare("SOFTMAX (chain)", "dx", dx, g64[0], g32[0], case, relaxed=True)


def check_layer_norm(c, rng, trial):
    nd = int(rng.integers(1, 5))
    shape = [int(v) for v in rng.integers(1, 5, size=nd)]
    shape[-1] = int(rng.integers(1, 70))
    d = shape[-1]
    eps = float(np.float32([1e-5, 1e-6, 1e-2, 0.0][trial % 4]))
    x = f32(rng, *shape, lo=-3, hi=5)
    gamma, beta = f32(rng, d, lo=0.5, hi=1.5), f32(rng, d)
    stat = tuple(shape[:-1]) or (1,)
    case = "x %s eps %g" % (x.shape, eps)
    y, mean, rstd = c.run("LAYER_NORM", {"eps": repr(eps)}, [x, gamma, beta],
                          [(x.shape, np.float32), (stat, np.float32), (stat, np.float32)])
    dy = f32(rng, *shape)
    f = lambda x_, g_, b_: F.layer_norm(x_, (d,), g_, b_, eps)
    (r64,), g64 = grads(f, [x, gamma, beta], [dy], torch.float64)
    (r32,), g32 = grads(f, [x, gamma, beta], [dy], torch.float32)
    c.compare("LAYER_NORM", "y", y, r64, r32, case)
    for dt, name, ref in ((torch.float64, "ws_mean", 0), (torch.float64, "ws_rstd", 1)):
        var, mu = torch.var_mean(t(x, dt), -1, unbiased=False)
        want = mu if ref == 0 else 1 / torch.sqrt(var + eps)
        c.compare("LAYER_NORM", name, (mean, rstd)[ref], want.reshape(stat), None, case)
    outs = c.run("LAYER_NORM_BWD", {"eps": repr(eps)}, [dy, x, gamma, mean, rstd],
                 [(x.shape, np.float32), ((d,), np.float32), ((d,), np.float32)])
    for i, name in enumerate(("dx", "dgamma", "dbeta")):
        c.compare("LAYER_NORM_BWD", name, outs[i], g64[i], g32[i], case)


def check_gelu(c, rng, trial):
    shape = [int(v) for v in rng.integers(1, 9, size=int(rng.integers(1, 5)))]
    x = f32(rng, *shape, lo=-6, hi=6)
    mode = trial % 2
    approx = "tanh" if mode else "none"
    (y,) = c.run("GELU", {"approximate": mode}, [x], [(x.shape, np.float32)])
    dy = f32(rng, *shape)
    f = lambda x_: F.gelu(x_, approximate=approx)
    (r64,), g64 = grads(f, [x], [dy], torch.float64)
    (r32,), g32 = grads(f, [x], [dy], torch.float32)
    case = "x %s approximate %s" % (x.shape, approx)
    c.compare("GELU", "y", y, r64, r32, case)
    (dx,) = c.run("GELU_BWD", {"approximate": mode}, [dy, x], [(x.shape, np.float32)])
    c.compare("GELU_BWD", "dx", dx, g64[0], g32[0], case)


def check_embedding(c, rng, trial):
    v, d = int(rng.integers(1, 30)), int(rng.integers(1, 17))
    ishape = [int(s) for s in rng.integers(1, 7, size=int(rng.integers(1, 4)))]
    idx = rng.integers(0, v, size=ishape).astype(np.int32)  # repeats when numel > v
    w = f32(rng, v, d)
    pad = int(rng.integers(0, v)) if trial % 2 == 0 else None
    attrs = {} if pad is None else {"index_flags": 1, "padding_idx": pad}
    if pad is not None:
        idx.flat[0] = pad
    case = "indices %s weight %s padding %s" % (idx.shape, w.shape, pad)
    yshape = tuple(ishape) + (d,)
    (y,) = c.run("EMBEDDING", attrs, [idx, w], [(yshape, np.float32)])
    dy = f32(rng, *yshape)
    f = lambda i_, w_: F.embedding(i_, w_, padding_idx=pad)
    (r64,), g64 = grads(f, [idx, w], [dy], torch.float64)
    (r32,), g32 = grads(f, [idx, w], [dy], torch.float32)
    c.compare("EMBEDDING", "y", y, r64, r32, case)
    (dw,) = c.run("EMBEDDING_BWD", attrs, [dy, idx], [(w.shape, np.float32)])
    c.compare("EMBEDDING_BWD", "dweight", dw, g64[1], g32[1], case)


def check_lstm(c, rng, trial):
    tt, b, i, h = (int(rng.integers(1, 13)), int(rng.integers(1, 5)), int(rng.integers(1, 11)),
                   int(rng.integers(1, 13)))
    states = trial % 2 == 1
    k = 1 / np.sqrt(h)  # nn.LSTM's initialisation range
    x = f32(rng, tt, b, i)
    w_ih, w_hh = f32(rng, 4 * h, i, lo=-k, hi=k), f32(rng, 4 * h, h, lo=-k, hi=k)
    b_ih, b_hh = f32(rng, 4 * h, lo=-k, hi=k), f32(rng, 4 * h, lo=-k, hi=k)
    h0, c0 = (f32(rng, b, h), f32(rng, b, h)) if states else (None, None)
    ins = [x, w_ih, w_hh, b_ih, b_hh] + ([h0, c0] if states else [])
    case = "T %d B %d I %d H %d%s" % (tt, b, i, h, " h0 c0" if states else "")
    y, hn, cn, ws = c.run("LSTM", {}, ins, [((tt, b, h), np.float32), ((b, h), np.float32),
                                             ((b, h), np.float32), ((tt, b, 5 * h), np.float32)])

    def f(dt):
        def run(x_, wi, wh, bi, bh, *st):
            m = torch.nn.LSTM(i, h).to(dt)
            del m.weight_ih_l0, m.weight_hh_l0, m.bias_ih_l0, m.bias_hh_l0
            m.weight_ih_l0, m.weight_hh_l0, m.bias_ih_l0, m.bias_hh_l0 = wi, wh, bi, bh
            out, (hn_, cn_) = m(x_, (st[0][None], st[1][None]) if st else None)
            return out, hn_[0], cn_[0]
        return run
    dy = f32(rng, tt, b, h)
    dhn = f32(rng, b, h) if trial % 3 == 0 else None
    dcn = f32(rng, b, h) if trial % 3 == 0 else None
    r64, g64 = grads(f(torch.float64), ins, [dy, dhn, dcn], torch.float64)
    r32, g32 = grads(f(torch.float32), ins, [dy, dhn, dcn], torch.float32)
    for j, (name, mine) in enumerate((("y", y), ("h_n", hn), ("c_n", cn))):
        c.compare("LSTM", name, mine, r64[j], r32[j], case)
    bwd_ins = [dy, dhn, dcn, x, w_ih, w_hh, y, ws] + ([h0, c0] if states else [])
    outs = c.run("LSTM_BWD", {}, bwd_ins, [(a.shape, np.float32) for a in ins])
    names = ("dx", "dw_ih", "dw_hh", "db_ih", "db_hh", "dh0", "dc0")
    for j in range(len(ins)):
        c.compare("LSTM_BWD", names[j], outs[j], g64[j], g32[j], case)


def check_xent(c, rng, trial):
    n, k = int(rng.integers(1, 40)), int(rng.integers(2, 60))
    eps = float(np.float32([0.0, 0.1, 0.3, 1.0][trial % 4]))
    ignore = [None, -100, int(rng.integers(0, k))][trial % 3]
    z = f32(rng, n, k, lo=-6, hi=6)
    labels = rng.integers(0, k, size=n).astype(np.int32)
    if ignore is not None:
        labels[rng.random(n) < 0.3] = ignore
        if trial == 5:  # every row ignored (smoothing 0.1): NaN loss, zero gradients, as PyTorch
            labels[:] = ignore
    attrs = {"label_smoothing": repr(eps)}
    if ignore is not None:
        attrs.update(index_flags=2, ignore_index=ignore)
    scale = float(np.float32(rng.uniform(0.25, 2)))
    case = "logits %s smoothing %g ignore %s%s" % (
        z.shape, eps, ignore, " (every row)" if (labels == ignore).all() else "")
    loss, prob = c.run("SOFTMAX_XENT", attrs, [z, labels],
                       [((1,), np.float32), ((n, k), np.float32)])
    f = lambda z_, l_: scale * F.cross_entropy(
        z_, l_, ignore_index=-100 if ignore is None else ignore, label_smoothing=eps)
    (r64,), g64 = grads(f, [z, labels], [np.float32(1.0)], torch.float64)
    (r32,), g32 = grads(f, [z, labels], [np.float32(1.0)], torch.float32)
    c.compare("SOFTMAX_XENT", "loss", loss * scale, r64.reshape(1), r32.reshape(1), case)
    (dz,) = c.run("SOFTMAX_XENT_BWD", dict(attrs, scale=repr(scale)), [prob, labels],
                  [((n, k), np.float32)])
    c.compare("SOFTMAX_XENT_BWD", "dlogits", dz, g64[0], g32[0], case)


def check_adamw(c, rng, trial):
    shape = [int(v) for v in rng.integers(1, 9, size=int(rng.integers(1, 4)))]
    lr = float(np.float32(rng.choice([1e-3, 1e-2, 3e-4])))
    b1, b2 = float(np.float32(0.9)), float(np.float32(rng.choice([0.95, 0.999])))
    eps, wd = float(np.float32(1e-8)), float(np.float32(rng.choice([0.0, 0.01, 0.1])))
    steps = 5
    p0 = f32(rng, *shape)
    gs = [f32(rng, *shape) for _ in range(steps)]
    step = np.zeros(1, np.int32 if trial % 2 else np.float32)
    state = [p0, None, np.zeros_like(p0), np.zeros_like(p0), step]
    attrs = {"lr": repr(lr), "beta1": repr(b1), "beta2": repr(b2), "eps": repr(eps),
             "weight_decay": repr(wd)}
    for g in gs:
        state[1] = g
        _, state = c.run("ADAMW_UPDATE", attrs, state, [], write_inputs=True)

    def torch_adamw(dt):
        p = torch.nn.Parameter(t(p0, dt))
        opt = torch.optim.AdamW([p], lr=lr, betas=(b1, b2), eps=eps, weight_decay=wd)
        for g in gs:
            p.grad = t(g, dt)
            opt.step()
        st = opt.state[p]
        return p.detach(), st["exp_avg"], st["exp_avg_sq"]
    r64, r32 = both(torch_adamw)
    case = "param %s lr %g betas (%g, %g) weight decay %g, %d steps (%s step)" % (
        tuple(shape), lr, b1, b2, wd, steps, step.dtype)
    for j, name in ((0, "param"), (2, "m"), (3, "v")):
        c.compare("ADAMW_UPDATE", name, state[j], r64[j if j == 0 else j - 1],
                  r32[j if j == 0 else j - 1], case)
    if float(state[4][0]) != steps:
        c.failures.append("ADAMW_UPDATE: step %s after %d steps" % (state[4][0], steps))


def check_clip(c, rng, trial):
    count = int(rng.integers(1, 12))
    gs = [f32(rng, *[int(v) for v in rng.integers(1, 6, size=int(rng.integers(1, 4)))])
          for _ in range(count)]
    total = float(np.sqrt(sum(float((g.astype(np.float64) ** 2).sum()) for g in gs)))
    max_norm = float(np.float32(total * (0.3 if trial % 2 else 1.7)))  # above, then below
    (norm,), after = c.run("CLIP_GRAD_NORM", {"max_norm": repr(max_norm)}, gs,
                           [((1,), np.float32)], write_inputs=True)

    def torch_clip(dt):
        ps = [torch.nn.Parameter(torch.zeros(g.shape, dtype=dt)) for g in gs]
        for p, g in zip(ps, gs):
            p.grad = t(g, dt)
        tn = torch.nn.utils.clip_grad_norm_(ps, max_norm)
        return [tn.reshape(1)] + [p.grad for p in ps]
    r64, r32 = both(torch_clip)
    case = "%d gradients, max_norm %s the total" % (count, "below" if trial % 2 else "above")
    c.compare("CLIP_GRAD_NORM", "total", norm, r64[0], r32[0], case)
    for j, g in enumerate(after):
        c.compare("CLIP_GRAD_NORM", "grads", g, r64[j + 1], r32[j + 1], case)


CHECKS = [check_matmul, check_batched_matmul, check_permute, check_broadcast,
          check_sum_to_and_scale, check_softmax, check_layer_norm, check_gelu, check_embedding,
          check_lstm, check_xent, check_adamw, check_clip]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("driver")
    ap.add_argument("work")
    ap.add_argument("--trials", type=int, default=12)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    c = Check(args.driver, args.work, args.verbose)
    for check in CHECKS:
        for trial in range(args.trials):
            rng = np.random.default_rng([args.seed, CHECKS.index(check), trial])
            try:
                check(c, rng, trial)
            except Exception as e:  # a refused op or a crash is a failure, named
                c.failures.append("%s trial %d: %s" % (check.__name__, trial, e))
    print("torch %s, %d kernel runs, tolerance %g ulps (%.2g norm-relative)"
          % (torch.__version__, c.calls, TOL_ULPS, TOL_ULPS * EPS32))
    print("%-22s %10s %10s  %-8s %s" % ("op", "ours/ulp", "torch f32", "tensor", "its worst case"))
    for op, (err, err32, name, case) in c.worst.items():
        print("%-22s %10.2f %10.2f  %-8s %s" % (op, err / EPS32, err32 / EPS32, name, case))
    for f in c.failures:
        print("FAIL " + f)
    print("%s: %d failure(s)" % ("FAIL" if c.failures else "ok", len(c.failures)))
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main())
