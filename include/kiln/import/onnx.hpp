// SPDX-License-Identifier: Apache-2.0
// The ONNX importer: a .onnx model file (or its bytes) turned into a kiln Network.
//
// Unlike the rest of kiln this part is a compiled library, libkiln_onnx (Meson: the `kiln_onnx`
// dependency, built when libprotobuf-dev and libonnx-dev are present), so that the header-only core
// never sees protobuf. This header names no protobuf type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/status.hpp"
#include "kiln/core/tensor_info.hpp"
#include "kiln/graph/network.hpp"

namespace kiln::onnx {

/// One input or output of an imported model, in the model's own (ONNX, NCHW) layout: this is the
/// info to bind data with. Binding ids are the model's input and output positions.
struct ModelTensor {
  std::string name;
  BindingId binding = 0;
  TensorInfo info;
  bool used = true;  ///< false for an input no output depends on: the loaded network has no such binding
};

/// What import() makes of a model: the Network (layers named after the ONNX nodes; kiln's
/// channels-last layout inside, converted once at the model's edges and in the constant weights),
/// its inputs and outputs, and where it came from.
struct ImportedModel {
  Network network;
  std::vector<ModelTensor> inputs;
  std::vector<ModelTensor> outputs;
  std::int64_t opset = 0;      ///< the default-domain opset the model was exported with
  std::string producer;        ///< "pytorch 1.13.0", ...
  std::size_t num_nodes = 0;   ///< ONNX nodes read (constant-folded ones included)
  std::size_t num_folded = 0;  ///< of which folded into constants at import
};

/// ONNX's uint8 and int8 tensors where they meet the user (graph inputs, tensor files) are kiln
/// QAsymmU8 and QAsymmS8 with this quantisation: scale 1 and zero point 0, the integers themselves.
/// A quantising node reading one (DequantizeLinear, QLinearConv...) gives the integers their scale.
inline QuantizationInfo raw_integers() { return QuantizationInfo{{1.0f}, 0, {}}; }

/// A tensor held on the host with its kiln info, as read from or written to a file.
struct HostTensor {
  std::string name;
  TensorInfo info;
  std::vector<std::byte> data;  ///< info.num_bytes() bytes
};

struct ImportOptions {
  /// Graph inputs to treat as constants with these values (the model's input list loses them).
  /// For inputs that set shapes (Reshape's shape, Resize's sizes, Slice's starts...), which kiln,
  /// planning memory at load, needs to know at import.
  std::vector<HostTensor> constant_inputs;
};

/// Reads a model from its serialized bytes. Every failure is a Status: a file that is not a model,
/// an op, attribute value or data type kiln does not run (naming the node and op), a dynamic shape.
Expected<ImportedModel> import_model(std::span<const std::byte> bytes, const ImportOptions& options = {});
/// Reads a model from a .onnx file (external data files are not supported).
Expected<ImportedModel> import_file(const std::string& path, const ImportOptions& options = {});

/// The opsets of the default ONNX domain the importer reads. Opsets 7 to 18 are the target; the
/// older ones read too, with their legacy broadcasting and attributes (the PyTorch-converted
/// test models use opset 6).
inline constexpr std::int64_t min_opset = 1;
inline constexpr std::int64_t max_opset = 18;

/// Every ONNX op the importer reads, sorted.
std::span<const std::string_view> supported_ops();

/// Reads a serialized ONNX TensorProto (the .pb files of the ONNX test data). int64 and int32
/// become Signed32 (an error when a value does not fit), uint8 and int8 QAsymmU8 and QAsymmS8 with
/// raw_integers(), bool Boolean, float and double Float32.
Expected<HostTensor> read_tensor_proto(std::span<const std::byte> bytes);
/// Reads a tensor from a file: a TensorProto (.pb) or a NumPy array (.npy), by extension.
Expected<HostTensor> read_tensor_file(const std::string& path);
/// Writes a tensor as a TensorProto (.pb) or NumPy array (.npy), by extension; 8-bit quantised
/// tensors are written as their integers (uint8, int8), without their quantisation.
Status write_tensor_file(const std::string& path, const HostTensor& tensor);

/// One case of the ONNX test data layout: DIR/input_0.pb, input_1.pb, ... and output_0.pb, ...
struct TestDataSet {
  std::vector<HostTensor> inputs;
  std::vector<HostTensor> outputs;
};
Expected<TestDataSet> read_test_data_set(const std::string& dir);

/// How far `actual` is from `expected` (same info): numpy.allclose's test per element,
/// |actual - expected| <= atol + rtol * |expected|, with NaN equal to NaN.
struct Comparison {
  double max_abs_error = 0.0;
  double max_rel_error = 0.0;
  std::uint64_t mismatches = 0;  ///< elements outside the tolerance; every one when the infos differ
  bool same_info = true;
  bool passed() const { return same_info && mismatches == 0; }
};
Comparison compare(const HostTensor& actual, const HostTensor& expected, double rtol, double atol);

}  // namespace kiln::onnx
