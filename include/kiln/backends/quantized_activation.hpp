// SPDX-License-Identifier: Apache-2.0
// What every backend's int8 Activation shares (decision 0014): the checks of its tensors, and the
// table, made at load, of the output byte for each of the 256 input bytes.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>

#include "kiln/backends/quantized_layer.hpp"
#include "kiln/backends/tflite_recipes.hpp"
#include "kiln/ops/activation.hpp"

namespace kiln::quantized {

/// Checks an int8 Activation: input and output QAsymmU8 or QAsymmS8 of one type, per tensor.
inline Status check_activation(const WorkloadInfo<ops::Activation>& info) {
  const TensorInfo &x = info.inputs[0], &y = info.outputs[0];
  if (auto s = require_activation(x, "input"); !s) return s;
  if (auto s = require_activation(y, "output"); !s) return s;
  if (x.type != y.type)
    return Status::error(ErrorCode::Unsupported, "runs int8 Activation whose input and output have one type; ",
                         to_string(x.type), " in, ", to_string(y.type), " out");
  return Status::ok();
}

/// An int8 Activation as a table: an 8-bit output is a function of one 8-bit input, so entry b
/// holds, for the input byte b (read as the type's integer), exactly what Dequantize -> the
/// Float32 function (ops::Activation::apply) -> Quantize gives — the QDQ definition, whatever the
/// function (ReLU family, Sigmoid, Tanh, HardSwish, GELU, ...); in TensorFlow Lite's arithmetic, its
/// fixed-point recipe for the functions that have one (tflite_recipes::activation). Every backend
/// looks bytes up in the same table, so all are bit-exact with RefBackend by construction.
class ActivationTable {
 public:
  ActivationTable() = default;
  explicit ActivationTable(const WorkloadInfo<ops::Activation>& info) {
    const TensorInfo &x = info.inputs[0], &y = info.outputs[0];
    const bool is_unsigned = x.type == DataType::QAsymmU8;
    const float sx = x.quantization.scales[0], sy = y.quantization.scales[0];
    const std::int32_t zx = x.quantization.offset, zy = y.quantization.offset;
    const QuantizedRange range = quantized_range(y.type);
    for (int byte = 0; byte < 256; ++byte) {
      const std::int32_t q = is_unsigned ? byte : static_cast<std::int8_t>(static_cast<std::uint8_t>(byte));
      std::optional<std::int32_t> out;
      if (info.arithmetic == QuantizedArithmetic::TfLite)
        out = tflite_recipes::activation(info.params, q, sx, zx, sy, zy);
      if (out)
        out = std::clamp(*out, range.lo, range.hi);
      else
        out = quantize(ops::Activation::apply(info.params, dequantize(q, sx, zx)), sy, zy, range);
      bytes_[static_cast<std::size_t>(byte)] = static_cast<std::uint8_t>(*out);
    }
  }

  std::uint8_t operator[](std::uint8_t byte) const noexcept { return bytes_[byte]; }
  const std::array<std::uint8_t, 256>& bytes() const noexcept { return bytes_; }

 private:
  std::array<std::uint8_t, 256> bytes_{};
};

}  // namespace kiln::quantized
