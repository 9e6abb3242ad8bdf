// SPDX-License-Identifier: Apache-2.0
// What every backend's int8 BatchMatMul shares (decision 0014): the checks of its tensors, the
// matrices it pairs, and the integer product of two 8-bit activations requantized to the output.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kiln/backends/mat_mul_geometry.hpp"
#include "kiln/backends/quantized_layer.hpp"

namespace kiln::quantized {

/// int8 BatchMatMul of two activations: acc = sum over p of (a - za)(b - zb), each product under
/// 2^16 in magnitude, so a reduction of K <= max_reduction stays within int32; the output is
/// zy + round(acc x sa sb / sy) (one rounding, ties up), saturated.
class MatMulStage {
 public:
  static Expected<MatMulStage> make(const WorkloadInfo<ops::BatchMatMul>& info) {
    const TensorInfo &a = info.inputs[0], &b = info.inputs[1], &y = info.outputs[0];
    auto m = Requantization::from_real(
        static_cast<double>(a.quantization.scales[0]) * b.quantization.scales[0] / y.quantization.scales[0],
        info.arithmetic);
    if (!m) return m.status();
    MatMulStage stage;
    stage.multiplier_ = *m;
    stage.a_zero_ = a.quantization.offset;
    stage.b_zero_ = b.quantization.offset;
    stage.y_zero_ = y.quantization.offset;
    stage.range_ = OutputRange::of(y, std::nullopt);
    return stage;
  }

  /// Rows [first, first + rows) of output matrix `t`; Byte is the tensors' element type. Columns go
  /// a block at a time with one accumulator each, so that contiguous rows of b vectorise.
  template <class Byte>
  void rows(const Byte* a, const Byte* b, Byte* y, const MatMulGeometry& g, std::size_t t, std::size_t first,
            std::size_t rows) const {
    constexpr std::size_t block = 64;
    const Byte* am = a + g.pairs[t].a;
    const Byte* bm = b + g.pairs[t].b;
    Byte* ym = y + t * g.m * g.n;
    for (std::size_t i = first; i < first + rows; ++i)
      for (std::size_t j0 = 0; j0 < g.n; j0 += block) {
        const std::size_t columns = std::min(block, g.n - j0);
        std::int32_t acc[block] = {};
        for (std::size_t p = 0; p < g.k; ++p) {
          const std::int32_t ap = std::int32_t{am[i * g.a_row + p * g.a_col]} - a_zero_;
          const Byte* bp = bm + p * g.b_row + j0 * g.b_col;
          for (std::size_t j = 0; j < columns; ++j) acc[j] += ap * (std::int32_t{bp[j * g.b_col]} - b_zero_);
        }
        for (std::size_t j = 0; j < columns; ++j)
          ym[i * g.n + j0 + j] = static_cast<Byte>(requantize(acc[j], multiplier_, y_zero_, range_.lo, range_.hi));
      }
  }

  /// The parts, for kernels that run elsewhere.
  const Requantization& multiplier() const noexcept { return multiplier_; }
  std::int32_t a_zero() const noexcept { return a_zero_; }
  std::int32_t b_zero() const noexcept { return b_zero_; }
  std::int32_t y_zero() const noexcept { return y_zero_; }
  std::int32_t lo() const noexcept { return range_.lo; }
  std::int32_t hi() const noexcept { return range_.hi; }

 private:
  Requantization multiplier_;
  std::int32_t a_zero_ = 0, b_zero_ = 0, y_zero_ = 0;
  OutputRange range_;
};

/// Checks an int8 BatchMatMul: both inputs and the output QAsymmU8 or QAsymmS8 of one type, per
/// tensor; K at most max_reduction; a multiplier sa sb / sy below 2^30.
inline Status check_batch_mat_mul(const WorkloadInfo<ops::BatchMatMul>& info) {
  const TensorInfo &a = info.inputs[0], &b = info.inputs[1], &y = info.outputs[0];
  if (auto s = require_activation(a, "input"); !s) return s;
  if (auto s = require_activation(b, "input"); !s) return s;
  if (auto s = require_activation(y, "output"); !s) return s;
  if (a.type != y.type)  // b has a's type (ops::BatchMatMul::infer)
    return Status::error(ErrorCode::Unsupported, "runs int8 BatchMatMul whose inputs and output have one type; ",
                         to_string(a.type), " in, ", to_string(y.type), " out");
  const std::uint64_t k = info.params.transpose_a ? a.shape.dim_from_end(1) : a.shape.dim_from_end(0);
  if (k > max_reduction)
    return Status::error(ErrorCode::Unsupported, "sums at most ", max_reduction,
                         " products per int8 output; BatchMatMul sums ", k);
  return MatMulStage::make(info).status();
}

}  // namespace kiln::quantized
