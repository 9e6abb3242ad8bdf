// SPDX-License-Identifier: Apache-2.0
// Split: cuts a tensor into consecutive pieces along one axis.
#pragma once

#include <string_view>

#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

/// Split (ONNX Split, TFLite SPLIT_V): output i holds `sizes[i]` consecutive slices along `axis`.
/// The sizes must add up to the input's dimension; the layer has one output per size.
struct Split {
  static constexpr std::string_view name = "Split";
  static constexpr Arity arity{1, 1};
  /// The most outputs one split makes.
  static constexpr std::size_t max_outputs = 64;
  struct Params {
    std::int64_t axis = 0;
    InlineVector<std::uint32_t, max_outputs> sizes;
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };

  static constexpr std::size_t num_outputs(const Params& p) { return p.sizes.size(); }

  static constexpr Status infer(const Params& p, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    if (auto s = detail::require_fits(p.sizes, "split sizes"); !s) return s;
    if (p.sizes.empty()) return detail::invalid("split needs at least one output size");
    auto axis = detail::normalize_axis(p.axis, in[0].rank());
    if (!axis) return axis.status();
    std::uint64_t total = 0;
    for (auto size : p.sizes) total += size;
    if (total != in[0].shape[*axis])
      return detail::invalid("split sizes ", detail::list_to_string<std::uint32_t>(p.sizes), " add up to ", total,
                             " but dimension ", *axis, " of ", in[0].shape.to_string(), " is ", in[0].shape[*axis]);
    for (std::size_t i = 0; i < p.sizes.size(); ++i) {
      out[i] = TensorInfo{in[0].shape, in[0].type, in[0].quantization};
      out[i].shape[*axis] = p.sizes[i];
    }
    return Status::ok();
  }
};

}  // namespace kiln::ops
