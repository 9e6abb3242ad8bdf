// SPDX-License-Identifier: Apache-2.0
// The ONNX importer: a .onnx model file (or its bytes) turned into a kiln Network.
//
// Unlike the rest of kiln this part is a compiled library, libkiln_onnx (Meson: the `kiln_onnx`
// dependency, built when libprotobuf-dev and libonnx-dev are present), so that the header-only core
// never sees protobuf. This header names no protobuf type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/status.hpp"
#include "kiln/core/tensor_info.hpp"
#include "kiln/import/imported_model.hpp"

namespace kiln::onnx {

// What the importer makes (kiln/import/imported_model.hpp): an ImportedModel's inputs and outputs
// are in ONNX's layout (NCHW) and its opset is the default domain's the model was exported with.
using kiln::HostTensor;
using kiln::ImportedModel;
using kiln::ModelTensor;

/// ONNX's uint8 and int8 tensors where they meet the user (graph inputs, tensor files) are kiln
/// QAsymmU8 and QAsymmS8 with this quantisation: scale 1 and zero point 0, the integers themselves.
/// A quantising node reading one (DequantizeLinear, QLinearConv...) gives the integers their scale.
inline QuantizationInfo raw_integers() { return QuantizationInfo{{1.0f}, 0, {}}; }

struct ImportOptions {
  /// Graph inputs to treat as constants with these values (the model's input list loses them).
  /// For inputs that set shapes (Reshape's shape, Resize's sizes, Slice's starts...), which kiln,
  /// planning memory at load, needs to know at import.
  std::vector<HostTensor> constant_inputs;
  /// Values of the named (symbolic) dimensions of graph inputs, {"batch", 1}, {"sequence", 32}:
  /// ONNX Runtime's free-dimension overrides by name. kiln plans memory at load, so every
  /// dimension of an input needs a value; a name no input has is an error.
  std::map<std::string, std::int64_t, std::less<>> dimensions;
  /// Whole shapes of graph inputs by input name, for dynamic dimensions with no name (or instead
  /// of naming each); a dimension the model fixes must keep its value.
  std::map<std::string, std::vector<std::int64_t>, std::less<>> input_shapes;
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
