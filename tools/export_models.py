#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Exports PyTorch models to ONNX with reference outputs, laid out like the ONNX backend tests:
    OUT/NAME/model.onnx and OUT/NAME/test_data_set_0/{input_0,output_0}.pb
so that `kiln check OUT/NAME/model.onnx OUT/NAME` compares kiln with PyTorch.

    /usr/bin/python3 tools/export_models.py small tests/models    # the small models the tests run (committed)
    /usr/bin/python3 tools/export_models.py zoo /tmp/kiln_zoo     # torchvision networks at 224x224 (not committed)
    /usr/bin/python3 tools/export_models.py bench /tmp/kiln_bench # the models of bench/bench_models.py

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
    """Two levels down, two up: skip connections by Concat, one transposed convolution, one bilinear
    upsample; `width` channels at the top level, twice that below, four times at the bottom."""

    def __init__(self, width=8):
        super().__init__()

        def block(i, o):
            return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.BatchNorm2d(o), nn.LeakyReLU(0.1),
                                 nn.Conv2d(o, o, 3, padding=1), nn.ReLU())
        w = width
        self.down1, self.down2, self.bottom = block(3, w), block(w, 2 * w), block(2 * w, 4 * w)
        self.up2 = nn.ConvTranspose2d(4 * w, 2 * w, 2, stride=2)
        self.dec2 = block(4 * w, 2 * w)
        self.dec1 = block(2 * w + w, w)
        self.head = nn.Conv2d(w, 2, 1)

    def forward(self, x):
        d1 = self.down1(x)
        d2 = self.down2(F.max_pool2d(d1, 2))
        b = self.bottom(F.max_pool2d(d2, 2))
        u2 = self.dec2(torch.cat([self.up2(b), d2], dim=1))
        u1 = F.interpolate(u2, scale_factor=2, mode="bilinear", align_corners=False)
        u1 = self.dec1(torch.cat([u1, d1], dim=1))
        return torch.sigmoid(self.head(u1))


class Mlp784(nn.Module):
    """The classic MNIST MLP, 784-256-128-10."""

    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                                    nn.Linear(128, 10))

    def forward(self, x):
        return self.layers(x)


class DsCnn(nn.Module):
    """DS-CNN (small) of "Hello Edge" (Zhang et al. 2017), Arm's keyword-spotting reference: MFCC
    [1, 1, 49, 10], a 10x4 convolution, four depthwise-separable blocks of 64 channels."""

    def __init__(self, channels=64, blocks=4, classes=12):
        super().__init__()
        layers = [nn.Conv2d(1, channels, (10, 4), stride=(2, 2), padding=(5, 1)), nn.BatchNorm2d(channels), nn.ReLU()]
        for _ in range(blocks):
            layers += [nn.Conv2d(channels, channels, 3, padding=1, groups=channels), nn.BatchNorm2d(channels),
                       nn.ReLU(), nn.Conv2d(channels, channels, 1), nn.BatchNorm2d(channels), nn.ReLU()]
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(channels, classes)

    def forward(self, x):
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(self.features(x), 1), 1))


class AttentionTiny(nn.Module):
    """One two-head self-attention block over 16 tokens of 32 features, mean-pooled into 10 classes:
    the MatMuls of two activations, the Softmax and the ReduceMean of a transformer's head."""

    def __init__(self, tokens=16, width=32, heads=2):
        super().__init__()
        self.tokens, self.width, self.heads = tokens, width, heads
        self.scale = (width // heads) ** -0.5
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, 10)

    def mix(self, x):
        """The tokens after self-attention, [1, tokens, width]."""
        q, k, v = (part.reshape(1, self.tokens, self.heads, self.width // self.heads).transpose(1, 2)
                   for part in self.qkv(x).split(self.width, dim=-1))
        scores = torch.matmul(q, k.transpose(-1, -2)) * self.scale
        return torch.matmul(scores.softmax(dim=-1), v).transpose(1, 2).reshape(1, self.tokens, self.width)

    def forward(self, x):
        return self.out(self.mix(x).mean(dim=1))


class EncoderTiny(nn.Module):
    """A pre-norm transformer encoder block (ViT's, BERT's with norm_first) over 16 tokens of 32
    features, then a final LayerNorm, mean-pooled into 10 classes. Exported at opset 17 it has
    LayerNormalization nodes; before opset 17 PyTorch writes each layer norm as ReduceMean, Sub,
    Pow, ReduceMean, Add, Sqrt, Div, Mul and Add, which kiln's optimizer fuses back."""

    def __init__(self, width=32, heads=2):
        super().__init__()
        self.attention = AttentionTiny(width=width, heads=heads)
        self.norm1, self.norm2, self.norm_out = nn.LayerNorm(width), nn.LayerNorm(width), nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, width))
        self.classify = nn.Linear(width, 10)
        for norm in (self.norm1, self.norm2, self.norm_out):  # not the identity a fresh LayerNorm is
            nn.init.uniform_(norm.weight, 0.5, 1.5)
            nn.init.uniform_(norm.bias, -0.5, 0.5)

    def forward(self, x):
        x = x + self.attention.mix(self.norm1(x))
        x = x + self.mlp(self.norm2(x))
        return self.classify(self.norm_out(x).mean(dim=1))


