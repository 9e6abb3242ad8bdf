#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""kiln's NeonBackend against ONNX Runtime on whole models exported from PyTorch, side by side.

    /usr/bin/python3 tools/export_models.py bench /tmp/kiln_bench
    /usr/bin/python3 -m venv /opt/kiln-bench-venv && /opt/kiln-bench-venv/bin/pip install onnxruntime numpy
    /usr/bin/python3 bench/bench_models.py --kiln build/tools/kiln/kiln --models /tmp/kiln_bench \\
        --ort-python /opt/kiln-bench-venv/bin/python [--threads 1,2] [--rounds 3] [--csv bench_models.csv] \\
        [--dim batch=1 --dim sequence=32]

For every model and thread count, `kiln bench MODEL --backend neon --threads T` and
bench/ort_bench.py run in turn, each in a process of its own, for --rounds rounds whose order
alternates (kiln first, then ONNX Runtime first), so that the machine's noise hits both alike.
--dim gives the models' named dimensions their values, for both engines (kiln --dim; ONNX
Runtime's inputs are made of that shape).
Each figure is the median over the rounds of: the median latency, the load time (file to ready)
and the peak RSS of the process (ru_maxrss: for ONNX Runtime this includes the Python interpreter
and numpy, about 30 MiB, as a kiln user's process includes their program).

Writes bench CSV rows (case, variant, kiln_value, anchor, anchor_value, unit, ratio), where ratio
is anchor / kiln: above 1, kiln is faster or smaller. Prints the geometric means of the ratios.
"""
import argparse
import csv
import math
import os
import re
import statistics
import subprocess
import sys
import time

LINE = re.compile(r"load (?P<load>[\d.]+) ms; latency over \d+ runs \(\d+ warm-up\): min (?P<min>[\d.]+) ms, "
                  r"median (?P<median>[\d.]+) ms, p90 (?P<p90>[\d.]+) ms")


def measure(command):
    """Runs `command`; returns its figures (ms) and its peak RSS (MiB), or raises with its output."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    found = LINE.search(output)
    if process.returncode != 0 or not found:
        raise RuntimeError(f"{' '.join(command)} failed ({process.returncode}):\n{output}")
    figures = {key: float(value) for key, value in found.groupdict().items()}
    figures["rss"] = usage.ru_maxrss / 1024.0
    return figures


def time_and_report(model, engine, load_ms, run, iterations, warmup):
    """Times `run` (warmup untimed calls, then `iterations` timed ones) and prints the line `kiln bench`
    prints, for the anchors' scripts (ort_bench.py, litert_bench.py)."""
    for _ in range(warmup):
        run()
    times = []
    for _ in range(iterations):
        t0 = time.perf_counter()
        run()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    print(f"{model} on {engine}: load {load_ms:.1f} ms; latency over {iterations} runs "
          f"({warmup} warm-up): min {times[0]:.4f} ms, median {times[len(times) // 2]:.4f} ms, "
          f"p90 {times[min(len(times) - 1, int(0.9 * len(times)))]:.4f} ms")


def write_csv(path, rows):
    """Writes bench CSV rows (case, variant, kiln_value, anchor, anchor_value, unit, ratio)."""
    with open(path, "w", newline="") as out:  # the csv module quotes "latency median, 1 thread"
        writer = csv.writer(out)
        writer.writerow(["case", "variant", "kiln_value", "anchor", "anchor_value", "unit", "ratio"])
        for case, variant, kiln, anchor, anchor_value, unit, ratio in rows:
            writer.writerow([case, variant, f"{kiln:g}", anchor, f"{anchor_value:g}", unit, f"{ratio:g}"])
    print(f"wrote {path}")


def side_by_side(models, threads, rounds, commands, anchor, anchor_name):
    """Measures each (name, path) of `models` at each thread count: commands(path, t) gives kiln's and the
    anchor's command, run in turn for `rounds` rounds of alternating order; prints a table and the
    geometric means of anchor / kiln, and returns the CSV rows and the number of models that failed."""
    rows = []
    ratios = {}
    failures = 0
    print(f"{'model':<22} {'threads':>7} {'kiln ms':>9} {anchor + ' ms':>9} {'ratio':>6}   "
          f"{'kiln load':>9} {anchor + ' load':>9} {'ratio':>6}   {'kiln MiB':>8} {anchor + ' MiB':>8} {'ratio':>6}")
    for name, model in models:
        for t in threads:
            kiln_cmd, anchor_cmd = commands(model, t)
            kiln, other = [], []
            try:
                for r in range(rounds):
                    order = [(kiln_cmd, kiln), (anchor_cmd, other)]
                    for command, results in (order if r % 2 == 0 else order[::-1]):
                        results.append(measure(command))
            except RuntimeError as failure:
                print(f"{name:<22} {t:>7} skipped: {failure}", flush=True)
                failures += 1
                continue
            k = {key: statistics.median(f[key] for f in kiln) for key in kiln[0]}
            o = {key: statistics.median(f[key] for f in other) for key in other[0]}
            thread_words = f"{t} thread" + ("s" if t > 1 else "")
            for variant, key, unit in ((f"latency median, {thread_words}", "median", "ms"),
                                       (f"load, {thread_words}", "load", "ms"),
                                       (f"peak RSS, {thread_words}", "rss", "MiB")):
                ratio = o[key] / k[key]
                rows.append((name, variant, k[key], f"{anchor_name} {thread_words}", o[key], unit, ratio))
                ratios.setdefault((key, t), []).append(ratio)
            print(f"{name:<22} {t:>7} {k['median']:>9.3f} {o['median']:>9.3f} {o['median'] / k['median']:>6.2f}   "
                  f"{k['load']:>9.1f} {o['load']:>9.1f} {o['load'] / k['load']:>6.2f}   "
                  f"{k['rss']:>8.1f} {o['rss']:>8.1f} {o['rss'] / k['rss']:>6.2f}", flush=True)

    print(f"\ngeometric mean of {anchor_name} / kiln (above 1: kiln faster or smaller):")
    for (key, t), values in sorted(ratios.items()):
        mean = math.exp(sum(math.log(v) for v in values) / len(values))
        print(f"  {key:<6} {t} thread{'s' if t > 1 else ' '}: {mean:.3f} over {len(values)} models, "
              f"worst {min(values):.3f}")
    return rows, failures


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kiln", required=True, help="the kiln tool (build/tools/kiln/kiln)")
    parser.add_argument("--models", required=True, help="folder of NAME/model.onnx (tools/export_models.py bench)")
    parser.add_argument("--ort-python", required=True, help="a Python with onnxruntime and numpy")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--only", default="", help="comma-separated model names")
    parser.add_argument("--csv", default="bench_models.csv")
    parser.add_argument("--dim", action="append", default=[], metavar="NAME=N",
                        help="the value of a named input dimension (repeats)")
    args = parser.parse_args()

    ort_bench = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ort_bench.py")
    names = sorted(n for n in os.listdir(args.models) if os.path.exists(os.path.join(args.models, n, "model.onnx")))
    if args.only:
        names = [n for n in names if n in args.only.split(",")]
    threads = [int(t) for t in args.threads.split(",")]
    runs = [str(args.iterations), str(args.warmup)]

    def commands(model, t):
        """The kiln and the ONNX Runtime command measuring `model` on `t` threads."""
        dims = [word for d in args.dim for word in ("--dim", d)]
        return ([args.kiln, "bench", model, "--backend", "neon", "--threads", str(t), "--iterations", runs[0],
                 "--warmup", runs[1]] + dims,
                [args.ort_python, ort_bench, model, str(t)] + runs + args.dim)

    # One untimed run of each engine at the most threads first: on these shared VMs the first
    # multi-threaded runs of a session found the second core slow to come (DS-CNN, measured first,
    # 0.12 ms at 2 threads in every full run against 0.06 ms alone), whichever engine ran them.
    if names:
        for command in commands(os.path.join(args.models, names[0], "model.onnx"), max(threads)):
            measure(command)

    rows, failures = side_by_side([(name, os.path.join(args.models, name, "model.onnx")) for name in names], threads,
                                  args.rounds, commands, "ORT", "onnxruntime")
    write_csv(args.csv, rows)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
