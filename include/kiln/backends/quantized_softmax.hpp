// SPDX-License-Identifier: Apache-2.0
// What every backend's int8 Softmax shares (decision 0014): the checks of its tensors, and the
// stage, made at load, that turns a row of 8-bit inputs into 8-bit probabilities in integers only.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

#include "kiln/backends/quantized_layer.hpp"
#include "kiln/ops/softmax.hpp"

namespace kiln::quantized {

/// int8 Softmax in integers, the same on every backend. Within a row, exp(beta sx (q - max q))
/// depends only on the distance d = max q - q, which lies in [0, 255]: the stage holds
/// E[d] = round(2^22 exp(-beta sx d)) for the 256 distances, made at load in double precision.
/// A row's sum S = sum E[d_j] is exact in 64 bits; element j's probability in fixed point is
/// P_j = floor(E[d_j] 2^30 / S) in [0, 2^30], and its output zo + round(P_j 2^-30 / sy) through
/// the one requantization rule (ties up, saturated). Against the Float32 definition
/// (ONNX Runtime's DequantizeLinear -> Softmax -> QuantizeLinear) each entry's rounding (half a unit
/// of 2^-22, the largest entry being 2^22) moves a probability of a row of n by at most
/// (n + 1) 2^-23, so an output changes only where the exact value lies that close to a rounding
/// tie: 0.03 output units for 1,000 classes at scale 1/256.
class SoftmaxStage {
 public:
  static constexpr int exponential_bits = 22;
  static constexpr int probability_bits = 30;

  static Expected<SoftmaxStage> make(const WorkloadInfo<ops::Softmax>& info) {
    const TensorInfo &x = info.inputs[0], &y = info.outputs[0];
    SoftmaxStage stage;
    const double step = static_cast<double>(info.params.beta) * x.quantization.scales[0];
    for (std::size_t d = 0; d < stage.exponentials_.size(); ++d)
      stage.exponentials_[d] = static_cast<std::uint32_t>(
          std::llround(std::ldexp(std::exp(-step * static_cast<double>(d)), exponential_bits)));
    auto m = Requantization::from_real(std::ldexp(1.0, -probability_bits) / y.quantization.scales[0], info.arithmetic);
    if (!m) return m.status();
    stage.to_output_ = *m;
    stage.zero_point_ = y.quantization.offset;
    stage.range_ = OutputRange::of(y, std::nullopt);
    return stage;
  }

  /// Softmax of the row of `length` elements `stride` apart at x, written likewise at y; Byte is
  /// the element type of the tensors (element_type_t).
  template <class Byte>
  void row(const Byte* x, Byte* y, std::size_t length, std::size_t stride) const {
    if (length == 0) return;
    std::int32_t largest = x[0];
    for (std::size_t j = 1; j < length; ++j) largest = std::max<std::int32_t>(largest, x[j * stride]);
    std::uint64_t sum = 0;
    for (std::size_t j = 0; j < length; ++j) sum += exponentials_[static_cast<std::size_t>(largest - x[j * stride])];
    for (std::size_t j = 0; j < length; ++j)
      y[j * stride] = static_cast<Byte>(output(exponentials_[static_cast<std::size_t>(largest - x[j * stride])], sum));
  }

  /// The output for an element whose exponential is `exponential` in a row whose exponentials sum
  /// to `sum` (at least 2^22: the largest element's own).
  std::int32_t output(std::uint32_t exponential, std::uint64_t sum) const {
    const auto probability =
        static_cast<std::int32_t>((std::uint64_t{exponential} << probability_bits) / sum);  // <= 2^30
    return requantize(probability, to_output_, zero_point_, range_.lo, range_.hi);
  }

  /// The parts, for kernels that run rows elsewhere.
  const std::array<std::uint32_t, 256>& exponentials() const noexcept { return exponentials_; }
  const Requantization& to_output() const noexcept { return to_output_; }
  std::int32_t zero_point() const noexcept { return zero_point_; }
  std::int32_t lo() const noexcept { return range_.lo; }
  std::int32_t hi() const noexcept { return range_.hi; }

 private:
  std::array<std::uint32_t, 256> exponentials_{};
  Requantization to_output_;
  std::int32_t zero_point_ = 0;
  OutputRange range_;
};

/// The rows of a Softmax along `axis` of `shape`: count = outer x inner rows of `length` elements
/// `inner` apart, row r starting at element (r / inner) x length x inner + r % inner.
struct SoftmaxRows {
  std::uint64_t count = 0, length = 0, inner = 1;
  static SoftmaxRows of(const TensorShape& shape, std::int64_t axis) {
    const std::size_t a = *kiln::detail::normalize_axis(axis, shape.rank());
    const std::uint64_t inner = shape.num_elements(a + 1, shape.rank());
    return {shape.num_elements(0, a) * inner, shape[a], inner};
  }
  std::uint64_t start(std::uint64_t row) const noexcept { return row / inner * length * inner + row % inner; }
};

/// Checks an int8 Softmax: input and output QAsymmU8 or QAsymmS8 of one type, per tensor; a
/// positive beta; not LogSoftmax (whose outputs are not probabilities: it stays Float32).
inline Status check_softmax(const WorkloadInfo<ops::Softmax>& info) {
  const TensorInfo &x = info.inputs[0], &y = info.outputs[0];
  if (auto s = require_activation(x, "input"); !s) return s;
  if (auto s = require_activation(y, "output"); !s) return s;
  if (x.type != y.type)
    return Status::error(ErrorCode::Unsupported, "runs int8 Softmax whose input and output have one type; ",
                         to_string(x.type), " in, ", to_string(y.type), " out");
  if (info.params.log) return Status::error(ErrorCode::Unsupported, "runs LogSoftmax in Float32 only");
  if (!(info.params.beta > 0.0f) || !std::isfinite(info.params.beta))
    return Status::error(ErrorCode::Unsupported, "runs int8 Softmax with a positive finite beta; beta is ",
                         info.params.beta);
  return SoftmaxStage::make(info).status();
}

}  // namespace kiln::quantized
