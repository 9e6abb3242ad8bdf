#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Whole quantised networks: kiln's int8 against its own Float32 and against ONNX Runtime, on
torchvision architectures (MobileNet-v2, ResNet-18 at 224 x 224, seeded random weights).

    /usr/bin/python3 tools/export_models.py bench /tmp/kiln_bench
    /opt/kiln-bench-venv/bin/python bench/bench_int8_models.py --kiln build/tools/kiln/kiln \\
        --models /tmp/kiln_bench --work /tmp/kiln_int8 [--only mobilenet_v2,resnet18] [--threads 1,2] \\
        [--rounds 3] [--examples 100] [--csv bench_int8_models.csv]

For each Float32 model NAME/model.onnx and each activation type (uint8, int8):

1. ONNX Runtime's quantiser (quantize_static, QDQ, per-channel int8 weights, min/max) calibrates
   it on 16 seeded uniform [0, 1) inputs and writes NAME_qdq_u8/model.onnx (or _s8).
2. Agreement: ONNX Runtime with its graph optimisations off (so that its outputs follow the QDQ
   definition op by op) and `kiln eval --backend neon` run the same --examples seeded inputs;
   the top-1 agreement and the largest output difference, also in units of the output scale
   (the last DequantizeLinear's), are reported.
3. Memory: `kiln inspect` of the Float32 and the int8 network: the arena and the constants
   (packed into the workloads) of each, and their ratios.
4. Speed: `kiln bench` of the Float32 and the int8 network and ONNX Runtime (all graph
   optimisations, which fuse the QDQ pairs into its int8 kernels) on the int8 one, in turn, for
   --rounds rounds of alternating order (bench_models.measure); medians.

Runs under a Python with onnxruntime and numpy (PyPI; a benchmark-time tool, never a dependency of
kiln). Writes bench CSV rows (case, variant, kiln_value, anchor, anchor_value, unit, ratio), ratio
being anchor / kiln (above 1: kiln's int8 is faster or smaller).
"""
import argparse
import logging
import os
import re
import statistics
import subprocess
import sys

import numpy as np
import onnx
import onnx.numpy_helper
import onnxruntime as ort
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_models import measure, write_csv  # noqa: E402

EVAL = re.compile(r"^(?:\S+\s+)?neon\s+\S+\s+(?P<agreement>[\d.]+)%\s+(?P<diff>[\d.e+-]+)", re.M)
PLAN = re.compile(r"arena (?P<arena>\d+) B.*constants (?P<constants>\d+) B, and (?P<packed>\d+) B more")
ACTIVATIONS = (("u8", QuantType.QUInt8), ("s8", QuantType.QInt8))


class Inputs(CalibrationDataReader):
    def __init__(self, name, inputs):
        self.batches = iter([{name: x[None]} for x in inputs])

    def get_next(self):
        return next(self.batches, None)


def reference_outputs(model, inputs):
    """ONNX Runtime's outputs with graph optimisations off: the QDQ definition op by op."""
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 3  # not the unused-initializer warnings of the quantiser's models
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    return np.concatenate([session.run(None, {name: x[None]})[0] for x in inputs])


def output_scale(model):
    """The scale of the DequantizeLinear that makes the graph's output."""
    graph = onnx.load(model).graph
    initializers = {i.name: onnx.numpy_helper.to_array(i) for i in graph.initializer}
    for node in graph.node:
        if node.op_type == "DequantizeLinear" and node.output[0] == graph.output[0].name:
            return float(initializers[node.input[1]])
    raise RuntimeError(f"{model}: its output is not a DequantizeLinear's")


def run(command):
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return result.returncode, result.stdout


def memory(kiln, model):
    """(arena, constants) bytes of `kiln inspect MODEL --backend neon`; packed constants count."""
    code, output = run([kiln, "inspect", model, "--backend", "neon"])
    found = PLAN.search(output)
    if code != 0 or not found:
        raise RuntimeError(f"kiln inspect {model} failed ({code}):\n{output}")
    return int(found["arena"]), int(found["constants"]) + int(found["packed"])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kiln", required=True, help="the kiln tool (build/tools/kiln/kiln)")
    parser.add_argument("--models", required=True, help="folder of NAME/model.onnx (tools/export_models.py bench)")
    parser.add_argument("--work", required=True, help="where the quantised models and data are written")
    parser.add_argument("--only", default="mobilenet_v2,resnet18")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--examples", type=int, default=100)
    parser.add_argument("--csv", default="bench_int8_models.csv")
    args = parser.parse_args()
    logging.getLogger().setLevel(logging.ERROR)  # the quantiser's advice to pre-process, once a model

    ort_bench = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ort_bench.py")
    threads = [int(t) for t in args.threads.split(",")]
    runs = [str(args.iterations), str(args.warmup)]
    os.makedirs(args.work, exist_ok=True)
    rows, failures = [], 0
    agreement_lines, memory_lines, speed_lines = [], [], []

    for name in args.only.split(","):
        fp32 = os.path.join(args.models, name, "model.onnx")
        shape = [d.dim_value for d in onnx.load(fp32).graph.input[0].type.tensor_type.shape.dim]
        input_name = onnx.load(fp32).graph.input[0].name
        rng = np.random.default_rng(2026)
        calibration = rng.random([16] + shape[1:], dtype=np.float32)
        inputs = rng.random([args.examples] + shape[1:], dtype=np.float32)
        inputs_file = os.path.join(args.work, f"{name}_inputs.npy")
        np.save(inputs_file, inputs)
        fp32_arena, fp32_constants = memory(args.kiln, fp32)
        for suffix, activations in ACTIVATIONS:
            case = f"{name}_qdq_{suffix}"
            model = os.path.join(args.work, case, "model.onnx")
            os.makedirs(os.path.dirname(model), exist_ok=True)
            quantize_static(fp32, model, Inputs(input_name, calibration), quant_format=QuantFormat.QDQ,
                            activation_type=activations, weight_type=QuantType.QInt8, per_channel=True)

            reference = os.path.join(args.work, f"{case}_ort.npy")
            np.save(reference, reference_outputs(model, inputs).astype(np.float32))
            code, output = run([args.kiln, "eval", model, inputs_file, "--reference", reference, "--backend", "neon"])
            found = EVAL.search(output)
            if not found:
                print(f"{case}: kiln eval failed ({code}):\n{output}", flush=True)
                failures += 1
                continue
            scale = output_scale(model)
            agreement, diff = float(found["agreement"]), float(found["diff"])
            agreement_lines.append(f"| {case} | {agreement * args.examples / 100:.0f} / {args.examples} | "
                                   f"{diff:.4g} | {diff / scale:.2f} |")
            rows.append((case, f"top-1 agreement, {args.examples} inputs", agreement, "onnxruntime, no graph "
                         "optimisations", 100.0, "%", agreement / 100.0))

            arena, constants = memory(args.kiln, model)
            memory_lines.append(f"| {case} | {arena / 2**20:.2f} | {fp32_arena / 2**20:.2f} | "
                                f"{arena / fp32_arena:.3f} | {constants / 2**20:.2f} | {fp32_constants / 2**20:.2f} | "
                                f"{constants / fp32_constants:.3f} |")
            rows.append((case, "arena", arena, "kiln Float32", fp32_arena, "B", fp32_arena / arena))
            rows.append((case, "constants", constants, "kiln Float32", fp32_constants, "B", fp32_constants / constants))

            for t in threads:
                commands = [[args.kiln, "bench", m, "--backend", "neon", "--threads", str(t), "--iterations", runs[0],
                             "--warmup", runs[1]] for m in (model, fp32)]
                commands.append([sys.executable, ort_bench, model, str(t)] + runs)
                results = [[] for _ in commands]
                for r in range(args.rounds):
                    order = list(range(len(commands)))
                    for i in (order if r % 2 == 0 else order[::-1]):
                        results[i].append(measure(commands[i])["median"])
                int8_ms, fp32_ms, ort_ms = (statistics.median(r) for r in results)
                speed_lines.append(f"| {case} | {t} | {int8_ms:.3f} | {fp32_ms:.3f} | {fp32_ms / int8_ms:.2f} | "
                                   f"{ort_ms:.3f} | {ort_ms / int8_ms:.2f} |")
                words = f"{t} thread" + ("s" if t > 1 else "")
                rows.append((case, f"latency median, {words}", int8_ms, f"kiln Float32 {words}", fp32_ms, "ms",
                             fp32_ms / int8_ms))
                rows.append((case, f"latency median, {words}", int8_ms, f"onnxruntime {ort.__version__} {words}",
                             ort_ms, "ms", ort_ms / int8_ms))
                print(speed_lines[-1], flush=True)

    print(f"\n| model | agreement with ORT (top-1) | max abs output diff | in output-scale units |\n"
          f"| --- | --- | --- | --- |")
    print("\n".join(agreement_lines))
    print("\n| model | int8 arena MiB | Float32 arena MiB | ratio | int8 constants MiB | Float32 constants MiB | "
          "ratio |\n| --- | --- | --- | --- | --- | --- | --- |")
    print("\n".join(memory_lines))
    print(f"\n| model | threads | kiln int8 ms | kiln Float32 ms | Float32 / int8 | ORT {ort.__version__} int8 ms | "
          f"ORT / kiln |\n| --- | --- | --- | --- | --- | --- | --- |")
    print("\n".join(speed_lines))
    write_csv(args.csv, rows)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
