// SPDX-License-Identifier: Apache-2.0
// Must not compile with KILN_SHOULD_FAIL: a Runtime parameter that is not a Backend.
#include <kiln/backends/ref/ref_backend.hpp>
#include <kiln/runtime/runtime.hpp>

struct NotABackend {
  static constexpr std::string_view id = "Nope";
};

#ifdef KILN_SHOULD_FAIL
kiln::Runtime<NotABackend> runtime;
#else
kiln::Runtime<kiln::RefBackend> runtime;
#endif
