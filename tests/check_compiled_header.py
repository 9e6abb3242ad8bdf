#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that a header `kiln compile` wrote and the repository holds is what kiln compile writes
today, byte for byte (the generator is deterministic, and the firmware builds from the committed
header, with no kiln tool for the target).

    check_compiled_header.py KILN SOURCE_ROOT MODEL NAMESPACE HEADER [OPTION...]

MODEL and HEADER are relative to SOURCE_ROOT, where kiln compile runs, as the header records.
"""
import difflib
import os
import subprocess
import sys
import tempfile


def main():
    kiln, root, model, namespace, header = sys.argv[1:6]
    options = sys.argv[6:]
    kiln = os.path.abspath(kiln)  # it runs from root
    with tempfile.TemporaryDirectory() as tmp:
        written = os.path.join(tmp, os.path.basename(header))
        subprocess.run([kiln, "compile", model, "-o", written, "--namespace", namespace] + options, cwd=root,
                       check=True)
        fresh = open(written).read().splitlines()
    committed = open(os.path.join(root, header)).read().splitlines()
    if fresh == committed:
        print(f"{header} is what kiln compile writes ({len(committed)} lines)")
        return 0
    print(f"{header} is not what kiln compile writes today; write it again with")
    print(f"  kiln compile {model} -o {header} --namespace {namespace}", *options)
    sys.stdout.writelines(line + "\n" for line in list(difflib.unified_diff(committed, fresh, header, "kiln compile",
                                                                            lineterm=""))[:40])
    return 1


if __name__ == "__main__":
    sys.exit(main())
