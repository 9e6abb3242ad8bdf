// SPDX-License-Identifier: Apache-2.0
// GatherElements: each output element picked from data along one axis by an index tensor of the output's shape.
#pragma once

#include <string_view>

#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

/// y[i0, ..., ik, ...] = data[i0, ..., indices[i0, ..., ik, ...], ...] with the index replacing
/// coordinate `axis` (ONNX GatherElements, PyTorch's torch.gather; a loss's pick of each target's
/// score). Inputs: data, indices (Signed32, the rank of data, each dimension at most data's but
/// along `axis`; negative indices count from the end). The output has the indices' shape and the
/// data's type. An index outside [-dim, dim) is an error at execution, never a read out of bounds.
struct GatherElements {
  static constexpr std::string_view name = "GatherElements";
  static constexpr Arity arity{2, 2};
  struct Params {
    std::int64_t axis = 0;
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };

  static constexpr Status infer(const Params& p, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    auto axis = detail::normalize_axis(p.axis, in[0].rank());
    if (!axis) return axis.status();
    if (auto s = detail::expect_indices(in, 1); !s) return s;
    if (in[1].rank() != in[0].rank())
      return detail::invalid("indices have rank ", in[1].rank(), "; data has rank ", in[0].rank());
    for (std::size_t d = 0; d < in[0].rank(); ++d)
      if (d != *axis && in[1].shape[d] > in[0].shape[d])
        return detail::invalid("indices dimension ", d, " is ", in[1].shape[d], ", more than data's ", in[0].shape[d]);
    out[0] = TensorInfo{in[1].shape, in[0].type, in[0].quantization};
    return Status::ok();
  }
};

}  // namespace kiln::ops
