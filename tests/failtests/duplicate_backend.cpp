// SPDX-License-Identifier: Apache-2.0
// Must not compile with KILN_SHOULD_FAIL: the same backend twice in one Runtime.
#include <kiln/backends/ref/ref_backend.hpp>
#include <kiln/runtime/runtime.hpp>

#ifdef KILN_SHOULD_FAIL
kiln::Runtime<kiln::RefBackend, kiln::RefBackend> runtime;
#else
kiln::Runtime<kiln::RefBackend> runtime;
#endif
