#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes ONNX test-case tensors (TensorProto .pb files) into a C++ header as float arrays, for
programs with no file system to read them from: the firmware and its host twin compare their
outputs with PyTorch's through it (docs/firmware.md).

    /usr/bin/python3 tools/tensor_header.py NAMESPACE OUT.hpp NAME=FILE.pb [NAME=FILE.pb ...]

Needs Debian's python3-onnx.
"""
import sys

import numpy as np
import onnx
import onnx.numpy_helper


def main():
    namespace, out, pairs = sys.argv[1], sys.argv[2], sys.argv[3:]
    lines = ["// SPDX-License-Identifier: Apache-2.0", "// clang-format off",
             f"// Written by tools/tensor_header.py from {', '.join(p.split('=', 1)[1] for p in pairs)}; do not edit.",
             "#pragma once", "", f"namespace {namespace} {{", ""]
    for pair in pairs:
        name, path = pair.split("=", 1)
        proto = onnx.TensorProto()
        with open(path, "rb") as f:
            proto.ParseFromString(f.read())
        values = onnx.numpy_helper.to_array(proto).astype(np.float32).ravel()
        lines.append(f"// {path}: shape {list(proto.dims)}")
        lines.append(f"inline constexpr float {name}[{values.size}] = {{")
        if not np.all(np.isfinite(values)):
            raise ValueError(f"{path} holds infinities or NaNs, which this header does not write")
        for i in range(0, values.size, 6):
            lines.append("    " + " ".join(f"{np.format_float_positional(v, unique=True)}f," for v in values[i:i + 6]))
        lines.append("};")
        lines.append("")
    lines.append(f"}}  // namespace {namespace}")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
