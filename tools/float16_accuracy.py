#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""How far kiln's Float16 compute (kiln --precision fp16, OptimizerOptions::reduce_float32_to_float16)
moves MobileNet-v2's outputs from PyTorch's Float32 ones: max |difference| of the logits and top-1
agreement over seeded inputs, next to kiln's own Float32 run as the baseline.

    /usr/bin/python3 tools/float16_accuracy.py --kiln build/tools/kiln/kiln --out /tmp/kiln_fp16

The network is torchvision's MobileNet-v2 with seeded random weights (trained weights are a
download); its batch-norm statistics are measured on seeded images first, so that every layer's
activations have the spread a trained network's have, instead of the identity a fresh model's
statistics are. Needs Debian's python3-torch, python3-torchvision and python3-onnx.
"""
import argparse
import os
import re
import subprocess

import numpy as np
import torch
import torch.nn as nn


def build(out, examples, seed):
    import torchvision.models as m
    torch.manual_seed(seed)
    model = m.mobilenet_v2()
    generator = torch.Generator().manual_seed(seed)
    # Batch-norm statistics of the network's own activations (a cumulative average over 4 batches).
    for module in model.modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            module.momentum = None
    model.train()
    with torch.no_grad():
        for _ in range(4):
            model(torch.randn(16, 3, 224, 224, generator=generator))
    model.eval()
    images = torch.randn(examples, 3, 224, 224, generator=generator)
    with torch.no_grad():
        logits = torch.cat([model(images[i:i + 10]) for i in range(0, examples, 10)])
    os.makedirs(out, exist_ok=True)
    torch.onnx.export(model, images[:1], os.path.join(out, "model.onnx"), input_names=["input"],
                      output_names=["output"], opset_version=13)
    np.save(os.path.join(out, "images.npy"), images.numpy().astype(np.float32))
    np.save(os.path.join(out, "logits.npy"), logits.numpy().astype(np.float32))
    return logits.numpy()


def evaluate(kiln, out, precision, backend):
    result = subprocess.run([kiln, "eval", os.path.join(out, "model.onnx"), os.path.join(out, "images.npy"),
                             "--reference", os.path.join(out, "logits.npy"), "--min-agreement", "0",
                             "--backend", backend, "--precision", precision],
                            check=True, capture_output=True, text=True).stdout
    row = [line for line in result.splitlines() if line.startswith(os.path.join(out, "model.onnx"))][-1]
    agreement, max_diff, median_ms = re.split(r"\s+", row.strip())[3:6]
    return agreement, float(max_diff), float(median_ms)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kiln", required=True)
    parser.add_argument("--out", default="/tmp/kiln_fp16")
    parser.add_argument("--examples", type=int, default=100)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--backends", default="ref,neon")
    args = parser.parse_args()
    logits = build(args.out, args.examples, args.seed)
    classes = len(set(logits.argmax(axis=1)))
    print(f"MobileNet-v2 (random weights, measured batch-norm statistics), {args.examples} seeded inputs: "
          f"PyTorch Float32 logits up to {np.abs(logits).max():.3g} in magnitude, {classes} distinct top-1 classes")
    print("| backend | precision | top-1 agreement with PyTorch Float32 | max abs logit difference | median ms |")
    print("|---|---|---|---|---|")
    for backend in args.backends.split(","):
        for precision in ("fp32", "fp16"):
            agreement, max_diff, median_ms = evaluate(args.kiln, args.out, precision, backend)
            print(f"| {backend} | {precision} | {agreement} | {max_diff:.3g} | {median_ms:.2f} |")


if __name__ == "__main__":
    main()
