// SPDX-License-Identifier: Apache-2.0
// Input: a network input, fed by the user at each inference through its binding id.
#pragma once

#include <string_view>

#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

/// A network input (Arm NN InputLayer). It has no inputs and one output described by `info`.
struct Input {
  static constexpr std::string_view name = "Input";
  static constexpr Arity arity{0, 0};
  struct Params {
    BindingId binding = 0;
    TensorInfo info;
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };
  static constexpr Status infer(const Params& params, std::span<const TensorInfo>, std::span<TensorInfo> outputs) {
    if (auto status = validate(params.info); !status) return status;
    outputs[0] = params.info;
    return Status::ok();
  }
};

}  // namespace kiln::ops
