// SPDX-License-Identifier: Apache-2.0
// Built with -fno-exceptions -fno-rtti: kiln works in firmware builds. Runs a small network and
// checks a hand-computed result: y = relu(x) * 2 for x = [-1, 3].
#include <cstdio>

#include <kiln/kiln.hpp>

int main() {
  kiln::Network net;
  auto x = net.add_input(0, {{2}}, "x");
  auto two = net.add_constant<float>({{1}}, std::vector<float>{2}, "two");
  auto y = net.add<kiln::ops::ElementwiseBinary>({kiln::ops::BinaryOperation::Mul},
                                                 {net.add<kiln::ops::Activation>({}, {x}), two});
  net.add_output(0, y, "y");
  auto optimized = kiln::optimize<kiln::RefBackend>(std::move(net));
  if (!optimized) return std::puts(optimized.status().message().c_str()), 1;
  kiln::Runtime<kiln::RefBackend> runtime;
  auto id = runtime.load(*optimized);
  if (!id) return std::puts(id.status().message().c_str()), 1;
  float in[2] = {-1, 3}, out[2] = {};
  const kiln::InputBinding inputs[] = {{0, {{{2}}, in}}};
  const kiln::OutputBinding outputs[] = {{0, {{{2}}, out}}};
  if (auto status = runtime.enqueue(*id, inputs, outputs); !status) return std::puts(status.message().c_str()), 1;
  // A misuse is reported, not thrown.
  if (runtime.enqueue(*id + 1, inputs, outputs).is_ok()) return 1;
  std::printf("%g %g\n", out[0], out[1]);
  return out[0] == 0.0f && out[1] == 6.0f ? 0 : 1;
}
