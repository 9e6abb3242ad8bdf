// SPDX-License-Identifier: Apache-2.0
// What every backend's int8 ElementwiseBinary (Add, Sub, Mul) shares (decision 0014): the checks of
// its tensors and the rescaling, made at load, of two inputs of different scales into one output.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kiln/backends/quantized_layer.hpp"
#include "kiln/ops/elementwise_binary.hpp"

namespace kiln::quantized {

/// How int8 Add, Sub and Mul combine inputs a and b (integers qa, qb) into the output:
/// - Add, Sub (TFLite's scheme): each input's (q - z) x 2^20 is rescaled to the common scale
///   2 max(sa, sb) / 2^20 (multipliers sa / 2max and sb / 2max, at most 1/2, so the sum stays
///   within 2^28), the two are added or subtracted, and the sum is requantized by
///   2 max(sa, sb) / (2^20 so);
/// - Mul: (qa - za)(qb - zb), at most 2^16, requantized by sa sb / so.
/// Every rescaling is Requantization::apply (one rounding, ties up); then the output zero point and
/// the clamp (OutputRange: the type's range, narrowed by a fused ReLU-family clamp).
class ElementwiseStage {
 public:
  static constexpr int input_shift = 20;

  static Expected<ElementwiseStage> make(const WorkloadInfo<ops::ElementwiseBinary>& info) {
    const TensorInfo &a = info.inputs[0], &b = info.inputs[1], &y = info.outputs[0];
    const double sa = a.quantization.scales[0], sb = b.quantization.scales[0], sy = y.quantization.scales[0];
    ElementwiseStage stage;
    stage.operation_ = info.params.operation;
    stage.a_zero_ = a.quantization.offset;
    stage.b_zero_ = b.quantization.offset;
    stage.y_zero_ = y.quantization.offset;
    stage.range_ = OutputRange::of(y, info.params.activation, info.arithmetic);
    double output_multiplier = sa * sb / sy;
    if (stage.operation_ != ops::BinaryOperation::Mul) {
      const double twice_max = 2 * std::max(sa, sb);
      auto ma = Requantization::from_real(sa / twice_max, info.arithmetic);
      if (!ma) return ma.status();
      auto mb = Requantization::from_real(sb / twice_max, info.arithmetic);
      if (!mb) return mb.status();
      stage.a_multiplier_ = *ma;
      stage.b_multiplier_ = *mb;
      output_multiplier = twice_max / (static_cast<double>(1 << input_shift) * sy);
    }
    auto m = Requantization::from_real(output_multiplier, info.arithmetic);
    if (!m) return m.status();
    stage.output_multiplier_ = *m;
    return stage;
  }

  /// The output for input integers qa and qb.
  std::int32_t operator()(std::int32_t qa, std::int32_t qb) const { return combine(rescaled_a(qa), rescaled_b(qb)); }
  /// Input a's integer as the sum or product takes it: less its zero point, and for Add and Sub
  /// rescaled to the common scale. Each input's part is a function of that input alone, so a
  /// kernel can make it once per input value.
  std::int32_t rescaled_a(std::int32_t qa) const { return rescaled(qa - a_zero_, a_multiplier_); }
  std::int32_t rescaled_b(std::int32_t qb) const { return rescaled(qb - b_zero_, b_multiplier_); }
  /// The output for two rescaled inputs: their sum, difference or product, requantized.
  std::int32_t combine(std::int32_t ra, std::int32_t rb) const {
    const std::int32_t combined = operation_ == ops::BinaryOperation::Mul   ? ra * rb
                                  : operation_ == ops::BinaryOperation::Add ? ra + rb
                                                                            : ra - rb;
    return requantize(combined, output_multiplier_, y_zero_, range_.lo, range_.hi);
  }

  /// The parts, for kernels.
  ops::BinaryOperation operation() const noexcept { return operation_; }
  std::int32_t a_zero() const noexcept { return a_zero_; }
  std::int32_t b_zero() const noexcept { return b_zero_; }
  std::int32_t y_zero() const noexcept { return y_zero_; }
  const Requantization& a_multiplier() const noexcept { return a_multiplier_; }
  const Requantization& b_multiplier() const noexcept { return b_multiplier_; }
  const Requantization& output_multiplier() const noexcept { return output_multiplier_; }
  const OutputRange& range() const noexcept { return range_; }

 private:
  ops::BinaryOperation operation_ = ops::BinaryOperation::Add;
  std::int32_t a_zero_ = 0, b_zero_ = 0, y_zero_ = 0;
  Requantization a_multiplier_, b_multiplier_, output_multiplier_;
  OutputRange range_;

  std::int32_t rescaled(std::int32_t difference, const Requantization& multiplier) const {
    return operation_ == ops::BinaryOperation::Mul ? difference : multiplier.apply(difference * (1 << input_shift));
  }
};

/// Checks an int8 ElementwiseBinary: Add, Sub or Mul; both inputs and the output QAsymmU8 or
/// QAsymmS8 of one type, per tensor; a fused activation that is a ReLU-family clamp; multipliers
/// below 2^30.
inline Status check_elementwise(const WorkloadInfo<ops::ElementwiseBinary>& info) {
  using O = ops::BinaryOperation;
  const O op = info.params.operation;
  if (op != O::Add && op != O::Sub && op != O::Mul)
    return Status::error(ErrorCode::Unsupported, "runs int8 Add, Sub and Mul only; ", ops::to_string(op),
                         " runs in Float32 behind a Dequantize");
  const TensorInfo &a = info.inputs[0], &b = info.inputs[1], &y = info.outputs[0];
  if (auto s = require_activation(a, "input"); !s) return s;
  if (auto s = require_activation(b, "input"); !s) return s;
  if (auto s = require_activation(y, "output"); !s) return s;
  if (a.type != y.type || b.type != y.type)
    return Status::error(ErrorCode::Unsupported, "runs int8 ", ops::to_string(op),
                         " whose inputs and output have one type; ", to_string(a.type), " and ", to_string(b.type),
                         " in, ", to_string(y.type), " out");
  if (auto s = require_clamp(info.params.activation); !s) return s;
  return ElementwiseStage::make(info).status();
}

}  // namespace kiln::quantized
