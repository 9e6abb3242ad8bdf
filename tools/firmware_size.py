#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Splits a firmware image's memory into what people compare (docs/firmware.md): kiln and the
program's code, the model's weights, the C and C++ libraries, the startup code, initialised data,
the arena and the rest of .bss, from the GNU linker's map file.

    python3 tools/firmware_size.py FIRMWARE.map [--weights NAMESPACE] [--max-code BYTES]

Code is every input section of .text (the linker script puts .rodata there: it is flash) that the
program's own objects contribute, less the weights (the input sections of NAMESPACE::weights, one
per array with -fdata-sections) and its test data. Fails when that code exceeds --max-code.
"""
import re
import sys

LIBRARIES = ("libc.a", "libc_nano.a", "libg.a", "libm.a", "libgcc.a", "libstdc++", "libsupc++", "librdimon", "libnosys")


def input_sections(map_text):
    """(output section, input section name, size, object) for each input section of the memory map."""
    body = map_text[map_text.index("Linker script and memory map"):]
    output, pending = None, None
    for line in body.splitlines():
        if re.match(r"^\.\S+", line):
            output = line.split()[0]
            continue
        m = re.match(r"^ (\.\S+|COMMON)\s*$", line)  # a long name: its address, size and object follow
        if m:
            pending = m.group(1)
            continue
        m = re.match(r"^ (\.\S+|COMMON)?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$", line)
        if m and (m.group(1) or pending):
            yield output, m.group(1) or pending, int(m.group(3), 16), m.group(4)
        pending = None


def main():
    path = sys.argv[1]
    args = sys.argv[2:]
    weights = args[args.index("--weights") + 1] if "--weights" in args else None
    max_code = int(args[args.index("--max-code") + 1]) if "--max-code" in args else None
    totals = {}

    def add(what, size):
        totals[what] = totals.get(what, 0) + size

    mangled = f"_ZN{len(weights)}{weights}7weights" if weights else None
    for output, name, size, obj in input_sections(open(path).read()):
        if output in (".text", ".ARM.exidx"):
            if any(lib in obj for lib in LIBRARIES):
                add("C and C++ libraries (.text)", size)
            elif "startup" in obj:
                add("startup code (.text)", size)
            elif mangled and mangled in name:
                add("model weights (.rodata, flash)", size)
            elif "test_data" in name:
                add("test input and expected output (.rodata)", size)
            else:
                add("kiln and the program's code (.text, .rodata)", size)
        elif output == ".data":
            add(".data" + (" (C library)" if any(lib in obj for lib in LIBRARIES) else " (kiln and the program)"), size)
        elif output == ".bss":
            add("arena (.bss)" if "arena" in name else ".bss, other", size)
    stack = re.search(r"0x([0-9a-f]+)\s+STACK_SIZE = ", open(path).read())
    if stack:
        totals["stack (reserved)"] = int(stack.group(1), 16)
    width = max(len(k) for k in totals)
    for what, size in totals.items():
        print(f"{what:<{width}}  {size:>8} B  {size / 1024:7.1f} KiB")
    code = totals.get("kiln and the program's code (.text, .rodata)", 0)
    if max_code is not None and code > max_code:
        print(f"kiln and the program's code is {code} B, over the budget of {max_code} B")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
