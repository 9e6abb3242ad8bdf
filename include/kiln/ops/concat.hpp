// SPDX-License-Identifier: Apache-2.0
// Concat: joins tensors along one axis.
#pragma once

#include <string_view>

#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

/// Concatenation (ONNX Concat, TFLite CONCATENATION). All inputs have the same rank, type and
/// dimensions except along `axis` (negative counts from the end). Concat moves values: quantised
/// inputs must already have the output's quantisation (the optimizer puts a Requantize before each
/// input of an int8 Concat made from a QDQ model whose quantisation differs).
struct Concat {
  static constexpr std::string_view name = "Concat";
  static constexpr Arity arity{1, 64};
  struct Params {
    std::int64_t axis = 0;
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };

  /// What every backend's Concat checks at load: each input has the output's quantisation, so
  /// that moving its bytes moves its values.
  static Status check_quantization(std::span<const TensorInfo> in, const TensorInfo& out) {
    for (std::size_t i = 0; i < in.size(); ++i)
      if (in[i].quantization != out.quantization)
        return Status::error(ErrorCode::Unsupported, "input ", i, " ", in[i].to_string(),
                             " is quantised unlike the output ", out.to_string(),
                             "; Concat moves bytes, so requantize the input first");
    return Status::ok();
  }

  static constexpr Status infer(const Params& p, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    auto axis = detail::normalize_axis(p.axis, in[0].rank());
    if (!axis) return axis.status();
    TensorShape shape = in[0].shape;
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < in.size(); ++i) {
      if (auto s = detail::expect_same_type(in, 0, i); !s) return s;
      if (in[i].rank() != shape.rank())
        return detail::invalid("input ", i, " ", in[i].shape.to_string(), " has a different rank than input 0 ",
                               in[0].shape.to_string());
      for (std::size_t d = 0; d < shape.rank(); ++d)
        if (d != *axis && in[i].shape[d] != shape[d])
          return detail::invalid("input ", i, " ", in[i].shape.to_string(), " differs from input 0 ",
                                 in[0].shape.to_string(), " in dimension ", d, ", not only in the concat axis ", *axis);
      total += in[i].shape[*axis];
    }
    if (total > 0xffffffffu) return detail::invalid("concatenated dimension is too large");
    shape[*axis] = static_cast<std::uint32_t>(total);
    if (!shape.valid()) return detail::invalid("concatenated tensor is too large");
    out[0] = TensorInfo{shape, in[0].type, in[0].quantization};
    return Status::ok();
  }
};

}  // namespace kiln::ops
