// SPDX-License-Identifier: Apache-2.0
// StridedSlice: takes every stride-th element between begin and end along chosen axes (also Slice).
#pragma once

#include <algorithm>
#include <string_view>

#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

/// Strided slice with ONNX Slice semantics (opset 13): for each listed axis, indices
/// begin, begin + stride, ... up to but excluding end. Negative begin/end count from the end and
/// are then clamped to the dimension ([0, dim] for positive strides, [-1, dim - 1] for negative),
/// so out-of-range values are allowed. Axes not listed are taken whole. An empty `axes` means
/// 0, 1, ..., begin.size() - 1. Slice is a StridedSlice with unit strides.
struct StridedSlice {
  static constexpr std::string_view name = "StridedSlice";
  static constexpr Arity arity{1, 1};
  struct Params {
    DimVector<std::int64_t> begin;
    DimVector<std::int64_t> end;
    DimVector<std::int64_t> strides;  ///< empty means all 1
    DimVector<std::int64_t> axes;     ///< empty means the leading axes
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };

  /// Start, step and count of the selected indices along every dimension of the input.
  struct Window {
    std::int64_t start[TensorShape::max_rank];
    std::int64_t step[TensorShape::max_rank];
    std::uint32_t count[TensorShape::max_rank];
  };

  static constexpr Expected<Window> resolve(const Params& p, const TensorShape& shape) {
    Window w{};
    for (std::size_t d = 0; d < shape.rank(); ++d) {
      w.start[d] = 0;
      w.step[d] = 1;
      w.count[d] = shape[d];
    }
    if (auto s = detail::require_fits(p.begin, "begin"); !s) return s;
    if (auto s = detail::require_fits(p.end, "end"); !s) return s;
    if (auto s = detail::require_fits(p.strides, "strides"); !s) return s;
    if (auto s = detail::require_fits(p.axes, "axes"); !s) return s;
    if (p.end.size() != p.begin.size())
      return detail::invalid("begin has ", p.begin.size(), " entries but end has ", p.end.size());
    if (!p.strides.empty() && p.strides.size() != p.begin.size())
      return detail::invalid("strides has ", p.strides.size(), " entries but begin has ", p.begin.size());
    if (!p.axes.empty() && p.axes.size() != p.begin.size())
      return detail::invalid("axes has ", p.axes.size(), " entries but begin has ", p.begin.size());
    bool seen[TensorShape::max_rank] = {};
    for (std::size_t i = 0; i < p.begin.size(); ++i) {
      auto axis = detail::normalize_axis(p.axes.empty() ? static_cast<std::int64_t>(i) : p.axes[i], shape.rank());
      if (!axis) return axis.status();
      if (seen[*axis]) return detail::invalid("axis ", *axis, " is sliced twice");
      seen[*axis] = true;
      const std::int64_t dim = shape[*axis];
      const std::int64_t step = p.strides.empty() ? 1 : p.strides[i];
      if (step == 0) return detail::invalid("stride for axis ", *axis, " is zero");
      auto wrap = [dim](std::int64_t index) { return index < 0 ? index + dim : index; };
      std::int64_t begin = wrap(std::clamp<std::int64_t>(p.begin[i], -dim - 1, dim + 1));
      std::int64_t end = wrap(std::clamp<std::int64_t>(p.end[i], -dim - 1, dim + 1));
      std::int64_t count = 0;
      if (step > 0) {
        begin = std::clamp<std::int64_t>(begin, 0, dim);
        end = std::clamp<std::int64_t>(end, 0, dim);
        count = end > begin ? (end - begin + step - 1) / step : 0;
      } else {
        begin = std::clamp<std::int64_t>(begin, -1, dim - 1);
        end = std::clamp<std::int64_t>(end, -1, dim - 1);
        count = begin > end ? (begin - end + (-step) - 1) / (-step) : 0;
      }
      w.start[*axis] = begin;
      w.step[*axis] = step;
      w.count[*axis] = static_cast<std::uint32_t>(count);
    }
    return w;
  }

  static constexpr Status infer(const Params& p, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    auto window = resolve(p, in[0].shape);
    if (!window) return window.status();
    TensorShape shape = in[0].shape;
    for (std::size_t d = 0; d < shape.rank(); ++d) shape[d] = window->count[d];
    out[0] = TensorInfo{shape, in[0].type, in[0].quantization};
    return Status::ok();
  }
};

}  // namespace kiln::ops
