// SPDX-License-Identifier: Apache-2.0
// CumulativeSum: running sums along one axis.
#pragma once

#include <string_view>

#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

/// y[..., i, ...] = the sum of x[..., j, ...] over j <= i along `axis` (ONNX CumSum, torch.cumsum,
/// TFLite CUMSUM): `exclusive` leaves x[i] out of its own sum (y[0] = 0), `reverse` sums from the
/// end (j >= i). Float32 and Signed32: a transformer export's position ids are the running count of
/// its attention mask. The output has the input's shape and type.
struct CumulativeSum {
  static constexpr std::string_view name = "CumulativeSum";
  static constexpr Arity arity{1, 1};
  struct Params {
    std::int64_t axis = 0;
    bool exclusive = false;
    bool reverse = false;
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };

  static constexpr Status infer(const Params& p, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    if (auto axis = detail::normalize_axis(p.axis, in[0].rank()); !axis) return axis.status();
    out[0] = in[0];
    return Status::ok();
  }
};

}  // namespace kiln::ops
