// SPDX-License-Identifier: Apache-2.0
// MemCopy: the same tensor in another memory kind; the optimizer inserts it between backends whose memory differs.
#pragma once

#include <cstdint>
#include <string_view>

#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

/// Which way a MemCopy moves its tensor, seen from the backend that runs it.
enum class CopyDirection : std::uint8_t {
  HostToHost,    ///< a plain copy (any host backend runs it)
  HostToDevice,  ///< host memory in, the running backend's device memory out
  DeviceToHost,  ///< the running backend's device memory in, host memory out
};

constexpr std::string_view to_string(CopyDirection direction) noexcept {
  constexpr std::string_view names[] = {"host -> host", "host -> device", "device -> host"};
  return names[static_cast<std::size_t>(direction)];
}

/// A copy of its input (Arm NN MemCopyLayer). optimize() inserts one wherever a tensor crosses
/// from one memory kind to another, assigned to the device backend on the far side; users need
/// not add them, though a HostToHost copy is a valid layer.
struct MemCopy {
  static constexpr std::string_view name = "MemCopy";
  static constexpr Arity arity{1, 1};
  struct Params {
    CopyDirection direction = CopyDirection::HostToHost;
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };
  static constexpr Status infer(const Params&, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    out[0] = in[0];
    return Status::ok();
  }
};

}  // namespace kiln::ops
