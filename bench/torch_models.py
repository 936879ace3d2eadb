"""The four xpubench models and AlexNet in plain PyTorch, the way a user would write them (standard
modules, torchvision where it has the model), for the speed comparison in compare.py.

Architectures follow docs/workloads.md and docs/models.md exactly: same layers, same
parameter counts, same FLOPs. (tests/torch/xpb_torch_models.py holds the numerically
instrumented twin used to check dumps; this file is the fast, ordinary one.)
"""

import torch
import torch.nn as nn
import torchvision


def conv6(classes=10):
    layers, c = [], 3
    for v in [64, 64, "M", 128, 128, "M", 256, 256, "M"]:
        if v == "M":
            layers.append(nn.MaxPool2d(2))
        else:
            layers += [nn.Conv2d(c, v, 3, padding=1), nn.ReLU(inplace=True)]
            c = v
    return nn.Sequential(*layers, nn.Flatten(), nn.Linear(256 * 4 * 4, 256), nn.ReLU(inplace=True),
                         nn.Linear(256, 256), nn.ReLU(inplace=True), nn.Linear(256, classes))


def vgg16(variant="cifar"):
    m = torchvision.models.vgg16(num_classes=1000 if variant == "imagenet" else 10)
    if variant == "imagenet":
        # dropout is off in xpubench's runs (deterministic): identical FLOPs, no masks
        m.classifier = nn.Sequential(*[nn.Identity() if isinstance(l, nn.Dropout) else l
                                       for l in m.classifier])
        return m
    return nn.Sequential(m.features, nn.Flatten(), nn.Linear(512, 10))


def resnet18(variant="cifar"):
    if variant == "imagenet":
        return torchvision.models.resnet18(num_classes=1000)
    m = torchvision.models.resnet18(num_classes=10)
    m.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)
    m.maxpool = nn.Identity()
    return m


def _instance_norm(c):
    return nn.InstanceNorm2d(c, affine=False, track_running_stats=False)


class ResnetBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv_block = nn.Sequential(
            nn.ReflectionPad2d(1), nn.Conv2d(c, c, 3), _instance_norm(c), nn.ReLU(True),
            nn.ReflectionPad2d(1), nn.Conv2d(c, c, 3), _instance_norm(c))

    def forward(self, x):
        return x + self.conv_block(x)


def generator(blocks, ngf=64):
    layers = [nn.ReflectionPad2d(3), nn.Conv2d(3, ngf, 7), _instance_norm(ngf), nn.ReLU(True)]
    for i in range(2):
        m = 2 ** i
        layers += [nn.Conv2d(ngf * m, ngf * m * 2, 3, 2, 1), _instance_norm(ngf * m * 2),
                   nn.ReLU(True)]
    layers += [ResnetBlock(ngf * 4) for _ in range(blocks)]
    for i in range(2):
        m = 2 ** (2 - i)
        layers += [nn.ConvTranspose2d(ngf * m, ngf * m // 2, 3, 2, 1, output_padding=1),
                   _instance_norm(ngf * m // 2), nn.ReLU(True)]
    layers += [nn.ReflectionPad2d(3), nn.Conv2d(ngf, 3, 7), nn.Tanh()]
    return nn.Sequential(*layers)


def discriminator(ndf=64):
    lr = lambda: nn.LeakyReLU(0.2, True)
    return nn.Sequential(
        nn.Conv2d(3, ndf, 4, 2, 1), lr(),
        nn.Conv2d(ndf, ndf * 2, 4, 2, 1), _instance_norm(ndf * 2), lr(),
        nn.Conv2d(ndf * 2, ndf * 4, 4, 2, 1), _instance_norm(ndf * 4), lr(),
        nn.Conv2d(ndf * 4, ndf * 8, 4, 1, 1), _instance_norm(ndf * 8), lr(),
        nn.Conv2d(ndf * 8, 1, 4, 1, 1))


class CycleGAN(nn.Module):
    def __init__(self, variant="small"):
        super().__init__()
        blocks = 6 if variant == "small" else 9
        self.G_A, self.G_B = generator(blocks), generator(blocks)
        self.D_A, self.D_B = discriminator(), discriminator()
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d)):
                nn.init.normal_(m.weight, 0.0, 0.02)
                nn.init.zeros_(m.bias)


def build(model, variant):
    """(module, input shape without batch, classes or None)"""
    if model == "conv6":
        return conv6(), (3, 32, 32), 10
    if model == "vgg16":
        return vgg16(variant), ((3, 224, 224) if variant == "imagenet" else (3, 32, 32)), \
            (1000 if variant == "imagenet" else 10)
    if model == "resnet18":
        return resnet18(variant), ((3, 224, 224) if variant == "imagenet" else (3, 32, 32)), \
            (1000 if variant == "imagenet" else 10)
    if model == "cyclegan":
        size = 128 if variant == "small" else 256
        return CycleGAN(variant), (3, size, size), None
    if model == "alexnet":  # torchvision's, dropout 0.5 as xpubench's default
        return torchvision.models.alexnet(num_classes=1000), (3, 224, 224), 1000
    raise ValueError(model)
