"""PyTorch definitions of the four xpubench models, written from the published definitions.

Module paths equal xpubench's parameter names (docs/models.md), so a dumped step loads with
load_state_dict-style name matching:

  conv6     conv1..conv6, fc1..fc3                      (Frankle & Carbin 2019, Conv-6)
  vgg16     features.N, classifier[.N]                  (torchvision.models.vgg16 layout)
  resnet18  conv1, bn1, layerS.B.{conv1,bn1,conv2,bn2,downsample.0,downsample.1}, fc
                                                        (torchvision.models.resnet18 layout)
  cyclegan  G_A/G_B: ResnetGenerator .model.N, D_A/D_B: NLayerDiscriminator .model.N
                                                        (junyanz/pytorch-CycleGAN-and-pix2pix)

Only torch is needed. When torchvision is installed, check_against_torchvision() compares the
imagenet definitions with torchvision's own modules (names, shapes and outputs).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class KinkLog:
    """Inputs of ReLU / LeakyReLU calls that lie within `tau` (relative to the call's largest
    |x|) of the kink at 0, and max-pool windows whose two largest inputs are that close,
    recorded while `active`. In fp32 such an input may land on the other
    side of 0 in another correct implementation, which flips one element of the backward
    mask; check_dump.py uses the log to find the flips that explain a mismatch. Each call keeps
    a `flip` vector over its candidates, read by the backward pass (so that a retained graph
    can be differentiated again with other flips)."""

    active = False
    record = False  # set during a full backward pass: calls keep their incoming gradient
    tau = 2e-5
    calls = []

    @classmethod
    def start(cls, tau=2e-5):
        cls.active, cls.record, cls.tau, cls.calls = True, False, tau, []


class KinkCall:
    """One ReLU / LeakyReLU call: its input x (in the graph), the near-kink candidates (flat
    indices `idx`, |x| relative to the call's largest in `rel`), their `flip` state and, after
    a recorded backward pass, the incoming gradient `gy` at each candidate."""

    def __init__(self, name, x, slope):
        ax = x.detach().abs().reshape(-1)
        top = float(ax.max()) if ax.numel() else 0.0
        self.name, self.x, self.slope = name, x, slope
        self.shape = tuple(x.shape)
        self.idx = torch.nonzero(ax <= KinkLog.tau * top).reshape(-1)
        self.rel = (ax[self.idx] / top) if top > 0 else ax[self.idx]
        self.flip = torch.zeros(self.idx.numel(), dtype=torch.bool)
        self.gy = torch.zeros(self.idx.numel(), dtype=x.dtype)
        self.positive = x.detach().reshape(-1)[self.idx] > 0

    def trial_vector(self, j):
        """The change of d(total)/dx when candidate j's mask flips (given the current flips)."""
        gy = float(self.gy[j])
        now_positive = bool(self.positive[j]) != bool(self.flip[j])
        v = torch.zeros_like(self.x).reshape(-1)
        v[self.idx[j]] = (self.slope - 1.0) * gy if now_positive else (1.0 - self.slope) * gy
        return v.reshape(self.x.shape)


class _KinkFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, slope, call):
        ctx.save_for_backward(x)
        ctx.slope, ctx.call = slope, call
        return torch.where(x > 0, x, x * slope)

    @staticmethod
    def backward(ctx, gy):
        (x,) = ctx.saved_tensors
        pos = x > 0
        call = ctx.call
        if call is not None and KinkLog.record and call.idx.numel():
            call.gy = gy.detach().reshape(-1)[call.idx].clone()
        if call is not None and bool(call.flip.any()):
            pos = pos.clone().reshape(-1)
            sel = call.idx[call.flip]
            pos[sel] = ~pos[sel]
            pos = pos.reshape(x.shape)
        return torch.where(pos, gy, gy * ctx.slope), None, None


class KinkReLU(nn.Module):
    """ReLU (slope 0) or LeakyReLU (slope > 0) that logs near-kink inputs (see KinkLog)."""

    def __init__(self, slope=0.0, inplace=False):
        super().__init__()
        self.slope = slope
        self.log_name = ""
        self.calls = 0

    def forward(self, x):
        if not KinkLog.active or not x.requires_grad:
            return F.leaky_relu(x, self.slope) if self.slope else F.relu(x)
        self.calls += 1
        call = KinkCall("%s#%d" % (self.log_name, self.calls), x, self.slope)
        KinkLog.calls.append(call)
        return _KinkFn.apply(x, self.slope, call)


