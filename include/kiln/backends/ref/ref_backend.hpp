// SPDX-License-Identifier: Apache-2.0
// RefBackend: the reference backend's tag, and (unless a library compiled them) its workloads.
#pragma once

#include <string_view>

#include "kiln/backends/backend.hpp"
#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

/// The reference backend: plain loops, every op; the oracle other backends are tested against.
struct RefBackend {
  using fallback = void;
  static constexpr std::string_view id = "CpuRef";
  static constexpr std::size_t alignment = 64;
  using memory = HostMemory;
  using context = ref::Context;
  static bool available() noexcept { return true; }
};

inline namespace KILN_WORKLOAD_SOURCE {
template <>
inline constexpr bool workloads_compiled_v<RefBackend> = KILN_COMPILED_LIBRARY;
}  // namespace KILN_WORKLOAD_SOURCE

}  // namespace kiln

#if !KILN_COMPILED_LIBRARY
#include "kiln/backends/ref/workloads.hpp"

static_assert(
    kiln::all_ops_supported_v<kiln::RefBackend>,
    "RefBackend must implement every op of ops::op_list: add backends/ref/ops/<op>.hpp to backends/ref/workloads.hpp");
#endif
