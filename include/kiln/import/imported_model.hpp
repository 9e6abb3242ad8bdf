// SPDX-License-Identifier: Apache-2.0
// What an importer makes of a model file, whatever its format (ONNX, TensorFlow Lite): the
// Network, its inputs and outputs, and tensors held on the host as files hold them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/core/tensor_info.hpp"
#include "kiln/graph/network.hpp"

namespace kiln {

/// One input or output of an imported model, in the model's own layout (ONNX: NCHW; TensorFlow
/// Lite: NHWC, kiln's own): this is the info to bind data with. Binding ids are the model's input
/// and output positions.
struct ModelTensor {
  std::string name;
  BindingId binding = 0;
  TensorInfo info;
  bool used = true;  ///< false for an input no output depends on: the loaded network has no such binding
};

/// An imported model: the Network (layers named after the model's nodes or operators), its inputs
/// and outputs, and where it came from.
struct ImportedModel {
  Network network;
  std::vector<ModelTensor> inputs;
  std::vector<ModelTensor> outputs;
  std::int64_t opset = 0;                      ///< ONNX: the default-domain opset; TensorFlow Lite: the schema version
  std::string_view opset_name = "ONNX opset";  ///< what `opset` counts, for people to read
  std::string producer;                        ///< "pytorch 1.13.0"; a TensorFlow Lite model's description
  std::size_t num_nodes = 0;                   ///< nodes or operators read (constant-folded ones included)
  std::size_t num_folded = 0;                  ///< of which folded into constants at import
  std::size_t num_unused = 0;                  ///< of which left out: nothing reads their results
};

/// A tensor held on the host with its kiln info, as read from or written to a file.
struct HostTensor {
  std::string name;
  TensorInfo info;
  std::vector<std::byte> data;  ///< info.num_bytes() bytes
};

}  // namespace kiln
