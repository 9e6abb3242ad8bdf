#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks a binary of the dispatching NeonBackend build for code that would crash an older CPU.

Every function that uses instructions beyond the narrowest set must belong to one instruction
set's kernels: its name mentions kiln's ISA namespace (kiln::neon::isa_*) or, on x86, an xsimd
architecture type. A shared function compiled with wider flags in one kernel object and kept by
the linker for every caller fails this check. The instructions beyond the narrowest set: on x86-64
AVX and later (VEX/EVEX encodings: mnemonics starting with 'v', or ymm/zmm/mask registers); on
aarch64 the dot product (sdot, udot), which is all the dotprod kernels add to armv8-a's.

usage: check_isa_symbols.py BINARY [objdump]
"""
import re
import subprocess
import sys

# kiln's ISA namespaces (also inside names objdump leaves mangled), xsimd's AVX architecture types,
# anonymous namespaces, and the compiler's clones of a function specialised for one caller
# (`[clone .constprop.0]`, `.isra`, `.part`): the last two have internal linkage, so each object
# calls its own copy and the linker never shares one.
ISA_MARKERS = re.compile(r"isa_(avx|fma3|sse|neon)|xsimd::(avx|fma3<)|\(anonymous namespace\)|\[clone \.")
FUNCTION = re.compile(r"^[0-9a-f]+ <(.+)>:$")
AVX_REGISTER = re.compile(r"%[yz]mm\d|%k[1-7]\b")
ARM_DOT_PRODUCT = {"sdot", "udot", "usdot", "sudot"}


def beyond_narrowest(arm: bool, instruction: str) -> bool:
    mnemonic = instruction.split(None, 1)[0]
    if arm:
        return mnemonic in ARM_DOT_PRODUCT
    return (mnemonic.startswith("v") and mnemonic not in ("verr", "verw")) or bool(AVX_REGISTER.search(instruction))


def main() -> int:
    binary = sys.argv[1]
    objdump = sys.argv[2] if len(sys.argv) > 2 else "objdump"
    listing = subprocess.run([objdump, "-d", "-C", "--no-show-raw-insn", binary], check=True,
                             capture_output=True, text=True).stdout
    arm = "file format elf64-littleaarch64" in listing
    offenders, checked, isa_functions, name, flagged = [], 0, 0, None, False
    for line in listing.splitlines():
        header = FUNCTION.match(line)
        if header:
            name, flagged = header.group(1), False
            checked += 1
            if ISA_MARKERS.search(name):
                isa_functions += 1
            continue
        if name is None or flagged or "\t" not in line:
            continue
        instruction = line.split("\t", 1)[1].strip()
        if beyond_narrowest(arm, instruction):
            flagged = True
            if not ISA_MARKERS.search(name):
                offenders.append(f"{name}: {instruction}")
    print(f"{checked} functions, {isa_functions} of them in an instruction set's kernels")
    for offender in offenders:
        print("shared function with code beyond the narrowest instruction set:", offender)
    if isa_functions == 0:
        print("no kernels of any instruction set found: is this the dispatching build?")
    return 1 if offenders or isa_functions == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
