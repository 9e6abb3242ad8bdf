#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Makes the TensorFlow Lite fixtures of kiln's tests with TensorFlow and LiteRT, implementations
independent of kiln (issue #19).

Keras models with seeded random weights (batch-norm statistics too) are converted by TensorFlow's
converter twice: as Float32 models, and fully quantised to int8 (per-channel int8 weights, int8
activations, int32 biases; Float32 input and output around QUANTIZE and DEQUANTIZE), calibrated
on 32 seeded random inputs. LiteRT's interpreter runs each with its reference kernels (the
BUILTIN_REF op resolver: no XNNPACK, none of the optimized kernels, whose int8 depthwise convolution
rounds otherwise in places) on four more seeded inputs, and the outputs are written beside the model
in the layout `kiln check` reads:
NAME/model.tflite, NAME/test_data_set_K/{input_0,output_I}.pb.

- ds_cnn: DS-CNN, the keyword spotter of tests/models/ds_cnn in NHWC (CONV_2D, DEPTHWISE_CONV_2D,
  MEAN, FULLY_CONNECTED; fused ReLU);
- op_mix: one model over the other operators the importer reads (ADD, SUB, MUL, CONCATENATION,
  PAD, TRANSPOSE, RESHAPE, AVERAGE_POOL_2D with SAME padding, MAX_POOL_2D, LOGISTIC, TANH,
  LEAKY_RELU, HARD_SWISH, RELU6, SOFTMAX);
- slicing: STRIDED_SLICE (begin, end and shrink masks, a negative stride), SLICE, GATHER, SPLIT
  and BATCH_MATMUL of two activations;
- unet: a small U-Net, TRANSPOSE_CONV (SAME and VALID), RESIZE_BILINEAR (half-pixel centres and
  aligned corners) and RESIZE_NEAREST_NEIGHBOR, two outputs;
- mlp: FULLY_CONNECTED layers with fused ReLU;
- person_detect: MobileNet-v1 0.25 on 96x96 images, the size of TensorFlow Lite Micro's person
  detection example (int8 only: the Float32 one is 0.9 MB).

Needs the PyPI packages tensorflow-cpu (2.2x), ai-edge-litert and onnx, e.g. in the benchmark venv:
    /opt/kiln-bench-venv/bin/pip install tensorflow-cpu ai-edge-litert onnx
    /opt/kiln-bench-venv/bin/python tools/make_tflite_fixtures.py tests/fixtures/tflite
The output is deterministic for a given TensorFlow; commit it. CI does not run this script.
"""
import argparse
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import onnx.numpy_helper  # noqa: E402
import tensorflow as tf  # noqa: E402
from ai_edge_litert.interpreter import Interpreter, OpResolverType  # noqa: E402

keras = tf.keras
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def randomize_batch_norm(model, rng):
    """Fresh batch norms are the identity; give them statistics so the fixtures exercise the folding."""
    for layer in model.layers:
        if isinstance(layer, keras.layers.BatchNormalization):
            gamma, beta, mean, variance = layer.get_weights()
            layer.set_weights([rng.uniform(0.5, 1.5, gamma.shape).astype(np.float32),
                               rng.normal(0, 0.1, beta.shape).astype(np.float32),
                               rng.normal(0, 0.1, mean.shape).astype(np.float32),
                               rng.uniform(0.5, 1.5, variance.shape).astype(np.float32)])


def ds_cnn():
    """DS-CNN (small) of "Hello Edge", as tools/export_models.py's DsCnn, in NHWC."""
    x = inputs = keras.Input((49, 10, 1), batch_size=1, name="features")
    x = keras.layers.Conv2D(64, (10, 4), strides=2, padding="same")(x)
    x = keras.layers.ReLU()(keras.layers.BatchNormalization()(x))
    for _ in range(4):
        x = keras.layers.DepthwiseConv2D(3, padding="same")(x)
        x = keras.layers.ReLU()(keras.layers.BatchNormalization()(x))
        x = keras.layers.Conv2D(64, 1)(x)
        x = keras.layers.ReLU()(keras.layers.BatchNormalization()(x))
    x = keras.layers.GlobalAveragePooling2D()(x)
    return keras.Model(inputs, keras.layers.Dense(12)(x))


def op_mix():
    x = inputs = keras.Input((12, 12, 3), batch_size=1, name="image")
    a = keras.layers.Conv2D(8, 3, padding="same", activation="relu6")(x)
    b = keras.layers.DepthwiseConv2D(3, padding="same", depth_multiplier=2)(x)
    b = keras.layers.Conv2D(8, 1)(b)
    y = keras.layers.Concatenate()([a, keras.layers.Activation("sigmoid")(b)])
    y = keras.layers.Add()([y, keras.layers.Activation("tanh")(y)])
    y = keras.layers.ZeroPadding2D(((1, 0), (0, 1)))(y)
    y = keras.layers.AveragePooling2D(3, strides=2, padding="same")(y)
    z = keras.layers.Conv2D(16, 1)(y)
    h = keras.layers.Multiply()([z, keras.layers.Activation("hard_swish")(z)])
    z = keras.layers.Subtract()([h, keras.layers.LeakyReLU(0.2)(z)])
    z = keras.layers.MaxPooling2D(2)(z)
    z = keras.layers.Permute((2, 1, 3))(z)
    z = keras.layers.Reshape((-1,))(z)
    logits = keras.layers.Dense(10, bias_initializer=keras.initializers.RandomNormal(stddev=0.5))(z)
    return keras.Model(inputs, keras.layers.Softmax()(logits))


