// SPDX-License-Identifier: Apache-2.0
// `kiln compile`: an ONNX model as one self-contained C++ header that StaticModel runs
// (docs/firmware.md).
#pragma once

#include <string>

#include <kiln/core/status.hpp>
#include <kiln/import/onnx.hpp>

namespace kiln::tool {

struct CompileOptions {
  std::string model_path;
  std::string name_space;      ///< the C++ namespace of the header's declarations
  std::string command;         ///< the command line, recorded in the header's first comment
  bool ops_only_used = false;  ///< also declare `Ops`, the OpSet of the ops the network uses
  onnx::ImportOptions import;  ///< values of the dimensions the model's inputs leave open
};

struct CompiledHeader {
  std::string text;
  std::string summary;  ///< "13 layers for RefBackend, 34 tensors; arena 64000 B (...)"
};

/// The header: the model imported, optimized for RefBackend, planned, and written out.
Expected<CompiledHeader> compile_header(const CompileOptions& options);

}  // namespace kiln::tool
