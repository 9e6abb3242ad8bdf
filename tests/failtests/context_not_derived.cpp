// SPDX-License-Identifier: Apache-2.0
// Must not compile with KILN_SHOULD_FAIL: a backend's context must derive from its fallback's.
#include <kiln/backends/ref/ref_backend.hpp>
#include <kiln/runtime/runtime.hpp>

struct OwnContext {};

struct Accelerated {
  using fallback = kiln::RefBackend;
  static constexpr std::string_view id = "Accelerated";
  static constexpr std::size_t alignment = 64;
  using memory = kiln::HostMemory;
#ifdef KILN_SHOULD_FAIL
  using context = OwnContext;
#else
  struct context : kiln::ref::Context {};
#endif
  static bool available() noexcept { return true; }
};

kiln::Runtime<Accelerated, kiln::RefBackend> runtime;
