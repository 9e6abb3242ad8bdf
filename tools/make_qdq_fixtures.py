#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Makes the quantised-model fixtures of kiln's tests with ONNX Runtime, an implementation
independent of kiln.

The digits classifier (examples/digits/digits_cnn.onnx) is quantised by ONNX Runtime's own
quantiser (quantize_static, QDQ format, per-channel int8 weights, activations in uint8 and in
int8, min/max calibration on the first 200 test images), and ONNX Runtime runs each quantised
model with its graph optimisations off, so that its outputs follow the QDQ definition op by op.
The tests compare kiln's outputs on the same images with these.

The small MobileNet-v2 of the model tests (tests/models/mobilenet_v2_tiny: inverted residuals
with Add, GlobalAveragePool, Gemm) is quantised the same way, calibrated on 64 seeded random
inputs, and written with one more random input and ONNX Runtime's output in the layout
`kiln check` reads (NAME/model.onnx, NAME/test_data_set_0/{input_0,output_0}.pb).

Needs the PyPI packages onnxruntime (1.3x) and onnx, e.g. the benchmark venv:
    /opt/kiln-bench-venv/bin/python tools/make_qdq_fixtures.py tests/fixtures/quantized
The output is deterministic; commit it. CI does not run this script.
"""
import os
import sys

import numpy as np
import onnx
import onnx.numpy_helper
import onnxruntime as ort
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIGITS = os.path.join(ROOT, "examples", "digits")


class Images(CalibrationDataReader):
    def __init__(self, images, name):
        self.batches = iter([{name: images[i:i + 1]} for i in range(len(images))])

    def get_next(self):
        return next(self.batches, None)


def run_without_optimisations(model, images):
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    return np.concatenate([session.run(None, {name: images[i:i + 1]})[0] for i in range(len(images))])


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    images = np.load(os.path.join(DIGITS, "test_images.npy")).astype(np.float32)
    model = os.path.join(DIGITS, "digits_cnn.onnx")
    name = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).get_inputs()[0].name
    for suffix, activations in (("u8", QuantType.QUInt8), ("s8", QuantType.QInt8)):
        quantized = os.path.join(out_dir, f"digits_qdq_{suffix}.onnx")
        quantize_static(model, quantized, Images(images[:200], name), quant_format=QuantFormat.QDQ,
                        activation_type=activations, weight_type=QuantType.QInt8, per_channel=True)
        logits = run_without_optimisations(quantized, images)
        np.save(os.path.join(out_dir, f"digits_qdq_{suffix}_ort_logits.npy"), logits.astype(np.float32))
        print(f"{quantized}: {len(images)} images, ORT onnxruntime {ort.__version__}")

    model = os.path.join(ROOT, "tests", "models", "mobilenet_v2_tiny", "model.onnx")
    name = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).get_inputs()[0].name
    rng = np.random.default_rng(7)
    calibration = rng.standard_normal((64, 1, 3, 32, 32)).astype(np.float32)
    for suffix, activations in (("u8", QuantType.QUInt8), ("s8", QuantType.QInt8)):
        folder = os.path.join(out_dir, f"mobilenet_v2_tiny_qdq_{suffix}")
        data = os.path.join(folder, "test_data_set_0")
        os.makedirs(data, exist_ok=True)
        quantized = os.path.join(folder, "model.onnx")
        quantize_static(model, quantized, Images(calibration[:, 0], name), quant_format=QuantFormat.QDQ,
                        activation_type=activations, weight_type=QuantType.QInt8, per_channel=True)
        x = rng.standard_normal((1, 3, 32, 32)).astype(np.float32)
        y = run_without_optimisations(quantized, x)
        for file, array, tensor_name in (("input_0.pb", x, name), ("output_0.pb", y, "output")):
            with open(os.path.join(data, file), "wb") as f:
                f.write(onnx.numpy_helper.from_array(array, tensor_name).SerializeToString())
        print(f"{quantized}: ORT onnxruntime {ort.__version__}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "tests", "fixtures", "quantized"))
