#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Shows that an Arm build's NeonBackend kernels are NEON code, not scalar fallbacks.

Disassembles BINARY (aarch64 or 32-bit Arm, told apart by objdump's file format) and checks:

- every compute op's Neon kernel (the functions named `Kernel<kiln::ops::OP`, their lambdas
  included) holds NEON vector instructions: on aarch64 those with vector registers (v0.4s, q1),
  on Arm those whose mnemonic starts with 'v' and name a q register;
- the Float32 GEMM micro-kernel's loop, the tallest `gemm_tile<ROWS, 2, BasicDenseRows<float>>`
  (ROWS rows by 2 vectors of 4), does 2 x ROWS vector multiply-adds an iteration (or a multiple, if
  unrolled) and no spills; where an instruction set has half-precision arithmetic (aarch64's
  dotprod_fp16, decision 0020), so does its Float16 tile on 2 vectors of 8 halves (fmla v.8h), and
  its Float16 depthwise convolution does its multiply-adds on 8 halves too;
- the int8 GEMM micro-kernel's loop, the tallest `int8_tile<ROWS, 2>`, does 2 x ROWS dot products
  (sdot) or pairwise widening adds (sadalp, vpadal) an iteration, whichever its instruction set has;
- on aarch64, each instruction set's Float16 conversions (decision 0019) widen and narrow four
  lanes at a time (fcvtl v.4s, fcvtn v.4h).

