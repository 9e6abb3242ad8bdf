// SPDX-License-Identifier: Apache-2.0
// With odr_a.cpp: two translation units include the umbrella header and link into one program.
#include <kiln/kiln.hpp>

int run_in_b() {
  kiln::Runtime<kiln::RefBackend> runtime;
  return kiln::Runtime<kiln::RefBackend>::device_spec().backends.size() == 1 ? 1 : 0;
}
