#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Trains the digit classifier kiln's main job runs, and exports it to ONNX.

Data: scikit-learn's bundled 8x8 handwritten digits (1797 images, no download), split 80/20 with a
fixed seed. The model is a small CNN (two 3x3 convolutions with batch norm, max pooling, two dense
layers). Writes, into the folder given:
    digits_cnn.onnx        the model, batch 1, input "image" [1, 1, 8, 8] in [0, 1], output "logits" [1, 10]
    train_images.npy       float32 [M, 1, 8, 8], the training images (kiln quantize's calibration data)
    test_images.npy        float32 [N, 1, 8, 8], the held-out images
    test_labels.npy        int64 [N], their labels
    torch_logits.npy       float32 [N, 10], PyTorch's outputs for them (what kiln must match)

Run with Debian's python3 (python3-torch, python3-sklearn, python3-onnx):
    /usr/bin/python3 tools/train_digits.py examples/digits
The output is deterministic on one machine; commit it. With --data-only it writes the images and
labels only, leaving the model and PyTorch's outputs as they are (the split needs no training).
"""
import os
import sys

import numpy as np
import torch
import torch.nn as nn
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split


class DigitsCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
            nn.Conv2d(16, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(),
            nn.MaxPool2d(2))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(32 * 4 * 4, 64), nn.ReLU(), nn.Linear(64, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


def split():
    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, None, :, :]
    labels = digits.target.astype(np.int64)
    return train_test_split(images, labels, test_size=0.2, random_state=8, stratify=labels)


def write_data(out_dir, x_train, x_test, y_test):
    os.makedirs(out_dir, exist_ok=True)
    np.save(os.path.join(out_dir, "train_images.npy"), x_train)
    np.save(os.path.join(out_dir, "test_images.npy"), x_test)
    np.save(os.path.join(out_dir, "test_labels.npy"), y_test)


def main(out_dir, data_only):
    x_train, x_test, y_train, y_test = split()
    write_data(out_dir, x_train, x_test, y_test)
    if data_only:
        return
    torch.manual_seed(8)
    torch.use_deterministic_algorithms(True)
    model = DigitsCnn()
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
    xt, yt = torch.from_numpy(x_train), torch.from_numpy(y_train)
    for epoch in range(30):
        model.train()
        order = torch.randperm(len(xt))
        for start in range(0, len(xt), 32):
            batch = order[start:start + 32]
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(xt[batch]), yt[batch])
            loss.backward()
            optimizer.step()
    model.eval()
    with torch.no_grad():
        logits = model(torch.from_numpy(x_test)).numpy()
    accuracy = float((logits.argmax(1) == y_test).mean())
    print(f"torch {torch.__version__}: {len(x_train)} training images, {len(x_test)} test images, "
          f"test accuracy {accuracy:.4f}")

    torch.onnx.export(model, torch.zeros(1, 1, 8, 8), os.path.join(out_dir, "digits_cnn.onnx"),
                      input_names=["image"], output_names=["logits"], opset_version=13)
    np.save(os.path.join(out_dir, "torch_logits.npy"), logits.astype(np.float32))


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if a != "--data-only"]
    main(arguments[0] if arguments else "examples/digits", "--data-only" in sys.argv[1:])
