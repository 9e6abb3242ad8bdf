// SPDX-License-Identifier: Apache-2.0
// Reshape: the same elements in row-major order under a new shape (also Squeeze, ExpandDims, Flatten).
#pragma once

#include <string_view>

#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

/// Reshape (Arm NN ReshapeLayer, ONNX Reshape with allowzero = 0).
///
/// `shape` may hold one -1, inferred from the element count, and 0, which copies the input's
/// dimension at the same position. Squeeze, ExpandDims and Flatten are reshapes with computed shapes.
struct Reshape {
  static constexpr std::string_view name = "Reshape";
  static constexpr Arity arity{1, 1};
  struct Params {
    DimVector<std::int64_t> shape;
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };

  static constexpr Status infer(const Params& p, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    if (auto s = detail::require_fits(p.shape, "target shape"); !s) return s;
    TensorShape shape;
    std::uint64_t known = 1;
    std::size_t inferred = p.shape.size();
    for (std::size_t i = 0; i < p.shape.size(); ++i) {
      std::int64_t dim = p.shape[i];
      if (dim == 0) {
        if (i >= in[0].rank())
          return detail::invalid("target dimension ", i, " is 0 but the input has no dimension ", i);
        dim = in[0].shape[i];
      }
      if (dim == -1) {
        if (inferred != p.shape.size()) return detail::invalid("target shape has more than one -1");
        inferred = i;
        dim = 1;
      } else if (dim < 0 || dim > std::int64_t{0xffffffff}) {
        return detail::invalid("target dimension ", i, " is ", p.shape[i]);
      }
      shape.push_back(static_cast<std::uint32_t>(dim));
      if (!shape.valid()) return detail::invalid("target shape has too many elements");
      known *= static_cast<std::uint64_t>(dim);
    }
    const std::uint64_t count = in[0].num_elements();
    if (inferred != p.shape.size()) {
      if (known == 0 || count % known != 0)
        return detail::invalid("cannot infer the -1 in ", detail::list_to_string<std::int64_t>(p.shape), " for ", count,
                               " elements");
      shape[inferred] = static_cast<std::uint32_t>(count / known);
    }
    if (shape.num_elements() != count)
      return detail::invalid("cannot reshape ", in[0].shape.to_string(), " (", count, " elements) to ",
                             shape.to_string(), " (", shape.num_elements(), " elements)");
    out[0] = TensorInfo{shape, in[0].type, in[0].quantization};
    return Status::ok();
  }
};

}  // namespace kiln::ops