class BertTiny(nn.Module):
    """A BERT-tiny-sized encoder: two nn.TransformerEncoderLayer blocks (64 features, 2 heads, GELU
    MLP of 256) over [batch, sequence, 64] hidden states, post-norm (BERT's) or pre-norm. Exported
    with named batch and sequence dimensions, which kiln needs values for (--dim)."""

    def __init__(self, norm_first):
        super().__init__()
        layer = nn.TransformerEncoderLayer(64, 2, dim_feedforward=256, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=norm_first)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        for name, parameter in self.named_parameters():  # norms not the identity a fresh one is
            if "norm" in name:
                nn.init.uniform_(parameter, 0.5, 1.5) if name.endswith("weight") else nn.init.uniform_(parameter, -0.5, 0.5)

    def forward(self, x):
        return self.encoder(x)


class VitTiny(nn.Module):
    """A ViT-Tiny-sized encoder (192 features, 3 heads, patches of 16) on 96 x 96 images: 36 patches
    and a class token through two pre-norm nn.TransformerEncoderLayer blocks (GELU MLP of 384; two
    blocks of the twelve and half the MLP, to keep the committed file near 3 MB), the class token's
    features classified into 10 classes."""

    def __init__(self):
        super().__init__()
        self.patches = nn.Conv2d(3, 192, 16, stride=16)
        self.class_token = nn.Parameter(torch.randn(1, 1, 192) * 0.02)
        self.position = nn.Parameter(torch.randn(1, 37, 192) * 0.02)
        layer = nn.TransformerEncoderLayer(192, 3, dim_feedforward=384, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(192)
        self.head = nn.Linear(192, 10)

    def forward(self, x):
        tokens = self.patches(x).flatten(2).transpose(1, 2)
        tokens = torch.cat([self.class_token.expand(x.shape[0], -1, -1), tokens], dim=1) + self.position
        return self.head(self.norm(self.encoder(tokens))[:, 0])


class LstmKeywordSpotter(nn.Module):
    """A two-layer LSTM of 64 cells over 49 frames of 10 MFCCs ("Hello Edge"'s LSTM keyword spotters,
    without the projection), the last step's hidden state classified into 12 keywords."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(10, 64, num_layers=2, batch_first=True)
        self.classify = nn.Linear(64, 12)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.classify(y[:, -1])


class GruKeywordSpotter(nn.Module):
    """A bidirectional GRU of 64 cells each way over 49 frames of 10 MFCCs, averaged over time and
    classified into 12 keywords."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(10, 64, batch_first=True, bidirectional=True)
        self.classify = nn.Linear(128, 12)

    def forward(self, x):
        y, _ = self.gru(x)
        return self.classify(y.mean(dim=1))


SEQUENCE = {"input": {0: "batch", 1: "sequence"}, "output": {0: "batch", 1: "sequence"}}


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
            ("shufflenet_v2_tiny", shufflenet, (1, 3, 32, 32), 13),
            ("attention_tiny", AttentionTiny(), (1, 16, 32), 13),
            ("ds_cnn", DsCnn(), (1, 1, 49, 10), 13),  # also compiled into the firmware (docs/firmware.md)
            ("encoder_tiny", EncoderTiny(), (1, 16, 32), 17),
            ("encoder_tiny_opset13", EncoderTiny(), (1, 16, 32), 13),
            ("bert_tiny", BertTiny(norm_first=False), (1, 32, 64), 17, SEQUENCE),
            ("bert_tiny_norm_first", BertTiny(norm_first=True), (1, 32, 64), 17, SEQUENCE),
            ("lstm_kws", LstmKeywordSpotter(), (1, 49, 10), 17),
            ("gru_kws", GruKeywordSpotter(), (1, 49, 10), 17),
            ("vit_tiny", VitTiny(), (1, 3, 96, 96), 17)]


