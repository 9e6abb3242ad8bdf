// SPDX-License-Identifier: Apache-2.0
// Constant: a tensor whose data is part of the network (weights, biases, fixed indices).
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

/// A constant tensor (Arm NN ConstantLayer). Its data is copied into the network when built and
/// prepared once when the network is loaded; it never occupies the planned arena.
struct Constant {
  static constexpr std::string_view name = "Constant";
  static constexpr Arity arity{0, 0};
  struct Params {
    TensorInfo info;
    std::vector<std::byte> data;
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };
  static constexpr Status infer(const Params& params, std::span<const TensorInfo>, std::span<TensorInfo> outputs) {
    if (auto status = validate(params.info); !status) return status;
    if (params.data.size() != params.info.num_bytes())
      return detail::invalid("constant ", params.info.to_string(), " needs ", params.info.num_bytes(),
                             " bytes of data, got ", params.data.size());
    outputs[0] = params.info;
    return Status::ok();
  }
};

}  // namespace kiln::ops
