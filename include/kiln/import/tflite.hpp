// SPDX-License-Identifier: Apache-2.0
// The TensorFlow Lite importer: a .tflite model file (or its bytes) turned into a kiln Network.
//
// Like the ONNX importer it is a compiled library, libkiln_tflite (Meson: the `kiln_tflite`
// dependency, feature `tflite`, built when FlatBuffers is present), so that the header-only core
// never sees FlatBuffers. Every file is checked by the FlatBuffers verifier before anything reads it.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "kiln/core/status.hpp"
#include "kiln/import/imported_model.hpp"

namespace kiln::tflite {

/// Reads a model from its bytes (a copy is made where they are not aligned for reading). Every
/// failure is a Status: a file that does not verify, a buffer out of range, an operator or option
/// kiln does not run, shapes that do not agree; operator errors name the operator's index and code.
/// The model's tensors keep TensorFlow Lite's NHWC layout, which is kiln's.
Expected<ImportedModel> import_model(std::span<const std::byte> bytes);
/// Reads a model from a .tflite file.
Expected<ImportedModel> import_file(const std::string& path);

/// The builtin operators the importer reads, sorted.
std::span<const std::string_view> supported_ops();

}  // namespace kiln::tflite
