#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compile-fail test: SOURCE must compile as it is and must fail with -DKILN_SHOULD_FAIL, printing MESSAGE.

Usage: check_compile_fail.py SOURCE MESSAGE -- COMPILER [ARGS...]
"""
import subprocess
import sys


def main():
    separator = sys.argv.index("--")
    source, message = sys.argv[1], sys.argv[2]
    compiler = sys.argv[separator + 1:]
    good = subprocess.run(compiler + [source], capture_output=True, text=True)
    if good.returncode != 0:
        print(f"{source} must compile without KILN_SHOULD_FAIL:\n{good.stderr}")
        return 1
    bad = subprocess.run(compiler + ["-DKILN_SHOULD_FAIL", source], capture_output=True, text=True)
    if bad.returncode == 0:
        print(f"{source} compiled with KILN_SHOULD_FAIL but must not")
        return 1
    if message not in bad.stderr:
        print(f"{source} failed without the expected message '{message}':\n{bad.stderr[:4000]}")
        return 1
    first_error = next((line for line in bad.stderr.splitlines() if "error" in line), "")
    print(f"ok: {first_error.strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
