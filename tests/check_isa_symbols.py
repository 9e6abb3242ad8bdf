#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks a binary of the dispatching NeonBackend build for code that would crash an older CPU.

Every function that uses instructions beyond the narrowest set must belong to one instruction
set's kernels: its name mentions kiln's ISA namespace (kiln::neon::isa_*) or, on x86, an xsimd
architecture type; or be a shared function (a template or inline function of kiln's headers that
only wider kernel objects emitted out of line) called only by such functions. A shared function
compiled with wider flags and reachable from other code - called by a function outside the
instruction sets' kernels, or never called directly (its address taken) - fails this check: the
linker kept a wide copy for callers that may run on any CPU. The instructions beyond the narrowest set: on x86-64
AVX and later (VEX/EVEX encodings: mnemonics starting with 'v', or ymm/zmm/mask registers); on
aarch64 what the dotprod_fp16 kernels add to armv8-a's: the dot product (sdot, udot) and
half-precision arithmetic (floating-point instructions on halves, h registers or .4h/.8h lanes,
other than armv8-a's own conversions).

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
FUNCTION = re.compile(r"^([0-9a-f]+) <(.+)>:$")
DIRECT_CALL = re.compile(r"^(call|callq|jmp|jmpq|bl|b)\s+([0-9a-f]+) <(.+?)(\+0x[0-9a-f]+)?>$")
AVX_REGISTER = re.compile(r"%[yz]mm\d|%k[1-7]\b")
ARM_DOT_PRODUCT = {"sdot", "udot", "usdot", "sudot"}
ARM_HALVES = re.compile(r"\bh\d+\b|\.[48]h\b")
ARM_BASE_CONVERSIONS = {"fcvt", "fcvtl", "fcvtl2", "fcvtn", "fcvtn2"}


def beyond_narrowest(arm: bool, instruction: str) -> bool:
    mnemonic = instruction.split(None, 1)[0]
    if arm:
        half_arithmetic = (mnemonic.startswith("f") and mnemonic not in ARM_BASE_CONVERSIONS
                           and bool(ARM_HALVES.search(instruction)))
        return mnemonic in ARM_DOT_PRODUCT or half_arithmetic
    return (mnemonic.startswith("v") and mnemonic not in ("verr", "verw")) or bool(AVX_REGISTER.search(instruction))


def main() -> int:
    binary = sys.argv[1]
    objdump = sys.argv[2] if len(sys.argv) > 2 else "objdump"
    listing = subprocess.run([objdump, "-d", "-C", "--no-show-raw-insn", binary], check=True,
                             capture_output=True, text=True).stdout
    arm = "file format elf64-littleaarch64" in listing
    wide, callers, checked, isa_functions, name = {}, {}, 0, 0, None  # wide: shared function -> instruction
    for line in listing.splitlines():
        header = FUNCTION.match(line)
        if header:
            name = header.group(2)
            checked += 1
            if ISA_MARKERS.search(name):
                isa_functions += 1
            continue
        if name is None or "\t" not in line:
            continue
        instruction = line.split("\t", 1)[1].strip()
        call = DIRECT_CALL.match(instruction)
        if call and call.group(3) != name:
            callers.setdefault(call.group(3), set()).add(name)
        if name not in wide and not ISA_MARKERS.search(name) and beyond_narrowest(arm, instruction):
            wide[name] = instruction
    # A wide shared function is contained when every caller is an instruction set's kernel or a
    # contained wide function; the rest are reachable from code that runs on any CPU.
    contained, changed = set(), True
    while changed:
        changed = False
        for function in wide:
            if function in contained or not callers.get(function):
                continue
            if all(ISA_MARKERS.search(c) or c in contained for c in callers[function]):
                contained.add(function)
                changed = True
    offenders = [f"{function}: {instruction}" for function, instruction in wide.items() if function not in contained]
    print(f"{checked} functions, {isa_functions} of them in an instruction set's kernels; "
          f"{len(wide)} shared functions carry wider code, {len(contained)} of them called only from those kernels")
    for offender in offenders:
        print("shared function with code beyond the narrowest instruction set, reachable from other code:", offender)
    if isa_functions == 0:
        print("no kernels of any instruction set found: is this the dispatching build?")
    return 1 if offenders or isa_functions == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