def resize(size, method, **options):
    if options:  # TensorFlow 1's aligned corners
        return keras.layers.Lambda(lambda t: tf.compat.v1.image.resize(t, size, method, **options))
    return keras.layers.Lambda(lambda t: tf.image.resize(t, size, method))


def slicing():
    x = inputs = keras.Input((8, 12, 6), batch_size=1, name="grid")
    y = keras.layers.Conv2D(6, 1)(x)
    a = keras.layers.Lambda(lambda t: t[:, 1:7:2, ::-1, :])(y)
    b = keras.layers.Lambda(lambda t: tf.slice(t, [0, 2, 3, 0], [-1, 3, 6, 6]))(y)
    c = keras.layers.Lambda(lambda t: tf.gather(t, [5, 0, 3, 3, 1, 2], axis=3))(b)
    p, q, r = keras.layers.Lambda(lambda t: tf.split(t, 3, axis=3))(a)
    row = keras.layers.Lambda(lambda t: t[:, 2, :, :])(y)
    gram = keras.layers.Lambda(lambda ts: tf.matmul(ts[0], ts[1], transpose_b=True))([row, row])
    z = keras.layers.Concatenate()([keras.layers.Flatten()(v) for v in (p, keras.layers.Multiply()([q, r]), c, gram)])
    return keras.Model(inputs, keras.layers.Dense(10)(z))


def unet():
    x = inputs = keras.Input((24, 20, 3), batch_size=1, name="image")
    e1 = keras.layers.Conv2D(8, 3, padding="same", activation="relu")(x)
    e2 = keras.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(e1)
    e3 = keras.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(e2)
    u2 = keras.layers.Conv2DTranspose(16, 3, strides=2, padding="same")(e3)
    d2 = keras.layers.Conv2D(16, 3, padding="same", activation="relu")(keras.layers.Concatenate()([u2, e2]))
    u1 = resize((24, 20), "bilinear")(d2)
    d1 = keras.layers.Conv2D(8, 3, padding="same", activation="relu")(keras.layers.Concatenate()([u1, e1]))
    mask = keras.layers.Conv2D(2, 1)(d1)
    coarse = keras.layers.Conv2DTranspose(4, 2, strides=2, padding="valid")(d2)
    side = resize((11, 9), "bilinear", align_corners=True)(coarse)
    side = keras.layers.Add()([resize((11, 9), "nearest")(coarse), side])
    return keras.Model(inputs, [mask, side])


def mlp():
    x = inputs = keras.Input((64,), batch_size=1, name="features")
    for width in (48, 32):
        x = keras.layers.Dense(width, activation="relu")(x)
    return keras.Model(inputs, keras.layers.Dense(10)(x))


def person_detect():
    return keras.applications.MobileNet((96, 96, 3), alpha=0.25, weights=None, classes=2,
                                        classifier_activation=None)


BOTH, INT8 = (("fp32", False), ("int8", True)), (("int8", True),)
DATA_SETS = 4  # inputs per model, each with LiteRT's outputs
MODELS = (("ds_cnn", ds_cnn, 3, BOTH), ("op_mix", op_mix, 4, BOTH), ("slicing", slicing, 5, BOTH),
          ("unet", unet, 6, BOTH), ("mlp", mlp, 7, BOTH), ("person_detect", person_detect, 8, INT8))


def convert(model, calibration, quantized):
    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    if quantized:
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
        converter.representative_dataset = lambda: ([sample[None]] for sample in calibration)
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    return converter.convert()


def run_reference(model_bytes, x):
    interpreter = Interpreter(model_content=model_bytes,
                              experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    interpreter.allocate_tensors()
    interpreter.set_tensor(interpreter.get_input_details()[0]["index"], x)
    interpreter.invoke()
    return [interpreter.get_tensor(output["index"]) for output in interpreter.get_output_details()]


def write_case(folder, model_bytes, x, ys, k):
    data = os.path.join(folder, f"test_data_set_{k}")
    os.makedirs(data, exist_ok=True)
    with open(os.path.join(folder, "model.tflite"), "wb") as f:
        f.write(model_bytes)
    for name, array in [("input_0.pb", x)] + [(f"output_{i}.pb", y) for i, y in enumerate(ys)]:
        with open(os.path.join(data, name), "wb") as f:
            f.write(onnx.numpy_helper.from_array(array, name.split(".")[0]).SerializeToString())


def main(out_dir):
    for name, build, seed, variants in MODELS:
        tf.keras.utils.set_random_seed(seed)
        rng = np.random.default_rng(seed)
        model = build()
        randomize_batch_norm(model, rng)
        shape = tuple(model.inputs[0].shape[1:])
        calibration = rng.standard_normal((32,) + shape).astype(np.float32)
        inputs = [rng.standard_normal((1,) + shape).astype(np.float32) for _ in range(DATA_SETS)]
        for suffix, quantized in variants:
            model_bytes = convert(model, calibration, quantized)
            folder = os.path.join(out_dir, f"{name}_{suffix}")
            for k, x in enumerate(inputs):
                ys = run_reference(model_bytes, x)
                for y in ys:
                    assert np.std(y) > 1e-3 * np.abs(y).max(), f"{name}: an output that does not depend on the input"
                write_case(folder, model_bytes, x, ys, k)
            print(f"{folder}: {len(model_bytes)} bytes, TensorFlow {tf.__version__}, LiteRT reference kernels")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir", nargs="?", default=os.path.join(ROOT, "tests", "fixtures", "tflite"))
    main(parser.parse_args().out_dir)
