// SPDX-License-Identifier: Apache-2.0
// BatchMatMul: matrix products over the two innermost dimensions, broadcasting the others.
#pragma once

#include <string_view>

#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

/// Batched matrix multiplication (numpy matmul, ONNX MatMul, TFLite BATCH_MATMUL with adj_x/adj_y).
///
/// Inputs: a [..., M, K] (or [..., K, M] with transpose_a), b [..., K, N] (or [..., N, K] with
/// transpose_b), both of rank 2 or more. Batch dimensions broadcast as in numpy. Output [..., M, N].
struct BatchMatMul {
  static constexpr std::string_view name = "BatchMatMul";
  static constexpr Arity arity{2, 2};
  struct Params {
    bool transpose_a = false;
    bool transpose_b = false;
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };

  static constexpr Status infer(const Params& p, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    if (in[0].rank() < 2 || in[1].rank() < 2)
      return detail::invalid("both inputs need rank 2 or more, got ", in[0].shape.to_string(), " and ",
                             in[1].shape.to_string());
    if (auto s = detail::expect_same_type(in, 0, 1); !s) return s;
    const TensorShape& a = in[0].shape;
    const TensorShape& b = in[1].shape;
    const std::uint32_t m = p.transpose_a ? a.dim_from_end(0) : a.dim_from_end(1);
    const std::uint32_t ka = p.transpose_a ? a.dim_from_end(1) : a.dim_from_end(0);
    const std::uint32_t kb = p.transpose_b ? b.dim_from_end(0) : b.dim_from_end(1);
    const std::uint32_t n = p.transpose_b ? b.dim_from_end(1) : b.dim_from_end(0);
    if (ka != kb)
      return detail::invalid("inner dimensions differ: ", a.to_string(), " x ", b.to_string(), " (", ka, " vs ", kb,
                             ")");
    auto batch =
        detail::broadcast_shapes(TensorShape(a.dims().first(a.rank() - 2)), TensorShape(b.dims().first(b.rank() - 2)));
    if (!batch) return batch.status();
    TensorShape shape = *batch;
    shape.push_back(m);
    shape.push_back(n);
    out[0] = TensorInfo{shape, in[0].type, in[0].quantization};
    return Status::ok();
  }
};

}  // namespace kiln::ops
