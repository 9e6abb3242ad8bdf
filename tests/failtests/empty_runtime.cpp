// SPDX-License-Identifier: Apache-2.0
// Must not compile with KILN_SHOULD_FAIL: a Runtime needs at least one backend.
#include <kiln/backends/ref/ref_backend.hpp>
#include <kiln/runtime/runtime.hpp>

#ifdef KILN_SHOULD_FAIL
kiln::Runtime<> runtime;
#else
kiln::Runtime<kiln::RefBackend> runtime;
#endif
