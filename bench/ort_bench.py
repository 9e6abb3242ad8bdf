# SPDX-License-Identifier: Apache-2.0
"""ONNX Runtime's side of bench/bench_models.py: one model, one thread count, in its own process
(so that its peak RSS is its own). Arguments: MODEL THREADS ITERATIONS WARMUP [NAME=N ...], the last
the values of named input dimensions (1 where none is given). Prints one line in the form `kiln bench` prints:

    MODEL on onnxruntime: load L ms; latency over N runs (W warm-up): min A ms, median B ms, p90 C ms

Load is session creation from the file (graph optimisations included), as kiln's load is import,
optimisation and loading from the file. Runs under the Python that has `onnxruntime` (PyPI; a
benchmark-time tool, never a dependency of kiln).
"""
import os
import sys
import time

import numpy as np
import onnxruntime as ort

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_models import time_and_report  # noqa: E402


def main():
    model, threads, iterations, warmup = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    dims = {name: int(value) for name, value in (a.split("=") for a in sys.argv[5:])}
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    start = time.perf_counter()
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    load_ms = (time.perf_counter() - start) * 1e3
    rng = np.random.default_rng(2026)
    feeds = {i.name: rng.random([d if isinstance(d, int) else dims.get(d, 1) for d in i.shape], dtype=np.float32)
             for i in session.get_inputs()}
    time_and_report(model, f"onnxruntime {ort.__version__}", load_ms, lambda: session.run(None, feeds), iterations, warmup)


if __name__ == "__main__":
    main()
