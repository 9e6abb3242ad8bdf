// SPDX-License-Identifier: Apache-2.0
// With odr_b.cpp: two translation units include the umbrella header and link into one program.
#include <kiln/kiln.hpp>

int run_in_b();

int run_in_a() {
  kiln::Network net;
  net.add_output(0, net.add_input(0, {{1}}));
  return kiln::optimize<kiln::RefBackend>(std::move(net)) ? 1 : 0;
}

int main() { return run_in_a() + run_in_b() == 2 ? 0 : 1; }
