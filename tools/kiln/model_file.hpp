// SPDX-License-Identifier: Apache-2.0
// The kiln tool's models: a .tflite file through the TensorFlow Lite importer (when kiln was built
// with it), any other through the ONNX importer.
#pragma once

#include <string>

#include <kiln/import/onnx.hpp>
#if KILN_HAS_TFLITE
#include <kiln/import/tflite.hpp>
#endif

namespace kiln::tool {

/// `options` fix the dimensions an ONNX model's inputs leave open; a .tflite model's are fixed.
inline Expected<ImportedModel> import_model_file(const std::string& path, const onnx::ImportOptions& options = {}) {
  if (path.ends_with(".tflite")) {
    if (!options.dimensions.empty() || !options.input_shapes.empty())
      return Status::error(ErrorCode::InvalidArgument, "--shape and --dim apply to ONNX models; '", path,
                           "' is a TensorFlow Lite model, whose input shapes are fixed");
#if KILN_HAS_TFLITE
    return tflite::import_file(path);
#else
    return Status::error(ErrorCode::Unsupported, "'", path,
                         "' is a TensorFlow Lite model; this kiln tool was built without that importer (meson "
                         "-Dtflite=enabled, with Debian's libflatbuffers-dev and flatbuffers-compiler)");
#endif
  }
  return onnx::import_file(path, options);
}

}  // namespace kiln::tool
