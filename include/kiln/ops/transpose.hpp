// SPDX-License-Identifier: Apache-2.0
// Transpose: permutes the dimensions of a tensor.
#pragma once

#include <string_view>

#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

/// Transpose (numpy transpose, ONNX Transpose): output dimension i is input dimension permutation[i].
/// An empty permutation reverses the dimensions.
struct Transpose {
  static constexpr std::string_view name = "Transpose";
  static constexpr Arity arity{1, 1};
  struct Params {
    DimVector<std::uint32_t> permutation;
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };

  /// The permutation with the empty default resolved for a tensor of `rank`.
  static constexpr DimVector<std::uint32_t> resolved(const Params& p, std::size_t rank) {
    if (!p.permutation.empty()) return p.permutation;
    DimVector<std::uint32_t> reversed(rank, 0);
    for (std::size_t i = 0; i < rank; ++i) reversed[i] = static_cast<std::uint32_t>(rank - 1 - i);
    return reversed;
  }

  static constexpr Status infer(const Params& p, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    if (auto s = detail::require_fits(p.permutation, "permutation"); !s) return s;
    const std::size_t rank = in[0].rank();
    const auto perm = resolved(p, rank);
    if (perm.size() != rank)
      return detail::invalid("permutation ", detail::list_to_string<std::uint32_t>(perm), " has ", perm.size(),
                             " entries but the input has rank ", rank);
    bool seen[TensorShape::max_rank] = {};
    TensorShape shape;
    for (std::uint32_t axis : perm) {
      if (axis >= rank || seen[axis])
        return detail::invalid("permutation ", detail::list_to_string<std::uint32_t>(perm),
                               " is not a permutation of 0..", rank - 1);
      seen[axis] = true;
      shape.push_back(in[0].shape[axis]);
    }
    out[0] = TensorInfo{shape, in[0].type, in[0].quantization};
    return Status::ok();
  }
};

}  // namespace kiln::ops
