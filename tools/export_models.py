#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Exports PyTorch models to ONNX with reference outputs, laid out like the ONNX backend tests:
    OUT/NAME/model.onnx and OUT/NAME/test_data_set_0/{input_0,output_0}.pb
so that `kiln check OUT/NAME/model.onnx OUT/NAME` compares kiln with PyTorch.

    /usr/bin/python3 tools/export_models.py small tests/models    # the small models the tests run (committed)
    /usr/bin/python3 tools/export_models.py zoo /tmp/kiln_zoo     # torchvision networks at 224x224 (not committed)

Weights are random (seeded): torchvision's trained weights are a download, and the comparison does
not need them. Needs Debian's python3-torch, python3-torchvision and python3-onnx.
"""
import os
import sys

import numpy as np
import onnx
import onnx.numpy_helper
import torch
import torch.nn as nn
import torch.nn.functional as F


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Flatten(), nn.Linear(64, 48), nn.ReLU(), nn.Linear(48, 32), nn.GELU(),
                                    nn.Linear(32, 10), nn.LogSoftmax(dim=1))

    def forward(self, x):
        return self.layers(x)


class KeywordSpotting(nn.Module):
    """1-D convolutions over MFCC frames [1, 40, 49], in the style of small keyword spotters."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv1d(40, 32, 5, stride=2, padding=2)
        self.bn1 = nn.BatchNorm1d(32)
        self.dw = nn.Conv1d(32, 32, 3, padding=1, groups=32)
        self.pw = nn.Conv1d(32, 48, 1)
        self.bn2 = nn.BatchNorm1d(48)
        self.pool = nn.MaxPool1d(2)
        self.fc = nn.Linear(48, 12)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.hardswish(self.bn2(self.pw(self.dw(x))))
        x = self.pool(x)
        x = x.mean(dim=2)
        return F.softmax(self.fc(x), dim=1)


class UNet(nn.Module):
    """Two levels down, two up: skip connections by Concat, one transposed convolution, one bilinear upsample."""

    def __init__(self):
        super().__init__()

        def block(i, o):
            return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.BatchNorm2d(o), nn.LeakyReLU(0.1),
                                 nn.Conv2d(o, o, 3, padding=1), nn.ReLU())
        self.down1, self.down2, self.bottom = block(3, 8), block(8, 16), block(16, 32)
        self.up2 = nn.ConvTranspose2d(32, 16, 2, stride=2)
        self.dec2 = block(32, 16)
        self.dec1 = block(16 + 8, 8)
        self.head = nn.Conv2d(8, 2, 1)

    def forward(self, x):
        d1 = self.down1(x)
        d2 = self.down2(F.max_pool2d(d1, 2))
        b = self.bottom(F.max_pool2d(d2, 2))
        u2 = self.dec2(torch.cat([self.up2(b), d2], dim=1))
        u1 = F.interpolate(u2, scale_factor=2, mode="bilinear", align_corners=False)
        u1 = self.dec1(torch.cat([u1, d1], dim=1))
        return torch.sigmoid(self.head(u1))


def small_models():
    import torchvision
    mobilenet = torchvision.models.MobileNetV2(width_mult=0.25, num_classes=10)
    mobilenet.last_channel = 64
    mobilenet.features[-1] = torchvision.ops.Conv2dNormActivation(
        mobilenet.features[-1][0].in_channels, 64, kernel_size=1, activation_layer=nn.ReLU6)
    mobilenet.classifier[1] = nn.Linear(64, 10)
    shufflenet = torchvision.models.ShuffleNetV2([2, 2, 2], [8, 16, 32, 64, 128], num_classes=10)
    return [("mlp", Mlp(), (1, 1, 8, 8), 11),
            ("keyword_spotting", KeywordSpotting(), (1, 40, 49), 13),
            ("unet", UNet(), (1, 3, 32, 32), 17),
            ("mobilenet_v2_tiny", mobilenet, (1, 3, 32, 32), 13),
            ("shufflenet_v2_tiny", shufflenet, (1, 3, 32, 32), 13)]


def zoo_models():
    import torchvision.models as m
    return [("mobilenet_v2", m.mobilenet_v2(), (1, 3, 224, 224), 13),
            ("resnet18", m.resnet18(), (1, 3, 224, 224), 13),
            ("squeezenet1_1", m.squeezenet1_1(), (1, 3, 224, 224), 13),
            ("shufflenet_v2_x1_0", m.shufflenet_v2_x1_0(), (1, 3, 224, 224), 13)]


def randomize_statistics(model, generator):
    """Batch-norm layers of a fresh model are the identity; give them statistics so the test sees them."""
    for module in model.modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            module.running_mean.uniform_(-0.2, 0.2, generator=generator)
            module.running_var.uniform_(0.5, 1.5, generator=generator)
            module.weight.data.uniform_(0.5, 1.5, generator=generator)
            module.bias.data.uniform_(-0.2, 0.2, generator=generator)


def export(name, model, shape, opset, out_dir):
    generator = torch.Generator().manual_seed(2026)
    randomize_statistics(model, generator)
    model.eval()
    x = torch.rand(*shape, generator=generator)
    with torch.no_grad():
        y = model(x)
    case = os.path.join(out_dir, name)
    os.makedirs(os.path.join(case, "test_data_set_0"), exist_ok=True)
    torch.onnx.export(model, x, os.path.join(case, "model.onnx"), input_names=["input"], output_names=["output"],
                      opset_version=opset)
    for kind, tensor in (("input", x), ("output", y)):
        proto = onnx.numpy_helper.from_array(tensor.numpy().astype(np.float32), kind)
        with open(os.path.join(case, "test_data_set_0", f"{kind}_0.pb"), "wb") as f:
            f.write(proto.SerializeToString())
    size = os.path.getsize(os.path.join(case, "model.onnx"))
    print(f"{name}: opset {opset}, input {list(shape)}, output {list(y.shape)}, model {size / 1024:.0f} KiB")


def main():
    which, out_dir = sys.argv[1], sys.argv[2]
    torch.manual_seed(2026)
    for name, model, shape, opset in (small_models() if which == "small" else zoo_models()):
        export(name, model, shape, opset, out_dir)


if __name__ == "__main__":
    main()
