// SPDX-License-Identifier: Apache-2.0
// Gather: picks slices of a tensor along one axis by index (embedding lookups, channel shuffles).
#pragma once

#include <string_view>

#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

/// Gather (ONNX Gather, TFLite GATHER). Inputs: data, indices (Signed32; negative counts from the
/// end of the axis). Output shape: data[:axis] + indices + data[axis + 1:]. An index outside
/// [-dim, dim) is an error at execution, never a read out of bounds.
struct Gather {
  static constexpr std::string_view name = "Gather";
  static constexpr Arity arity{2, 2};
  struct Params {
    std::int64_t axis = 0;
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };

  static constexpr Status infer(const Params& p, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    auto axis = detail::normalize_axis(p.axis, in[0].rank());
    if (!axis) return axis.status();
    if (auto s = detail::expect_indices(in, 1); !s) return s;
    TensorShape shape;
    for (std::size_t d = 0; d < *axis; ++d) shape.push_back(in[0].shape[d]);
    for (auto d : in[1].shape.dims()) shape.push_back(d);
    for (std::size_t d = *axis + 1; d < in[0].rank(); ++d) shape.push_back(in[0].shape[d]);
    if (!shape.valid()) return detail::invalid("output ", shape.rank(), " dimensions exceed the maximum rank");
    out[0] = TensorInfo{shape, in[0].type, in[0].quantization};
    return Status::ok();
  }
};

}  // namespace kiln::ops