usage: check_neon_code.py BINARY OBJDUMP
"""
import re
import subprocess
import sys

COMPUTE_OPS = ["Convolution2d", "DepthwiseConvolution2d", "FullyConnected", "BatchMatMul", "Pooling2d",
               "ElementwiseBinary", "ElementwiseUnary", "Activation", "Softmax", "Reduce", "BatchNormalization",
               "Quantize", "Dequantize", "Requantize", "TransposeConvolution2d", "LayerNormalization"]
# Kernels whose code is a template shared by their element types, named apart from Kernel<>.
KERNEL_CLASSES = {"Convolution2d": "::GemmConvolution<", "DepthwiseConvolution2d": "::DepthwiseConvolution<",
                  "FullyConnected": "::GemmFullyConnected<", "LayerNormalization": "::layer_normalization_rows<"}
FUNCTION = re.compile(r"^([0-9a-f]+) <(.+)>:$")
A64_VECTOR = re.compile(r"\bv\d+\.\d*[bhsd]\b|\bq\d+\b")
A32_QUAD = re.compile(r"\bq\d+\b")


def functions(listing):
    """(name, [(address, mnemonic, operands)]) for each function in the listing."""
    name, body = None, []
    for line in listing.splitlines():
        header = FUNCTION.match(line)
        if header:
            if name is not None:
                yield name, body
            name, body = header.group(2), []
            continue
        parts = line.strip().split("\t")
        if name is None or len(parts) < 2 or not parts[0].endswith(":"):
            continue
        body.append((int(parts[0][:-1], 16), parts[1], parts[2] if len(parts) > 2 else ""))
    if name is not None:
        yield name, body


def half_fma(ins):
    return ins[1] == "fmla" and ".8h" in ins[2]


def is_vector(arm64, mnemonic, operands):
    if arm64:
        return bool(A64_VECTOR.search(operands))
    return mnemonic.startswith("v") and bool(A32_QUAD.search(operands))


def hottest_loop(body, counted):
    """Of the innermost loops (backward branches within the function, holding no other), the one
    with the most `counted` instructions."""
    loops = []
    for i, (address, mnemonic, operands) in enumerate(body):
        target = re.search(r"\b([0-9a-f]+) <", operands)
        if mnemonic.startswith(("b", "cb", "tb")) and target is not None and int(target.group(1), 16) < address:
            first = next(j for j, ins in enumerate(body) if ins[0] >= int(target.group(1), 16))
            loops.append((first, i))
    innermost = [(s, e) for s, e in loops if not any(s <= s2 and e2 <= e and (s2, e2) != (s, e) for s2, e2 in loops)]
    best = []
    for s, e in innermost:
        loop = body[s:e + 1]
        if sum(counted(ins) for ins in loop) > sum(counted(ins) for ins in best):
            best = loop
    return best


def check_loop(failures, body, name, what, counted, per_iteration):
    loop = hottest_loop(body, counted)
    count = sum(counted(ins) for ins in loop)
    spills = [ins for ins in loop if re.search(r"\[sp\b|\bsp\]|\bsp!", ins[2]) and
              (ins[1].startswith(("str", "stp", "st1", "vstr", "vst")) or ins[1].startswith(("ldr", "ldp", "vldr")))]
    kinds = sorted({ins[1] for ins in loop if counted(ins)})
    print(f"{name}: its loop has {len(loop)} instructions, {count} {what} ({', '.join(kinds)}), "
          f"{len(spills)} stack accesses")
    if count == 0 or count % per_iteration != 0:
        failures.append(f"{name}: {count} {what} in its loop, not a multiple of {per_iteration}")
    if spills:
        failures.append(f"{name}: its loop reads or writes the stack: " + "; ".join(f"{m} {o}" for _, m, o in spills[:3]))


def main() -> int:
    binary, objdump = sys.argv[1], sys.argv[2]
    listing = subprocess.run([objdump, "-d", "-C", "--no-show-raw-insn", binary], check=True, capture_output=True,
                             text=True).stdout
    arm64 = "file format elf64-littleaarch64" in listing
    if not arm64 and "file format elf32-littlearm" not in listing:
        print(f"{binary} is not an Arm program")
        return 1
    failures = []
    vector_counts = {op: 0 for op in COMPUTE_OPS}
    tiles = {}  # (kernel, ISA namespace) -> body
    conversions = {}  # ISA namespace -> the Float16 conversion instructions of its code
    half_depthwise = {}  # ISA namespace -> the Float16 FMAs of its Float16 depthwise convolution
    for name, body in functions(listing):
        if "kiln::neon::isa_neon" not in name:
            continue
        isa = re.search(r"kiln::neon::(isa_neon\w*)::", name)
        for _, mnemonic, operands in body:
            if (mnemonic, operands[:1]) in (("fcvtl", "v"), ("fcvtn", "v")) and re.search(r"\.4[sh]\b", operands):
                conversions.setdefault(isa.group(1) if isa else "", set()).add(mnemonic)
        for op in COMPUTE_OPS:
            if f"Kernel<kiln::ops::{op}," in name or KERNEL_CLASSES.get(op, "Kernel<>") in name:
                vector_counts[op] += sum(is_vector(arm64, m, o) for _, m, o in body)
        if isa and "::DepthwiseConvolution<unsigned short>" in name:
            half_depthwise[isa.group(1)] = half_depthwise.get(isa.group(1), 0) + sum(map(half_fma, body))
        tile = re.match(r"void kiln::neon::(isa_neon\w*)::detail::(gemm_tile|int8_tile)<(\d+)u?l?, 2u?l?(, kiln::neon::"
                         r"isa_neon\w*::BasicDenseRows<(float|unsigned short)>, \5)?>\(", name)
        if tile and (tile.group(2) == "int8_tile" or tile.group(4)):
            kernel = tile.group(2) + ("_half" if tile.group(5) == "unsigned short" else "")
            key, rows = (kernel, tile.group(1)), int(tile.group(3))
            if rows > tiles.get(key, (0, None))[0]:
                tiles[key] = (rows, body)
    print("NEON vector instructions in each op's kernels:")
    for op, count in vector_counts.items():
        print(f"  {op:24} {count}")
        if count == 0:
            failures.append(f"{op}: no NEON vector instructions in its kernels")
    fma = (lambda ins: ins[1] == "fmla" and ".4s" in ins[2]) if arm64 else \
        (lambda ins: ins[1] in ("vfma.f32", "vmla.f32") and A32_QUAD.search(ins[2]) is not None)
    dot = (lambda ins: ins[1] in ("sdot", "sadalp")) if arm64 else (lambda ins: ins[1] == "vpadal.s16")
    half_sets = sorted(isa for isa in {isa for _, isa in tiles} if isa.endswith("_fp16"))
    for kernel, counted, what in (("gemm_tile", fma, "vector FMAs"), ("int8_tile", dot, "sdot or sadalp/vpadal"),
                                  ("gemm_tile_half", half_fma, "Float16 vector FMAs")):
        found = [isa for k, isa in tiles if k == kernel]
        if kernel == "gemm_tile_half" and found != half_sets:
            failures.append(f"the Float16 micro-kernel is in {found or 'no set'}, not in {half_sets or 'none'}")
        elif not found and kernel != "gemm_tile_half":
            failures.append(f"the micro-kernel {kernel} is not in the binary")
        for isa in found:
            rows, body = tiles[(kernel, isa)]
            check_loop(failures, body, f"{isa}::{kernel}<{rows}, 2>", what, counted, 2 * rows)
    for isa in half_sets:
        print(f"{isa}: {half_depthwise.get(isa, 0)} Float16 vector FMAs in its Float16 depthwise convolution")
        if half_depthwise.get(isa, 0) == 0:
            failures.append(f"{isa}: its Float16 depthwise convolution does no FMA on 8 halves")
    if arm64:
        for isa in sorted({isa for _, isa in tiles}):
            seen = conversions.get(isa, set())
            print(f"Float16 conversions in {isa}: {', '.join(sorted(seen)) or 'none'}")
            if seen != {"fcvtl", "fcvtn"}:
                failures.append(f"{isa}: the Float16 conversions are not fcvtl and fcvtn on vectors")
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
