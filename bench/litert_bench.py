# SPDX-License-Identifier: Apache-2.0
"""LiteRT's side of bench/bench_tflite_models.py: one .tflite model, one thread count, in its own
process (so that its peak RSS is its own), with LiteRT's default op resolver, which hands every
operator XNNPACK takes to XNNPACK. Prints one line in the form `kiln bench` prints:

    MODEL on LiteRT: load L ms; latency over N runs (W warm-up): min A ms, median B ms, p90 C ms

Load is the interpreter made from the file and its tensors allocated (XNNPACK's delegate applied,
its weights packed), as kiln's load is import, optimisation and loading from the file. Runs under a
Python with `ai-edge-litert` and numpy (PyPI; a benchmark-time tool, never a dependency of kiln).
"""
import os
import sys
import time

import numpy as np
from ai_edge_litert.interpreter import Interpreter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_models import time_and_report  # noqa: E402


def main():
    model, threads, iterations, warmup = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    start = time.perf_counter()
    interpreter = Interpreter(model_path=model, num_threads=threads)
    interpreter.allocate_tensors()
    load_ms = (time.perf_counter() - start) * 1e3
    rng = np.random.default_rng(2026)
    for detail in interpreter.get_input_details():
        interpreter.set_tensor(detail["index"], rng.random(detail["shape"], dtype=np.float32).astype(detail["dtype"]))
    time_and_report(model, "LiteRT", load_ms, interpreter.invoke, iterations, warmup)


if __name__ == "__main__":
    main()
