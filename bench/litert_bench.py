# SPDX-License-Identifier: Apache-2.0
"""LiteRT's side of bench/bench_tflite_models.py: one .tflite model, one thread count, in its own
process (so that its peak RSS is its own), with LiteRT's default op resolver, which hands every
operator XNNPACK takes to XNNPACK. Prints one line in the form `kiln bench` prints:

    MODEL on LiteRT: load L ms; latency over N runs (W warm-up): min A ms, median B ms, p90 C ms

Load is the interpreter made from the file and its tensors allocated (XNNPACK's delegate applied,
its weights packed), as kiln's load is import, optimisation and loading from the file. Runs under a
Python with `ai-edge-litert` and numpy (PyPI; a benchmark-time tool, never a dependency of kiln).
"""
import sys
import time

import numpy as np
from ai_edge_litert.interpreter import Interpreter


def main():
    model, threads, iterations, warmup = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    start = time.perf_counter()
    interpreter = Interpreter(model_path=model, num_threads=threads)
    interpreter.allocate_tensors()
    load_ms = (time.perf_counter() - start) * 1e3
    rng = np.random.default_rng(2026)
    for detail in interpreter.get_input_details():
        interpreter.set_tensor(detail["index"], rng.random(detail["shape"], dtype=np.float32).astype(detail["dtype"]))
    for _ in range(warmup):
        interpreter.invoke()
    times = []
    for _ in range(iterations):
        t0 = time.perf_counter()
        interpreter.invoke()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    print(f"{model} on LiteRT: load {load_ms:.1f} ms; latency over {iterations} runs "
          f"({warmup} warm-up): min {times[0]:.4f} ms, median {times[len(times) // 2]:.4f} ms, "
          f"p90 {times[min(len(times) - 1, int(0.9 * len(times)))]:.4f} ms")


if __name__ == "__main__":
    main()
