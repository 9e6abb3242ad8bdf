// SPDX-License-Identifier: Apache-2.0
// Must not compile with KILN_SHOULD_FAIL: a backend's workload has no run().
#include <kiln/backends/ref/ref_backend.hpp>
#include <kiln/runtime/runtime.hpp>

struct HalfBackend {
  using fallback = kiln::RefBackend;
  static constexpr std::string_view id = "Half";
  static constexpr std::size_t alignment = 64;
  using memory = kiln::HostMemory;
  using context = kiln::ref::Context;
  static bool available() noexcept { return true; }
};

template <>
struct kiln::Workload<kiln::ops::Activation, HalfBackend, kiln::DataType::Float32> {
  explicit Workload(const WorkloadInfo<ops::Activation>&) {}
#ifndef KILN_SHOULD_FAIL
  void run(std::span<const ConstTensor>, std::span<const Tensor>, ref::Context&) const {}
#endif
};

// The table of a backend's workloads is made where a network is optimised for it.
auto optimize_for_half_backend(kiln::Network network) {
  return kiln::optimize<kiln::OpSet<kiln::ops::Activation>, HalfBackend, kiln::RefBackend>(std::move(network));
}
