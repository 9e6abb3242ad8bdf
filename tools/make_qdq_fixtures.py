#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Makes the quantised-model fixtures of kiln's tests with ONNX Runtime, an implementation
independent of kiln.

The digits classifier (examples/digits/digits_cnn.onnx) is quantised by ONNX Runtime's own
quantiser (quantize_static, in its QDQ format and in its QOperator one, per-channel int8 weights,
activations in uint8 and in int8, min/max calibration on the first 200 test images), and ONNX Runtime runs each quantised
model with its graph optimisations off, so that its outputs follow the QDQ definition op by op.
The tests compare kiln's outputs on the same images with these.

The small MobileNet-v2 of the model tests (tests/models/mobilenet_v2_tiny: inverted residuals
with Add, GlobalAveragePool, Gemm) and the small attention block (tests/models/attention_tiny:
MatMuls of two activations, Softmax) are quantised the same way, each calibrated on 64 seeded
random inputs, and written with one more random input and ONNX Runtime's output in the layout
`kiln check` reads (NAME/model.onnx, NAME/test_data_set_0/{input_0,output_0}.pb).

For kiln's own quantiser (tests/onnx/test_quantize.cpp) it also writes the ranges ONNX Runtime's
MinMax calibrator finds for each model (NAME_ort_ranges.txt: "tensor min max" lines), from which
kiln's QDQ writer must make ONNX Runtime's models byte for byte, and ONNX Runtime's outputs on the
test images for the int8 digits model kiln quantize made (examples/digits/digits_cnn_int8.onnx,
digits_cnn_int8_ort_logits.npy): ONNX Runtime must load kiln's model and agree with kiln.

