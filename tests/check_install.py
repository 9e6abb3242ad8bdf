#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Installs the build into a scratch folder and checks what a user gets: headers only under
include/ (no compiled source, no build file), kiln.pc requiring nothing beyond xsimd, and the
generated config.hpp.

usage: check_install.py MESON BUILD_DIR
"""
import pathlib
import subprocess
import sys
import tempfile


def main() -> int:
    meson, build = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as root:
        subprocess.run([meson, "install", "-C", build, "--no-rebuild", "--quiet", "--destdir", root], check=True)
        files = [p for p in pathlib.Path(root).rglob("*") if p.is_file()]
        include = [p for p in files if "/include/kiln/" in str(p)]
        not_headers = [p for p in include if p.suffix != ".hpp"]
        pc = [p for p in files if p.name == "kiln.pc"]
        problems = [f"not a header under include/: {p.relative_to(root)}" for p in not_headers]
        if not include:
            problems.append("no headers were installed")
        if not any(p.name == "config.hpp" for p in include):
            problems.append("kiln/config.hpp was not installed")
        if len(pc) != 1:
            problems.append(f"expected one kiln.pc, found {len(pc)}")
        else:
            requires = [l for l in pc[0].read_text().splitlines() if l.startswith("Requires")]
            if any("eigen" in l for l in requires):
                problems.append(f"kiln.pc requires Eigen: {requires}")
            print("kiln.pc:", "; ".join(requires) or "no Requires")
        print(f"{len(include)} headers installed under include/kiln, {len(files)} files in all")
        for problem in problems:
            print(problem)
        return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