class PoolCall:
    """One max-pool call: windows whose two largest inputs are within `tau` (relative to the
    call's largest |x|) of each other (flat output indices `idx`), the input the pool routes
    the gradient to (`arg`, flat in its (n, c) plane, the first maximum as PyTorch) and the
    runner-up (`alt`). A flip routes that window's gradient to the runner-up."""

    def __init__(self, name, x, kernel, stride, pad):
        self.name, self.x = name, x
        xd = x.detach()
        n, c, h, w = xd.shape
        _, arg = F.max_pool2d(xd, kernel, stride, pad, return_indices=True)
        oh, ow = arg.shape[2], arg.shape[3]
        xp = F.pad(xd, (pad, pad, pad, pad), value=float("-inf")) if pad else xd
        cols = F.unfold(xp, kernel, stride=stride).reshape(n, c, kernel * kernel, oh * ow)
        top = cols.topk(2, dim=2)
        first, second = top.values[:, :, 0], top.values[:, :, 1]
        scale = float(xd.abs().max()) if xd.numel() else 0.0
        cand = ((first - second) <= KinkLog.tau * scale) & (first != 0) & torch.isfinite(second)
        self.idx = torch.nonzero(cand.reshape(-1)).reshape(-1)
        self.shape = tuple(arg.shape)
        self.rel = ((first - second).reshape(-1)[self.idx] / scale) if scale > 0 else \
            (first - second).reshape(-1)[self.idx]
        # plane positions of the two largest of each candidate window
        win = self.idx % (oh * ow)
        oy, ox = win // ow, win % ow
        pos = []
        for r in range(2):
            k = top.indices[:, :, r].reshape(-1)[self.idx]
            hy = oy * stride - pad + k // kernel
            wx = ox * stride - pad + k % kernel
            pos.append(hy * w + wx)
        self.arg_all = arg
        self.arg = arg.reshape(-1)[self.idx]
        self.alt = torch.where(pos[0] == self.arg, pos[1], pos[0])
        self.flip = torch.zeros(self.idx.numel(), dtype=torch.bool)
        self.gy = torch.zeros(self.idx.numel(), dtype=x.dtype)
        self.plane_size, self.window_count = h * w, oh * ow

    def trial_vector(self, j):
        gy = float(self.gy[j])
        src, dst = (self.alt[j], self.arg[j]) if bool(self.flip[j]) else (self.arg[j], self.alt[j])
        plane = int(self.idx[j]) // self.window_count
        v = torch.zeros_like(self.x).reshape(-1, self.plane_size)
        v[plane, src] -= gy
        v[plane, dst] += gy
        return v.reshape(self.x.shape)


class _PoolFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, kernel, stride, pad, call):
        y = F.max_pool2d(x, kernel, stride, pad)
        ctx.shape, ctx.call = x.shape, call
        return y

    @staticmethod
    def backward(ctx, gy):
        call = ctx.call
        if KinkLog.record and call.idx.numel():
            call.gy = gy.detach().reshape(-1)[call.idx].clone()
        arg = call.arg_all
        if bool(call.flip.any()):
            arg = arg.clone().reshape(-1)
            arg[call.idx[call.flip]] = call.alt[call.flip]
            arg = arg.reshape(call.shape)
        n, c, h, w = ctx.shape
        dx = torch.zeros(n * c, h * w, dtype=gy.dtype)
        dx.scatter_add_(1, arg.reshape(n * c, -1), gy.reshape(n * c, -1))
        return dx.reshape(ctx.shape), None, None, None, None


class KinkMaxPool(nn.Module):
    """MaxPool2d (floor mode, -inf padding) that logs near-tie windows (see PoolCall)."""

    def __init__(self, kernel, stride=None, padding=0):
        super().__init__()
        self.kernel, self.stride, self.padding = kernel, stride or kernel, padding
        self.log_name, self.calls = "", 0

    def forward(self, x):
        if not KinkLog.active or not x.requires_grad:
            return F.max_pool2d(x, self.kernel, self.stride, self.padding)
        self.calls += 1
        call = PoolCall("%s#%d" % (self.log_name, self.calls), x, self.kernel, self.stride,
                        self.padding)
        KinkLog.calls.append(call)
        return _PoolFn.apply(x, self.kernel, self.stride, self.padding, call)


