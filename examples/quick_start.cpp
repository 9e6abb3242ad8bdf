// SPDX-License-Identifier: Apache-2.0
// The README's usage example, compiled and run so that it stays true: one convolution + ReLU6.
// It includes what it uses (kiln/kiln.hpp would add every backend this build has, xsimd and OpenCL
// headers with them), and its OpSet names its two ops, so only their workloads are compiled.
#include <cstdio>
#include <vector>

#include <kiln/backends/ref/ref_backend.hpp>
#include <kiln/graph/network.hpp>
#include <kiln/runtime/runtime.hpp>

using Ops = kiln::OpSet<kiln::ops::Convolution2d, kiln::ops::Activation>;
using Runtime = kiln::Runtime<Ops, kiln::RefBackend>;

int main() {
  std::vector<float> image(28 * 28, 1.0f), weights(8 * 3 * 3, 0.5f), bias(8, -1.0f);

  kiln::Network net;
  auto x = net.add_input(0, {{1, 28, 28, 1}}, "image");
  auto w = net.add_constant<float>({{8, 3, 3, 1}}, weights, "conv/weights");
  auto b = net.add_constant<float>({{8}}, bias, "conv/bias");
  auto y = net.add<kiln::ops::Convolution2d>({.padding = {1, 1, 1, 1}}, {x, w, b}, "conv");
  y = net.add<kiln::ops::Activation>(kiln::ops::Activation::relu6(), {y}, "relu6");
  net.add_output(0, y, "features");

  auto optimized = Runtime::optimize(std::move(net));
  if (!optimized) {
    std::puts(optimized.status().message().c_str());
    return 1;
  }
  std::fputs(optimized->to_string().c_str(), stdout);

  Runtime runtime;
  auto id = runtime.load(*optimized);
  if (!id) {
    std::puts(id.status().message().c_str());
    return 1;
  }
  std::vector<float> out(runtime.output_info(*id, 0)->num_elements());
  kiln::InputBinding inputs[] = {{0, {*runtime.input_info(*id, 0), image.data()}}};
  kiln::OutputBinding outputs[] = {{0, {*runtime.output_info(*id, 0), out.data()}}};
  if (kiln::Status status = runtime.enqueue(*id, inputs, outputs); !status) {
    std::puts(status.message().c_str());
    return 1;
  }
  // Interior pixels see nine ones: 9 * 0.5 - 1 = 3.5; corners see four: 4 * 0.5 - 1 = 1.
  std::printf("corner %g, interior %g\n", out[0], out[(28 * 14 + 14) * 8]);
  return out[0] == 1.0f && out[(28 * 14 + 14) * 8] == 3.5f ? 0 : 1;
}
