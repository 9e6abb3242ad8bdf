// SPDX-License-Identifier: Apache-2.0
// Reduce: sum, mean, max, min or product over a set of axes.
#pragma once

#include <string_view>

#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

enum class ReduceOperation : std::uint8_t { Sum, Mean, Max, Min, Prod };

/// Reduction (ONNX ReduceSum/ReduceMean/ReduceMax/ReduceMin/ReduceProd, TFLite SUM/MEAN/REDUCE_MAX/REDUCE_MIN/
/// REDUCE_PROD).
/// `axes` (negative count from the end) are reduced; empty reduces every axis. With keep_dims the
/// reduced axes stay as size 1. Max and min of an empty axis are rejected (no identity exists).
struct Reduce {
  static constexpr std::string_view name = "Reduce";
  static constexpr Arity arity{1, 1};
  struct Params {
    ReduceOperation operation = ReduceOperation::Sum;
    DimVector<std::int64_t> axes;
    bool keep_dims = true;
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };

  /// Which input dimensions are reduced, or why `axes` is invalid.
  struct AxisMask {
    bool reduced[TensorShape::max_rank];
  };
  static constexpr Expected<AxisMask> reduced_axes(const Params& p, std::size_t rank) {
    if (auto s = detail::require_fits(p.axes, "axes"); !s) return s;
    AxisMask mask{};
    for (std::size_t d = 0; d < rank; ++d) mask.reduced[d] = p.axes.empty();
    for (auto axis : p.axes) {
      auto d = detail::normalize_axis(axis, rank);
      if (!d) return d.status();
      if (mask.reduced[*d]) return detail::invalid("axis ", axis, " is listed twice");
      mask.reduced[*d] = true;
    }
    return mask;
  }
  /// How many input elements each output of input shape `x` folds (axes already checked).
  static constexpr std::uint64_t reduced_count(const Params& p, const TensorShape& x) {
    const AxisMask mask = *reduced_axes(p, x.rank());
    std::uint64_t count = 1;
    for (std::size_t d = 0; d < x.rank(); ++d)
      if (mask.reduced[d]) count *= x[d];
    return count;
  }

  static constexpr Status infer(const Params& p, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    auto mask = reduced_axes(p, in[0].rank());
    if (!mask) return mask.status();
    TensorShape shape;
    for (std::size_t d = 0; d < in[0].rank(); ++d) {
      if (mask->reduced[d] && in[0].shape[d] == 0 &&
          (p.operation == ReduceOperation::Max || p.operation == ReduceOperation::Min ||
           p.operation == ReduceOperation::Mean))
        return detail::invalid("cannot reduce the empty dimension ", d, " with this operation");
      if (!mask->reduced[d])
        shape.push_back(in[0].shape[d]);
      else if (p.keep_dims)
        shape.push_back(1);
    }
    out[0] = TensorInfo{shape, in[0].type, in[0].quantization};
    return Status::ok();
  }
};

}  // namespace kiln::ops