def name_kinks(module):
    """Gives every KinkReLU its module path, for the log."""
    for name, m in module.named_modules():
        if isinstance(m, (KinkReLU, KinkMaxPool)):
            m.log_name, m.calls = name, 0


class Conv6(nn.Module):
    """Conv-6: conv3x3 64, 64, pool, 128, 128, pool, 256, 256, pool, fc 256, 256, classes."""

    def __init__(self, classes=10):
        super().__init__()
        widths = [64, 64, 128, 128, 256, 256]
        in_c = 3
        for i, w in enumerate(widths):
            setattr(self, "conv%d" % (i + 1), nn.Conv2d(in_c, w, 3, padding=1))
            in_c = w
            setattr(self, "relu%d" % (i + 1), KinkReLU())
            if i % 2 == 1:
                setattr(self, "pool%d" % (i // 2 + 1), KinkMaxPool(2))
        self.fc1 = nn.Linear(256 * 4 * 4, 256)
        self.relu_fc1 = KinkReLU()
        self.fc2 = nn.Linear(256, 256)
        self.relu_fc2 = KinkReLU()
        self.fc3 = nn.Linear(256, classes)

    def forward(self, x):
        for i in range(6):
            x = getattr(self, "relu%d" % (i + 1))(getattr(self, "conv%d" % (i + 1))(x))
            if i % 2 == 1:
                x = getattr(self, "pool%d" % (i // 2 + 1))(x)
        x = torch.flatten(x, 1)
        x = self.relu_fc1(self.fc1(x))
        x = self.relu_fc2(self.fc2(x))
        return self.fc3(x)


VGG16_CFG = [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"]


def vgg16_features():
    layers, in_c = [], 3
    for v in VGG16_CFG:
        if v == "M":
            layers.append(KinkMaxPool(2, 2))
        else:
            layers += [nn.Conv2d(in_c, v, kernel_size=3, padding=1), KinkReLU()]
            in_c = v
    return nn.Sequential(*layers)


class VGG16(nn.Module):
    """torchvision's vgg16 (imagenet) or the CIFAR form (features + one fc 512 -> classes)."""

    def __init__(self, variant="cifar", classes=None, dropout=False):
        super().__init__()
        self.variant = variant
        self.features = vgg16_features()
        if variant == "imagenet":
            classes = classes or 1000
            self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
            drop = [nn.Dropout(0.5)] if dropout else [nn.Identity()]
            self.classifier = nn.Sequential(
                nn.Linear(512 * 7 * 7, 4096), KinkReLU(), *drop,
                nn.Linear(4096, 4096), KinkReLU(), *drop,
                nn.Linear(4096, classes))
        else:
            self.classifier = nn.Linear(512, classes or 10)
        # torchvision's initialisation
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                nn.init.constant_(m.bias, 0)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0, 0.01)
                nn.init.constant_(m.bias, 0)

    def forward(self, x):
        x = self.features(x)
        if self.variant == "imagenet":
            x = self.avgpool(x)
        return self.classifier(torch.flatten(x, 1))


class BasicBlock(nn.Module):
    def __init__(self, in_c, out_c, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(in_c, out_c, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_c)
        self.conv2 = nn.Conv2d(out_c, out_c, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_c)
        self.relu1, self.relu2 = KinkReLU(), KinkReLU()
        self.downsample = None
        if stride != 1 or in_c != out_c:
            self.downsample = nn.Sequential(nn.Conv2d(in_c, out_c, 1, stride, bias=False),
                                            nn.BatchNorm2d(out_c))

    def forward(self, x):
        y = self.relu1(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        skip = x if self.downsample is None else self.downsample(x)
        return self.relu2(y + skip)


class ResNet18(nn.Module):
    """torchvision's resnet18 (imagenet) or the CIFAR form (3x3/1 stem, no maxpool)."""

    def __init__(self, variant="cifar", classes=None):
        super().__init__()
        self.variant = variant
        if variant == "imagenet":
            self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
            self.maxpool = KinkMaxPool(3, 2, 1)
        else:
            self.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)
            self.maxpool = nn.Identity()
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = KinkReLU()
        in_c = 64
        for s, w in enumerate([64, 128, 256, 512]):
            stride = 1 if s == 0 else 2
            blocks = [BasicBlock(in_c, w, stride), BasicBlock(w, w, 1)]
            setattr(self, "layer%d" % (s + 1), nn.Sequential(*blocks))
            in_c = w
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512, classes or (1000 if variant == "imagenet" else 10))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def instance_norm(c):
    return nn.InstanceNorm2d(c, affine=False, track_running_stats=False)


class ResnetBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.conv_block = nn.Sequential(
            nn.ReflectionPad2d(1), nn.Conv2d(dim, dim, 3, padding=0, bias=True),
            instance_norm(dim), KinkReLU(),
            nn.ReflectionPad2d(1), nn.Conv2d(dim, dim, 3, padding=0, bias=True),
            instance_norm(dim))

    def forward(self, x):
        return x + self.conv_block(x)


class ResnetGenerator(nn.Module):
    """The reference implementation's ResnetGenerator with instance norm, no dropout."""

    def __init__(self, ngf=64, n_blocks=9, input_nc=3, output_nc=3):
        super().__init__()
        model = [nn.ReflectionPad2d(3), nn.Conv2d(input_nc, ngf, 7, padding=0, bias=True),
                 instance_norm(ngf), KinkReLU()]
        for i in range(2):
            mult = 2 ** i
            model += [nn.Conv2d(ngf * mult, ngf * mult * 2, 3, stride=2, padding=1, bias=True),
                      instance_norm(ngf * mult * 2), KinkReLU()]
        for _ in range(n_blocks):
            model += [ResnetBlock(ngf * 4)]
        for i in range(2):
            mult = 2 ** (2 - i)
            model += [nn.ConvTranspose2d(ngf * mult, int(ngf * mult / 2), 3, stride=2, padding=1,
                                         output_padding=1, bias=True),
                      instance_norm(int(ngf * mult / 2)), KinkReLU()]
        model += [nn.ReflectionPad2d(3), nn.Conv2d(ngf, output_nc, 7, padding=0), nn.Tanh()]
        self.model = nn.Sequential(*model)

    def forward(self, x):
        return self.model(x)


class NLayerDiscriminator(nn.Module):
    """The reference implementation's 70x70 PatchGAN (n_layers 3) with instance norm."""

    def __init__(self, ndf=64, input_nc=3, n_layers=3):
        super().__init__()
        seq = [nn.Conv2d(input_nc, ndf, 4, stride=2, padding=1), KinkReLU(0.2)]
        mult = 1
        for n in range(1, n_layers):
            prev, mult = mult, min(2 ** n, 8)
            seq += [nn.Conv2d(ndf * prev, ndf * mult, 4, stride=2, padding=1, bias=True),
                    instance_norm(ndf * mult), KinkReLU(0.2)]
        prev, mult = mult, min(2 ** n_layers, 8)
        seq += [nn.Conv2d(ndf * prev, ndf * mult, 4, stride=1, padding=1, bias=True),
                instance_norm(ndf * mult), KinkReLU(0.2)]
        seq += [nn.Conv2d(ndf * mult, 1, 4, stride=1, padding=1)]
        self.model = nn.Sequential(*seq)

    def forward(self, x):
        return self.model(x)


class CycleGAN(nn.Module):
    """The four networks; train_step() is the reference's optimize_parameters()."""

    def __init__(self, variant="small", ngf=64, ndf=64):
        super().__init__()
        blocks = 9 if variant == "full" else 6
        self.G_A = ResnetGenerator(ngf, blocks)
        self.G_B = ResnetGenerator(ngf, blocks)
        self.D_A = NLayerDiscriminator(ndf)
        self.D_B = NLayerDiscriminator(ndf)
        for m in self.modules():  # init_type normal, init_gain 0.02
            if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d)):
                nn.init.normal_(m.weight, 0.0, 0.02)
                nn.init.constant_(m.bias, 0.0)


def cyclegan_losses_g(m, real_a, real_b):
    """forward() and backward_G()'s terms: (fake_B, fake_A, dict of unweighted losses)."""
    fake_b = m.G_A(real_a)
    rec_a = m.G_B(fake_b)
    fake_a = m.G_B(real_b)
    rec_b = m.G_A(fake_a)
    idt_a = m.G_A(real_b)
    idt_b = m.G_B(real_a)
    pa, pb = m.D_A(fake_b), m.D_B(fake_a)
    losses = {
        "loss_idt_A": F.l1_loss(idt_a, real_b),
        "loss_idt_B": F.l1_loss(idt_b, real_a),
        "loss_G_A": F.mse_loss(pa, torch.ones_like(pa)),
        "loss_G_B": F.mse_loss(pb, torch.ones_like(pb)),
        "loss_cycle_A": F.l1_loss(rec_a, real_a),
        "loss_cycle_B": F.l1_loss(rec_b, real_b),
    }
    return fake_b, fake_a, losses


def cyclegan_losses_d(m, real_a, real_b, fake_b, fake_a):
    """backward_D_A() and backward_D_B()'s terms on detached fakes (unweighted)."""
    out = {}
    for name, net, real, fake in (("D_A", m.D_A, real_b, fake_b), ("D_B", m.D_B, real_a, fake_a)):
        pr, pf = net(real), net(fake.detach())
        out["loss_%s_real" % name] = F.mse_loss(pr, torch.ones_like(pr))
        out["loss_%s_fake" % name] = F.mse_loss(pf, torch.zeros_like(pf))
    return out


CYCLEGAN_WEIGHTS = {
    "loss_G_A": 1.0, "loss_G_B": 1.0, "loss_cycle_A": 10.0, "loss_cycle_B": 10.0,
    "loss_idt_A": 5.0, "loss_idt_B": 5.0,
    "loss_D_A_real": 0.5, "loss_D_A_fake": 0.5, "loss_D_B_real": 0.5, "loss_D_B_fake": 0.5,
}


def build(model, variant=None, **kw):
    """The module for an xpubench model/variant (xpubench's default variant when None)."""
    if model == "conv6":
        return Conv6()
    if model == "vgg16":
        return VGG16(variant or "cifar", dropout=kw.get("dropout", False))
    if model == "resnet18":
        return ResNet18(variant or "cifar")
    if model == "cyclegan":
        return CycleGAN(variant or "small", kw.get("ngf", 64), kw.get("ndf", 64))
    raise ValueError("unknown model %r" % model)


def count_flops(module, x):
    """Forward FLOPs (multiply-add = 2) of conv, transposed conv and linear layers, by hooks."""
    total = [0]

    def hook(m, inp, out):
        if isinstance(m, nn.Conv2d):
            k = m.weight.shape[1] * m.weight.shape[2] * m.weight.shape[3]
            total[0] += 2 * out.numel() * k
        elif isinstance(m, nn.ConvTranspose2d):
            k = m.weight.shape[1] * m.weight.shape[2] * m.weight.shape[3]
            total[0] += 2 * inp[0].numel() * k
        elif isinstance(m, nn.Linear):
            total[0] += 2 * inp[0].shape[0] * m.weight.numel()

    handles = [m.register_forward_hook(hook) for m in module.modules()]
    with torch.no_grad():
        module(x)
    for h in handles:
        h.remove()
    return total[0]


def check_against_torchvision():
    """Asserts that the imagenet definitions match torchvision's (skipped without it)."""
    try:
        import torchvision
    except ImportError:
        return "torchvision not installed: skipped"
    torch.manual_seed(0)
    pairs = ((VGG16("imagenet"), torchvision.models.vgg16()),
             (ResNet18("imagenet"), torchvision.models.resnet18()))
    for ours, theirs in pairs:
        a, b = ours.state_dict(), theirs.state_dict()
        assert list(a.keys()) == list(b.keys()), "state-dict keys differ"
        for k in a:
            assert a[k].shape == b[k].shape, k
        theirs.load_state_dict(a)
        ours.eval()
        theirs.eval()
        x = torch.randn(1, 3, 224, 224)
        with torch.no_grad():
            d = (ours(x) - theirs(x)).abs().max().item()
        assert d == 0.0, "outputs differ by %g" % d
    return "torchvision %s: vgg16 and resnet18 match" % torchvision.__version__
