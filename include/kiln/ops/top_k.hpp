// SPDX-License-Identifier: Apache-2.0
// TopK: the k largest or smallest elements along one axis, and where they were.
#pragma once

#include <string_view>

#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

/// The `k` largest elements along `axis` (the smallest with `largest` false), in that order, and
/// their positions along the axis (ONNX TopK with sorted = 1, torch.topk, TFLite TOPK_V2). Equal
/// values keep the lower position first, as ONNX asks; a NaN counts as larger than every number,
/// as in torch. Outputs: the values, of the input's type, and the indices (Signed32), both the
/// input's shape with `k` along the axis.
struct TopK {
  static constexpr std::string_view name = "TopK";
  static constexpr Arity arity{1, 1};
  struct Params {
    std::uint32_t k = 1;
    std::int64_t axis = -1;
    bool largest = true;
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };
  static constexpr std::size_t num_outputs(const Params&) { return 2; }

  static constexpr Status infer(const Params& p, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    auto axis = detail::normalize_axis(p.axis, in[0].rank());
    if (!axis) return axis.status();
    if (p.k == 0 || p.k > in[0].shape[*axis])
      return detail::invalid("k is ", p.k, "; axis ", *axis, " has ", in[0].shape[*axis],
                             " elements (k must be 1 to that)");
    TensorShape shape = in[0].shape;
    shape[*axis] = p.k;
    out[0] = TensorInfo{shape, in[0].type, in[0].quantization};
    out[1] = TensorInfo{shape, DataType::Signed32, {}};
    return Status::ok();
  }
};

}  // namespace kiln::ops
