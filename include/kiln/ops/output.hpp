// SPDX-License-Identifier: Apache-2.0
// Output: a network output, read back by the user through its binding id.
#pragma once

#include <string_view>

#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

/// A network output (Arm NN OutputLayer): one input, no outputs.
struct Output {
  static constexpr std::string_view name = "Output";
  static constexpr Arity arity{1, 1};
  struct Params {
    BindingId binding = 0;
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };
  static constexpr std::size_t num_outputs(const Params&) { return 0; }
  static constexpr Status infer(const Params&, std::span<const TensorInfo>, std::span<TensorInfo>) {
    return Status::ok();
  }
};

}  // namespace kiln::ops
