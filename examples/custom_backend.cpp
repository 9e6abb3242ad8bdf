// SPDX-License-Identifier: Apache-2.0
// A backend written outside kiln's tree: it runs ReLU activations (counting them in its context)
// and leaves every other layer to RefBackend. Nothing in kiln changes to accept it.
#include <cstdio>
#include <vector>

#include <kiln/kiln.hpp>

namespace my {
struct Context : kiln::ref::Context {  // inherited reference workloads run with it
  int relu_runs = 0;
};
}  // namespace my

struct MyBackend {
  using fallback = kiln::RefBackend;
  static constexpr std::string_view id = "MyAcc";
  static constexpr std::size_t alignment = 64;
  using memory = kiln::HostMemory;
  using context = my::Context;
  static bool available() noexcept { return true; }
};

// MyBackend's workload for Activation layers whose data type is Float32. Its is_supported turns
// down every activation but ReLU, which then goes to the workload MyBackend inherits from RefBackend.
template <>
struct kiln::Workload<kiln::ops::Activation, MyBackend, kiln::DataType::Float32> {
  static Status is_supported(const WorkloadInfo<ops::Activation>& info) {
    if (info.params.function != ops::ActivationFunction::ReLU)
      return Status::error(ErrorCode::Unsupported, "runs ReLU only");
    return Status::ok();
  }
  explicit Workload(const WorkloadInfo<ops::Activation>&) {}
  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, my::Context& context) const {
    ++context.relu_runs;
    const auto x = in[0].as<float>();
    const auto y = out[0].as<float>();
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  }
};

int main() {
  kiln::Network net;
  // x -> relu -> dense -> y. (A ReLU after the dense layer would be fused into it by the optimizer,
  // and run by whichever backend runs the dense layer.)
  auto x = net.add_input(0, {{1, 4}}, "x");
  auto w = net.add_constant<float>({{3, 4}}, std::vector<float>{1, 0, 0, 0, 0, 1, 0, 0, -1, -1, -1, -1}, "w");
  auto relu = net.add<kiln::ops::Activation>({}, {x}, "relu");
  net.add_output(0, net.add<kiln::ops::FullyConnected>({}, {relu, w}, "dense"), "y");

  using Runtime = kiln::Runtime<MyBackend, kiln::RefBackend>;
  auto optimized = kiln::optimize<MyBackend, kiln::RefBackend>(std::move(net));
  if (!optimized) return std::puts(optimized.status().message().c_str()), 1;
  std::fputs(optimized->to_string().c_str(), stdout);

  Runtime runtime;
  auto id = runtime.load(*optimized);
  if (!id) return std::puts(id.status().message().c_str()), 1;
  std::vector<float> in{1, -2, 3, 4}, out(3);
  const kiln::InputBinding inputs[] = {{0, {*runtime.input_info(*id, 0), in.data()}}};
  const kiln::OutputBinding outputs[] = {{0, {*runtime.output_info(*id, 0), out.data()}}};
  if (auto status = runtime.enqueue(*id, inputs, outputs); !status) return std::puts(status.message().c_str()), 1;
  std::printf("y = [%g, %g, %g]; MyAcc ran ReLU %d time(s)\n", out[0], out[1], out[2],
              runtime.context<MyBackend>().relu_runs);
  // relu(x) = [1, 0, 3, 4]; dense = [1, 0, -8]
  return out == std::vector<float>{1, 0, -8} && runtime.context<MyBackend>().relu_runs == 1 ? 0 : 1;
}
