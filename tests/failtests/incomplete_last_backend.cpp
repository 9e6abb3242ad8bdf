// SPDX-License-Identifier: Apache-2.0
// Must not compile with KILN_SHOULD_FAIL: the last backend must implement every op.
#include <kiln/backends/ref/ref_backend.hpp>
#include <kiln/runtime/runtime.hpp>

struct PartialBackend {
  using fallback = void;
  static constexpr std::string_view id = "Partial";
  static constexpr std::size_t alignment = 16;
  using memory = kiln::HostMemory;
  using context = kiln::ref::Context;
  static bool available() noexcept { return true; }
};

#ifdef KILN_SHOULD_FAIL
kiln::Runtime<kiln::RefBackend, PartialBackend> runtime;
#else
kiln::Runtime<PartialBackend, kiln::RefBackend> runtime;
#endif