def zoo_models():
    import torchvision.models as m
    return [("mobilenet_v2", m.mobilenet_v2(), (1, 3, 224, 224), 13),
            ("resnet18", m.resnet18(), (1, 3, 224, 224), 13),
            ("squeezenet1_1", m.squeezenet1_1(), (1, 3, 224, 224), 13),
            ("shufflenet_v2_x1_0", m.shufflenet_v2_x1_0(), (1, 3, 224, 224), 13)]


def bench_models():
    """The side-by-side benchmark's set (bench/bench_models.py): torchvision architectures and small
    custom models, all with random weights."""
    import torchvision.models as m
    image = (1, 3, 224, 224)
    return [("mlp", Mlp784(), (1, 1, 28, 28), 13),
            ("ds_cnn", DsCnn(), (1, 1, 49, 10), 13),
            ("mobilenet_v2", m.mobilenet_v2(), image, 13),
            ("mobilenet_v3_small", m.mobilenet_v3_small(), image, 13),
            ("resnet18", m.resnet18(), image, 13),
            ("squeezenet1_1", m.squeezenet1_1(), image, 13),
            ("shufflenet_v2_x0_5", m.shufflenet_v2_x0_5(), image, 13),
            ("efficientnet_b0", m.efficientnet_b0(), image, 13),
            ("regnet_x_400mf", m.regnet_x_400mf(), image, 13),
            ("mnasnet1_0", m.mnasnet1_0(), image, 13),
            ("unet", UNet(width=32), (1, 3, 128, 128), 17)]  # at segmentation widths


def randomize_statistics(model, generator):
    """Batch-norm layers of a fresh model are the identity; give them statistics so the test sees them."""
    for module in model.modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            module.running_mean.uniform_(-0.2, 0.2, generator=generator)
            module.running_var.uniform_(0.5, 1.5, generator=generator)
            module.weight.data.uniform_(0.5, 1.5, generator=generator)
            module.bias.data.uniform_(-0.2, 0.2, generator=generator)


def export(name, model, shape, opset, out_dir, dynamic_axes=None):
    generator = torch.Generator().manual_seed(2026)
    randomize_statistics(model, generator)
    model.eval()
    x = torch.rand(*shape, generator=generator)
    with torch.no_grad():
        y = model(x)
    case = os.path.join(out_dir, name)
    os.makedirs(os.path.join(case, "test_data_set_0"), exist_ok=True)
    torch.onnx.export(model, x, os.path.join(case, "model.onnx"), input_names=["input"], output_names=["output"],
                      opset_version=opset, dynamic_axes=dynamic_axes)
    for kind, tensor in (("input", x), ("output", y)):
        proto = onnx.numpy_helper.from_array(tensor.numpy().astype(np.float32), kind)
        with open(os.path.join(case, "test_data_set_0", f"{kind}_0.pb"), "wb") as f:
            f.write(proto.SerializeToString())
    size = os.path.getsize(os.path.join(case, "model.onnx"))
    print(f"{name}: opset {opset}, input {list(shape)}, output {list(y.shape)}, model {size / 1024:.0f} KiB")


def main():
    which, out_dir = sys.argv[1], sys.argv[2]
    torch.manual_seed(2026)
    models = {"small": small_models, "zoo": zoo_models, "bench": bench_models}[which]()
    for name, model, shape, opset, *dynamic_axes in models:
        export(name, model, shape, opset, out_dir, *dynamic_axes)


if __name__ == "__main__":
    main()
