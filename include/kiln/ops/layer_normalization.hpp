// SPDX-License-Identifier: Apache-2.0
// LayerNormalization: each row of the trailing dimensions normalised to mean 0 and variance 1,
// then scaled and shifted.
#pragma once

#include <string_view>

#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

/// Layer normalisation (ONNX LayerNormalization, opset 17; PyTorch's nn.LayerNorm; Arm NN has none).
///
/// Inputs: x, scale, and optionally bias. The dimensions of x from `axis` on (negative counts from
/// the end) form one row of N elements each; per row,
/// y = (x - mean) / sqrt(variance + epsilon) * scale + bias, with the mean and the (biased)
/// variance of the row. scale and bias hold one value per element of a row: their shape is that
/// of x's dimensions from `axis` on, with leading dimensions of 1 allowed. With `statistics`, two
/// more outputs hold each row's mean and 1 / sqrt(variance + epsilon) (ONNX's optional Mean and
/// InvStdDev), shaped as x with the row's dimensions 1, in x's type.
struct LayerNormalization {
  static constexpr std::string_view name = "LayerNormalization";
  static constexpr Arity arity{2, 3};
  struct Params {
    std::int64_t axis = -1;
    float epsilon = 1e-5f;
    bool statistics = false;
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };

  static constexpr std::size_t num_outputs(const Params& p) { return p.statistics ? 3 : 1; }

  /// The first dimension of a row, for x of rank `rank`.
  static constexpr Expected<std::size_t> first_row_dimension(const Params& p, std::size_t rank) {
    return detail::normalize_axis(p.axis, rank);
  }

  static constexpr Status infer(const Params& p, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    if (in[0].rank() == 0) return detail::invalid("layer normalisation needs an input of rank 1 or more");
    if (!(p.epsilon >= 0.0f)) return detail::invalid("epsilon must be >= 0, got ", p.epsilon);
    auto axis = first_row_dimension(p, in[0].rank());
    if (!axis) return axis.status();
    const TensorShape& xs = in[0].shape;
    constexpr std::string_view roles[] = {"", "scale", "bias"};
    for (std::size_t i = 1; i < in.size(); ++i) {
      if (auto s = detail::expect_same_type(in, 0, i); !s) return s;
      const TensorShape& s = in[i].shape;
      bool fits = s.rank() <= xs.rank();
      for (std::size_t d = 0; fits && d < s.rank(); ++d) {
        const std::size_t xd = xs.rank() - s.rank() + d;
        fits = xd >= *axis ? s[d] == xs[xd] : s[d] == 1;
      }
      if (!fits || s.num_elements() != xs.num_elements(*axis, xs.rank()))
        return detail::invalid("input ", i, " (", roles[i], ") has shape ", s.to_string(),
                               "; it needs x's dimensions from axis ", *axis, " on, ",
                               TensorShape(xs.dims().subspan(*axis)).to_string());
    }
    out[0] = TensorInfo{xs, in[0].type, in[0].quantization};
    if (p.statistics) {
      TensorShape per_row = xs;
      for (std::size_t d = *axis; d < xs.rank(); ++d) per_row[d] = 1;
      out[1] = out[2] = TensorInfo{per_row, in[0].type, {}};
    }
    return Status::ok();
  }
};

}  // namespace kiln::ops
