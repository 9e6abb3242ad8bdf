#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""kiln's NeonBackend against LiteRT with XNNPACK on whole TensorFlow Lite models, side by side
(issue #19).

    /opt/kiln-bench-venv/bin/python bench/bench_tflite_models.py --kiln build/tools/kiln/kiln \\
        --work /tmp/kiln_tflite [--only mobilenet_v2_int8,...] [--threads 1,2] [--rounds 3] \\
        [--csv bench_tflite_models.csv]

Makes the models first, into --work (kept between runs): the Keras models of
tools/make_tflite_fixtures.py (DS-CNN, the U-Net, the MLP, MobileNet-v1 0.25 at 96x96 — person
detection) and keras.applications' MobileNet-v2 1.0 at 224x224, each with seeded random weights,
converted by TensorFlow to Float32 and to int8 (calibrated on 32 seeded inputs). It checks that
kiln (ref and neon) gives the outputs of LiteRT's reference kernels on one seeded input of each
(int8 bit for bit; Float32 within rtol 1e-4, atol 1e-5), and stops if not. Then, for every
model and thread count, `kiln bench MODEL --backend neon --threads T` and bench/litert_bench.py
(LiteRT's default resolver: XNNPACK for every operator it takes) run in turn, each in a process
of its own, for --rounds rounds of alternating order (bench_models.side_by_side): the medians of
the median latency, the load time and the peak RSS.

Needs tensorflow-cpu and ai-edge-litert (PyPI, benchmark-time tools only). Writes bench CSV rows
(case, variant, kiln_value, anchor, anchor_value, unit, ratio), ratio being LiteRT / kiln: above
1, kiln is faster or smaller.
"""
import argparse
import os
import subprocess
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools"))
from bench_models import measure, side_by_side, write_csv  # noqa: E402


NAMES = ("ds_cnn", "unet", "mlp", "person_detect", "mobilenet_v2")


def builders():
    """The Keras models, by name; TensorFlow is imported only to make a model (a process that has
    imported it is 500 MiB, which every process it starts would count in its peak RSS)."""
    import tensorflow as tf
    import make_tflite_fixtures as fixtures

    def mlp():  # issue #15's MLP, 784-256-128-10 (the fixture's is too small to time)
        x = inputs = tf.keras.Input((784,), batch_size=1, name="pixels")
        for width in (256, 128):
            x = tf.keras.layers.Dense(width, activation="relu")(x)
        return tf.keras.Model(inputs, tf.keras.layers.Dense(10)(x))

    def mobilenet_v2():
        return tf.keras.applications.MobileNetV2((224, 224, 3), weights=None, classifier_activation=None)

    return fixtures, {"ds_cnn": fixtures.ds_cnn, "unet": fixtures.unet, "mlp": mlp,
                      "person_detect": fixtures.person_detect, "mobilenet_v2": mobilenet_v2}


def make_models(work):
    """Converts each model not yet in `work`; returns [(name, path)]."""
    models = []
    for name in NAMES:
        for suffix, quantized in (("fp32", False), ("int8", True)):
            path = os.path.join(work, f"{name}_{suffix}.tflite")
            models.append((f"{name}_{suffix}", path))
            if os.path.exists(path):
                continue
            import numpy as np
            import tensorflow as tf
            fixtures, builds = builders()
            build = builds[name]
            tf.keras.utils.set_random_seed(11)
            rng = np.random.default_rng(11)
            model = build()
            fixtures.randomize_batch_norm(model, rng)
            calibration = rng.standard_normal((32,) + tuple(model.inputs[0].shape[1:])).astype(np.float32)
            os.makedirs(work, exist_ok=True)
            with open(path, "wb") as f:
                f.write(fixtures.convert(model, calibration, quantized))
            print(f"made {path}", flush=True)
    return models


def agree(kiln, models, work):
    """Checks that kiln (RefBackend and NeonBackend) gives LiteRT's reference kernels' outputs on
    one seeded input of each model: bit for bit for int8 models, within rtol 1e-4 and atol 1e-5
    for Float32 ones (the committed fixtures' bar, here on the models too large to commit)."""
    import numpy as np
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    ok = True
    for name, path in models:
        interpreter = Interpreter(model_path=path, experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
        interpreter.allocate_tensors()
        detail = interpreter.get_input_details()[0]
        x = np.random.default_rng(5).standard_normal(detail["shape"]).astype(np.float32)
        interpreter.set_tensor(detail["index"], x)
        interpreter.invoke()
        expected = [interpreter.get_tensor(o["index"]) for o in interpreter.get_output_details()]
        np.save(os.path.join(work, "input.npy"), x)
        for backend in ("ref", "neon"):
            got_paths = [os.path.join(work, f"output_{backend}_{i}.npy") for i in range(len(expected))]
            subprocess.run([kiln, "run", path, "--backend", backend, "--input", os.path.join(work, "input.npy")] +
                           [arg for p in got_paths for arg in ("--output", p)], check=True, capture_output=True)
            error, good = 0.0, True
            for got_path, want in zip(got_paths, expected):
                got = np.load(got_path)
                error = max(error, float(np.abs(got - want).max()))
                good = good and (error == 0.0 if name.endswith("int8") else bool(
                    np.all(np.abs(got - want) <= 1e-5 + 1e-4 * np.abs(want))))
            ok = ok and good
            print(f"{name:<22} {backend:<5} max abs error against LiteRT's reference kernels {error:.3g}"
                  f"{'' if good else '  FAIL'}", flush=True)
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kiln", required=True, help="the kiln tool (build/tools/kiln/kiln)")
    parser.add_argument("--work", required=True, help="where the models are made (kept between runs)")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--only", default="", help="comma-separated model names (NAME_fp32, NAME_int8)")
    parser.add_argument("--csv", default="bench_tflite_models.csv")
    parser.add_argument("--prepare", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()

    models = [(f"{name}_{suffix}", os.path.join(args.work, f"{name}_{suffix}.tflite"))
              for name in NAMES for suffix in ("fp32", "int8")]
    if args.only:
        models = [m for m in models if m[0] in args.only.split(",")]
    if args.prepare:
        make_models(args.work)
        return 0 if agree(args.kiln, models, args.work) else 1
    # Making and checking the models imports TensorFlow, LiteRT and numpy: in a process of its own,
    # or every process this one starts would count their memory in its peak RSS.
    if subprocess.run([sys.executable, os.path.abspath(__file__), "--prepare", "--kiln", args.kiln, "--work",
                       args.work, "--only", args.only]).returncode != 0:
        return 1
    threads = [int(t) for t in args.threads.split(",")]
    runs = [str(args.iterations), str(args.warmup)]
    litert_bench = os.path.join(HERE, "litert_bench.py")

    def commands(model, t):
        return ([args.kiln, "bench", model, "--backend", "neon", "--threads", str(t), "--iterations", runs[0],
                 "--warmup", runs[1]],
                [sys.executable, litert_bench, model, str(t)] + runs)

    # One untimed run of each at the most threads first (see bench_models.py).
    if models:
        for command in commands(models[0][1], max(threads)):
            measure(command)
    rows, failures = side_by_side(models, threads, args.rounds, commands, "LiteRT", "LiteRT+XNNPACK")
    write_csv(args.csv, rows)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
