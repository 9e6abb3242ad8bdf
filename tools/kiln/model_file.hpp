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

inline Expected<ImportedModel> import_model_file(const std::string& path) {
  if (path.ends_with(".tflite")) {
#if KILN_HAS_TFLITE
    return tflite::import_file(path);
#else
    return Status::error(ErrorCode::Unsupported, "'", path,
                         "' is a TensorFlow Lite model; this kiln tool was built without that importer (meson "
                         "-Dtflite=enabled, with Debian's libflatbuffers-dev and flatbuffers-compiler)");
#endif
  }
  return onnx::import_file(path);
}

}  // namespace kiln::tool