With --kiln PATH (the kiln tool) it also quantises, with kiln quantize, the keyword spotter,
the small U-Net (HardSigmoid, Mul, LeakyReLU, Sigmoid: the table activations; Resize), the small
ShuffleNet-v2 (channel split by Slice, shuffle by Reshape/Transpose), the attention block
(Softmax, MatMuls of two activations) of tests/models with uint8 activations, and DS-CNN with int8
ones (the firmware's int8 keyword spotter, docs/firmware.md), calibrated on 32 seeded random
inputs, and writes each (NAME_kiln_u8/model.onnx, NAME_kiln_s8/) with one more input and ONNX
Runtime's output on kiln's model, for `kiln check`.

The same two small models are also quantised dynamically (quantize_dynamic: int8 weights, each
activation quantised at run time by DynamicQuantizeLinear for ConvInteger and MatMulInteger;
NAME_dynamic/), with one seeded input and ONNX Runtime's output, for `kiln check`;
--only-dynamic writes those alone.

Needs the PyPI packages onnxruntime (1.3x) and onnx, e.g. the benchmark venv:
    /opt/kiln-bench-venv/bin/python tools/make_qdq_fixtures.py tests/fixtures/quantized --kiln build/tools/kiln/kiln
The output is deterministic; commit it. CI does not run this script.
"""
import argparse
import itertools
import os
import subprocess
import tempfile

import numpy as np
import onnx
import onnx.numpy_helper
import onnxruntime as ort
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_dynamic, quantize_static
from onnxruntime.quantization.calibrate import CalibrationMethod, create_calibrator

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ACTIVATIONS = (("u8", QuantType.QUInt8), ("s8", QuantType.QInt8))
# ONNX Runtime's two forms of one quantisation: float ops between QuantizeLinear/DequantizeLinear,
# and its quantised operators (QLinearConv, com.microsoft QLinearAdd, QGemm...).
FORMATS = (("qdq", QuantFormat.QDQ), ("qop", QuantFormat.QOperator))
DIGITS = os.path.join(ROOT, "examples", "digits")
# The small models of tests/models quantised by ONNX Runtime: name, input shape without the batch,
# seed of the calibration and test inputs.
ORT_MODELS = (("mobilenet_v2_tiny", (3, 32, 32), 7), ("attention_tiny", (16, 32), 8))
# The models of tests/models quantised by kiln quantize, with their activations' type.
KILN_MODELS = (("keyword_spotting", "u8"), ("unet", "u8"), ("shufflenet_v2_tiny", "u8"), ("attention_tiny", "u8"),
               ("ds_cnn", "s8"))


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


def write_ranges(model, images, name, path):
    """ONNX Runtime's MinMax calibration of every tensor, as quantize_static computes it."""
    with tempfile.TemporaryDirectory() as scratch:
        calibrator = create_calibrator(model, None, augmented_model_path=os.path.join(scratch, "augmented.onnx"),
                                       calibrate_method=CalibrationMethod.MinMax)
        calibrator.collect_data(Images(images, name))
        ranges = calibrator.compute_data()
    with open(path, "w") as f:
        for tensor, data in sorted(ranges.items()):
            low, high = (np.float32(np.asarray(v).reshape(-1)[0]) for v in data.range_value)
            f.write(f"{tensor} {low:.9g} {high:.9g}\n")


def write_check_case(folder, model, x, name):
    """NAME/model.onnx and NAME/test_data_set_0 with input x and ONNX Runtime's output on it."""
    data = os.path.join(folder, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    y = run_without_optimisations(model, x)
    for file, array, tensor_name in (("input_0.pb", x, name), ("output_0.pb", y, "output")):
        with open(os.path.join(data, file), "wb") as f:
            f.write(onnx.numpy_helper.from_array(array, tensor_name).SerializeToString())


def kiln_quantized(kiln, out_dir):
    for model_name, activations in KILN_MODELS:
        model = os.path.join(ROOT, "tests", "models", model_name, "model.onnx")
        graph_input = onnx.load(model).graph.input[0]
        shape = [d.dim_value for d in graph_input.type.tensor_type.shape.dim]
        rng = np.random.default_rng(11)
        folder = os.path.join(out_dir, f"{model_name}_kiln_{activations}")
        os.makedirs(folder, exist_ok=True)
        quantized = os.path.join(folder, "model.onnx")
        with tempfile.TemporaryDirectory() as scratch:
            calibration = os.path.join(scratch, "calibration.npy")
            np.save(calibration, rng.standard_normal([32] + shape[1:]).astype(np.float32))
            subprocess.run([kiln, "quantize", model, calibration, "-o", quantized, "--activations", activations],
                           check=True)
        write_check_case(folder, quantized, rng.standard_normal(shape).astype(np.float32), graph_input.name)
        print(f"{quantized}: kiln quantize, ORT onnxruntime {ort.__version__}")


def dynamic_quantized(out_dir):
    for model_name, shape, seed in ORT_MODELS:
        model = os.path.join(ROOT, "tests", "models", model_name, "model.onnx")
        name = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).get_inputs()[0].name
        folder = os.path.join(out_dir, f"{model_name}_dynamic")
        os.makedirs(folder, exist_ok=True)
        quantized = os.path.join(folder, "model.onnx")
        quantize_dynamic(model, quantized, op_types_to_quantize=["Conv", "MatMul", "Gemm"], weight_type=QuantType.QInt8)
        x = np.random.default_rng(seed + 100).standard_normal((1,) + shape).astype(np.float32)
        write_check_case(folder, quantized, x, name)
        print(f"{quantized}: quantize_dynamic, ORT onnxruntime {ort.__version__}")


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    images = np.load(os.path.join(DIGITS, "test_images.npy")).astype(np.float32)
    model = os.path.join(DIGITS, "digits_cnn.onnx")
    name = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).get_inputs()[0].name
    for (suffix, activations), (form, quant_format) in itertools.product(ACTIVATIONS, FORMATS):
        quantized = os.path.join(out_dir, f"digits_{form}_{suffix}.onnx")
        quantize_static(model, quantized, Images(images[:200], name), quant_format=quant_format,
                        activation_type=activations, weight_type=QuantType.QInt8, per_channel=True)
        logits = run_without_optimisations(quantized, images)
        np.save(os.path.join(out_dir, f"digits_{form}_{suffix}_ort_logits.npy"), logits.astype(np.float32))
        print(f"{quantized}: {len(images)} images, ORT onnxruntime {ort.__version__}")
    write_ranges(model, images[:200], name, os.path.join(out_dir, "digits_ort_ranges.txt"))
    kiln_int8 = os.path.join(DIGITS, "digits_cnn_int8.onnx")
    np.save(os.path.join(out_dir, "digits_cnn_int8_ort_logits.npy"),
            run_without_optimisations(kiln_int8, images).astype(np.float32))

    for model_name, shape, seed in ORT_MODELS:
        model = os.path.join(ROOT, "tests", "models", model_name, "model.onnx")
        name = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).get_inputs()[0].name
        rng = np.random.default_rng(seed)
        calibration = rng.standard_normal((64, 1) + shape).astype(np.float32)
        if model_name == "mobilenet_v2_tiny":
            write_ranges(model, calibration[:, 0], name, os.path.join(out_dir, f"{model_name}_ort_ranges.txt"))
        for suffix, activations in ACTIVATIONS:
            x = rng.standard_normal((1,) + shape).astype(np.float32)
            for form, quant_format in FORMATS:
                folder = os.path.join(out_dir, f"{model_name}_{form}_{suffix}")
                os.makedirs(folder, exist_ok=True)
                quantized = os.path.join(folder, "model.onnx")
                quantize_static(model, quantized, Images(calibration[:, 0], name), quant_format=quant_format,
                                activation_type=activations, weight_type=QuantType.QInt8, per_channel=True)
                write_check_case(folder, quantized, x, name)
                print(f"{quantized}: ORT onnxruntime {ort.__version__}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir", nargs="?", default=os.path.join(ROOT, "tests", "fixtures", "quantized"))
    parser.add_argument("--kiln", help="the kiln tool, to quantise the table-activation models with kiln quantize")
    parser.add_argument("--only-dynamic", action="store_true", help="write the dynamically quantised models alone")
    arguments = parser.parse_args()
    if not arguments.only_dynamic:
        main(arguments.out_dir)
    dynamic_quantized(arguments.out_dir)
    if arguments.kiln and not arguments.only_dynamic:
        kiln_quantized(arguments.kiln, arguments.out_dir)
