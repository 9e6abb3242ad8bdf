// SPDX-License-Identifier: Apache-2.0
// ArgMinMax: the index of the largest or smallest element along an axis.
#pragma once

#include <string_view>

#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

enum class ArgFunction : std::uint8_t { Max, Min };

/// Index of the largest (or smallest) element along `axis` (Arm NN ArgMinMaxLayer; ONNX ArgMax,
/// ArgMin; TFLite ARG_MAX, ARG_MIN). Ties go to the first index, or the last with
/// `select_last_index`; a NaN is the extreme either way, as in numpy's argmax and argmin. The output
/// is Signed32: the input's shape with the axis removed, or kept as 1.
struct ArgMinMax {
  static constexpr std::string_view name = "ArgMinMax";
  static constexpr Arity arity{1, 1};
  struct Params {
    ArgFunction function = ArgFunction::Max;
    std::int64_t axis = 0;
    bool keep_dims = true;
    bool select_last_index = false;
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };

  static constexpr Status infer(const Params& p, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    auto axis = detail::normalize_axis(p.axis, in[0].rank());
    if (!axis) return axis.status();
    if (in[0].shape[*axis] == 0) return detail::invalid("the axis ", *axis, " is empty: it has no extreme element");
    TensorShape shape;
    for (std::size_t d = 0; d < in[0].rank(); ++d)
      if (d != *axis)
        shape.push_back(in[0].shape[d]);
      else if (p.keep_dims)
        shape.push_back(1);
    out[0] = TensorInfo{shape, DataType::Signed32, {}};
    return Status::ok();
  }
};

}  // namespace kiln::ops
