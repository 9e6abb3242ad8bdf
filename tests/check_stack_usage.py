#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks the stack frames of kiln's workloads, from the -fstack-usage files of the objects that
compile them (libkiln, the dispatching NeonBackend's per-ISA libraries).

Every kiln function there must use at most LIMIT bytes of stack, and none may have a frame whose
size is unbounded (alloca, variable-length arrays): a firmware thread has a small, fixed stack, so
kernels keep large buffers in their planned scratch instead.

usage: check_stack_usage.py LIMIT OBJECT_DIR [OBJECT_DIR...]
"""
import pathlib
import sys


def main() -> int:
    limit = int(sys.argv[1])
    frames = []
    files = [f for d in sys.argv[2:] for f in sorted(pathlib.Path(d).glob("*.su"))]
    if not files:
        print("no .su files found: was the library compiled with -fstack-usage?")
        return 1
    for su in files:
        for line in su.read_text().splitlines():
            location, size, qualifier = line.rsplit("\t", 2)
            if "kiln" in location:
                frames.append((int(size), qualifier, location))
    frames.sort(reverse=True)
    offenders = [f for f in frames if f[0] > limit or f[1] == "dynamic"]
    print(f"{len(frames)} kiln functions in {len(files)} objects; largest frames:")
    for size, qualifier, location in frames[:5]:
        print(f"  {size:6d} bytes ({qualifier}) {location[:200]}")
    for size, qualifier, location in offenders:
        print(f"over {limit} bytes or unbounded: {size} bytes ({qualifier}) {location}")
    return 1 if offenders else 0


if __name__ == "__main__":
    sys.exit(main())
