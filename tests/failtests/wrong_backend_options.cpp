// SPDX-License-Identifier: Apache-2.0
// Must not compile with KILN_SHOULD_FAIL: options for a backend the runtime does not have.
#include <kiln/backends/ref/ref_backend.hpp>
#include <kiln/runtime/runtime.hpp>

struct Other {
  using fallback = void;
  static constexpr std::string_view id = "Other";
  static constexpr std::size_t alignment = 16;
  using memory = kiln::HostMemory;
  using context = kiln::ref::Context;
  static bool available() noexcept { return true; }
};

kiln::BackendOptions<kiln::RefBackend> options;
#ifdef KILN_SHOULD_FAIL
auto& wrong = options.get<Other>();
#else
auto& right = options.get<kiln::RefBackend>();
#endif
