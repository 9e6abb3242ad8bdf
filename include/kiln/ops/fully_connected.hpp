// SPDX-License-Identifier: Apache-2.0
// FullyConnected: y = x * W^T + b over the innermost dimension.
#pragma once

#include <string_view>

#include <optional>

#include "kiln/ops/activation.hpp"
#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

/// Fully connected layer (TFLite FULLY_CONNECTED with keep_num_dims, PyTorch Linear, ONNX Gemm transB=1).
///
/// Inputs: input [..., K], weights [N, K], optional bias [N]. Output [..., N]: every leading index
/// of the input is an independent row.
struct FullyConnected {
  static constexpr std::string_view name = "FullyConnected";
  static constexpr Arity arity{2, 3};
  struct Params {
    /// Applied to every output element; set by the optimizer when it fuses a following Activation.
    std::optional<Activation::Params> activation;
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };

  static constexpr Status infer(const Params& p, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    if (auto s = Activation::validate(p.activation); !s) return s;
    if (in[0].rank() < 1) return detail::invalid("input 0 (input) must have rank 1 or more");
    if (auto s = detail::expect_rank(in, 1, "weights", 2); !s) return s;
    const std::uint32_t k = in[0].shape.dim_from_end(0);
    if (in[1].shape[1] != k)
      return detail::invalid("weights ", in[1].shape.to_string(), " expect ", in[1].shape[1],
                             " input features but input ", in[0].shape.to_string(), " has ", k);
    if (in.size() == 3) {
      if (auto s = detail::expect_rank(in, 2, "bias", 1); !s) return s;
      if (in[2].shape[0] != in[1].shape[0])
        return detail::invalid("bias has ", in[2].shape[0], " elements but there are ", in[1].shape[0],
                               " output features");
    }
    TensorShape shape = in[0].shape;
    shape[shape.rank() - 1] = in[1].shape[0];
    out[0] = TensorInfo{shape, in[0].type, in[0].quantization};
    return Status::ok();
  }
};

}  // namespace kiln::ops
