// SPDX-License-Identifier: Apache-2.0
// Pad: adds borders around a tensor, filled with a constant or mirrored from the inside.
#pragma once

#include <string_view>

#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

enum class PadMode : std::uint8_t {
  Constant,   ///< fill with `value`
  Reflect,    ///< mirror without repeating the edge: [1 2 3] -> 3 2 | 1 2 3 | 2 1 (numpy "reflect")
  Symmetric,  ///< mirror repeating the edge: [1 2 3] -> 2 1 | 1 2 3 | 3 2 (numpy "symmetric")
  Edge,       ///< repeat the edge value (numpy "edge", ONNX "edge")
};

/// Pad (ONNX Pad, TFLite PAD/PADV2/MIRROR_PAD). `before[d]` and `after[d]` elements are added on
/// either side of dimension d; empty lists mean no padding. Reflect needs pads < dim, Symmetric
/// pads <= dim, Edge a non-empty dimension.
struct Pad {
  static constexpr std::string_view name = "Pad";
  static constexpr Arity arity{1, 1};
  struct Params {
    DimVector<std::uint32_t> before;
    DimVector<std::uint32_t> after;
    PadMode mode = PadMode::Constant;
    float value = 0.0f;
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };

  static constexpr std::uint32_t before_of(const Params& p, std::size_t d) {
    return d < p.before.size() ? p.before[d] : 0;
  }
  static constexpr std::uint32_t after_of(const Params& p, std::size_t d) {
    return d < p.after.size() ? p.after[d] : 0;
  }

  /// Input index for padded index `i` of a dimension of size `dim` with `before` leading pads,
  /// or -1 when the element is the constant.
  static constexpr std::int64_t source_index(PadMode mode, std::int64_t i, std::int64_t before, std::int64_t dim) {
    std::int64_t j = i - before;
    if (j >= 0 && j < dim) return j;
    switch (mode) {
      case PadMode::Constant: return -1;
      case PadMode::Edge: return j < 0 ? 0 : dim - 1;
      case PadMode::Reflect: return j < 0 ? -j : 2 * (dim - 1) - j;
      case PadMode::Symmetric: return j < 0 ? -j - 1 : 2 * dim - 1 - j;
    }
    return -1;
  }

  static constexpr Status infer(const Params& p, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    if (auto s = detail::require_fits(p.before, "pads before"); !s) return s;
    if (auto s = detail::require_fits(p.after, "pads after"); !s) return s;
    const std::size_t rank = in[0].rank();
    if (p.before.size() > rank || p.after.size() > rank)
      return detail::invalid("pads have ", p.before.size(), " and ", p.after.size(), " entries but the input has rank ",
                             rank);
    TensorShape shape = in[0].shape;
    for (std::size_t d = 0; d < rank; ++d) {
      const std::uint32_t dim = shape[d];
      const std::uint32_t largest = before_of(p, d) > after_of(p, d) ? before_of(p, d) : after_of(p, d);
      if (p.mode == PadMode::Reflect && largest > 0 && largest >= dim)
        return detail::invalid("reflect padding of ", largest, " needs dimension ", d, " larger than it, got ", dim);
      if (p.mode == PadMode::Symmetric && largest > dim)
        return detail::invalid("symmetric padding of ", largest, " exceeds dimension ", d, " of size ", dim);
      if (p.mode == PadMode::Edge && largest > 0 && dim == 0)
        return detail::invalid("edge padding of an empty dimension ", d);
      const std::uint64_t padded = std::uint64_t{dim} + before_of(p, d) + after_of(p, d);
      if (padded > 0xffffffffu) return detail::invalid("padded dimension ", d, " is too large");
      shape[d] = static_cast<std::uint32_t>(padded);
    }
    if (!shape.valid()) return detail::invalid("padded tensor is too large");
    out[0] = TensorInfo{shape, in[0].type, in[0].quantization};
    return Status::ok();
  }
};

}  // namespace kiln::ops
