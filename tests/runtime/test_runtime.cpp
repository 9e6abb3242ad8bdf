// SPDX-License-Identifier: Apache-2.0
// runtime/: loading several networks, enqueue, every misuse, memory strategies and thread safety.
#include <atomic>
#include <thread>

#include <catch2/catch.hpp>
#include <kiln/kiln.hpp>

using namespace kiln;

namespace {
/// y = relu(x) + c with c = [10, 20, 30]; binding ids 7 (in) and 3 (out).
Network relu_plus_constant() {
  Network net;
  auto x = net.add_input(7, {{3}}, "x");
  auto c = net.add_constant<float>({{3}}, std::vector<float>{10, 20, 30}, "c");
  auto r = net.add<ops::Activation>({}, {x}, "relu");
  net.add_output(3, net.add<ops::ElementwiseBinary>({}, {r, c}, "add"), "y");
  return net;
}
/// Two inputs, two outputs: sum = a + b, diff = a - b.
Network sum_and_difference() {
  Network net;
  auto a = net.add_input(0, {{2, 2}}, "a");
  auto b = net.add_input(1, {{2, 2}}, "b");
  net.add_output(0, net.add<ops::ElementwiseBinary>({ops::BinaryOperation::Add}, {a, b}), "sum");
  net.add_output(1, net.add<ops::ElementwiseBinary>({ops::BinaryOperation::Sub}, {a, b}), "diff");
  return net;
}
template <class... Bs>
NetworkId load(Runtime<Bs...>& runtime, Network net, LoadOptions options = {}) {
  auto optimized = optimize<Bs...>(std::move(net));
  REQUIRE(optimized);
  auto id = runtime.load(*optimized, options);
  REQUIRE(id);
  return *id;
}
}  // namespace

TEST_CASE("Several networks are loaded at once and run independently", "[runtime]") {
  Runtime<RefBackend> runtime;
  const NetworkId first = load(runtime, relu_plus_constant());
  const NetworkId second = load(runtime, sum_and_difference());
  CHECK(first != second);

  float x[3] = {-5, 1, 2}, y[3] = {};
  const InputBinding in1[] = {{7, {{{3}}, x}}};
  const OutputBinding out1[] = {{3, {{{3}}, y}}};
  REQUIRE(runtime.enqueue(first, in1, out1));
  CHECK(std::vector<float>(y, y + 3) == std::vector<float>{10, 21, 32});

  float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, sum[4] = {}, diff[4] = {};
  const TensorInfo info{{2, 2}};
  // Bindings in any order.
  const InputBinding in2[] = {{1, {info, b}}, {0, {info, a}}};
  const OutputBinding out2[] = {{1, {info, diff}}, {0, {info, sum}}};
  REQUIRE(runtime.enqueue(second, in2, out2));
  CHECK(std::vector<float>(sum, sum + 4) == std::vector<float>{11, 22, 33, 44});
  CHECK(std::vector<float>(diff, diff + 4) == std::vector<float>{-9, -18, -27, -36});

  // Repeated runs give the same results (no state leaks between inferences).
  x[0] = 3;
  REQUIRE(runtime.enqueue(first, in1, out1));
  CHECK(std::vector<float>(y, y + 3) == std::vector<float>{13, 21, 32});
}

TEST_CASE("Binding infos and the device spec are reported", "[runtime]") {
  Runtime<RefBackend> runtime;
  const NetworkId id = load(runtime, relu_plus_constant());
  CHECK(*runtime.input_info(id, 7) == TensorInfo{{3}});
  CHECK(*runtime.output_info(id, 3) == TensorInfo{{3}});
  CHECK(runtime.input_info(id, 0).status().message() == "input binding 0 does not exist; this network has inputs [7]");
  CHECK(runtime.output_info(id, 7).status().message() ==
        "output binding 7 does not exist; this network has outputs [3]");
  const DeviceSpec spec = Runtime<RefBackend>::device_spec();
  REQUIRE(spec.backends.size() == 1);
  CHECK(spec.backends[0].id == "CpuRef");
  CHECK(spec.backends[0].memory == "host");
  CHECK(spec.backends[0].available);
}

TEST_CASE("Every misuse of enqueue is an error and leaves the runtime usable", "[runtime][errors]") {
  Runtime<RefBackend> runtime;
  const NetworkId id = load(runtime, sum_and_difference());
  float a[4] = {1, 2, 3, 4}, b[4] = {1, 1, 1, 1}, sum[4], diff[4], small[2];
  const TensorInfo info{{2, 2}};
  const InputBinding good_in[] = {{0, {info, a}}, {1, {info, b}}};
  const OutputBinding good_out[] = {{0, {info, sum}}, {1, {info, diff}}};

  auto error = [&](std::span<const InputBinding> in, std::span<const OutputBinding> out, NetworkId net) {
    Status status = runtime.enqueue(net, in, out);
    REQUIRE_FALSE(status);
    // The runtime still works after every error.
    REQUIRE(runtime.enqueue(id, good_in, good_out));
    CHECK(sum[3] == 5);
    return status.message();
  };
  CHECK(error(good_in, good_out, 42) == "network 42 is not loaded; loaded networks: 0");
  const InputBinding unknown[] = {{0, {info, a}}, {5, {info, b}}};
  CHECK(error(unknown, good_out, id) == "input binding 5 does not exist; this network has inputs [0, 1]");
  const InputBinding missing[] = {{0, {info, a}}};
  CHECK(error(missing, good_out, id) == "input binding 1 is missing");
  const InputBinding twice[] = {{0, {info, a}}, {0, {info, a}}, {1, {info, b}}};
  CHECK(error(twice, good_out, id) == "input binding 0 is given twice");
  const InputBinding wrong_shape[] = {{0, {{{4}}, a}}, {1, {info, b}}};
  CHECK(error(wrong_shape, good_out, id) == "input binding 0 expects Float32 [2, 2] but the buffer is Float32 [4]");
  const InputBinding wrong_type[] = {{0, {{{2, 2}, DataType::Signed32}, a}}, {1, {info, b}}};
  CHECK(error(wrong_type, good_out, id) == "input binding 0 expects Float32 [2, 2] but the buffer is Signed32 [2, 2]");
  const InputBinding null_data[] = {{0, {info, nullptr}}, {1, {info, b}}};
  CHECK(error(null_data, good_out, id) == "input binding 0 has a null data pointer");
  const OutputBinding short_out[] = {{0, {{{2}}, small}}, {1, {info, diff}}};
  CHECK(error(good_in, short_out, id) == "output binding 0 expects Float32 [2, 2] but the buffer is Float32 [2]");
  const OutputBinding missing_out[] = {{1, {info, diff}}};
  CHECK(error(good_in, missing_out, id) == "output binding 0 is missing");
  const OutputBinding null_out[] = {{0, {info, sum}}, {1, {info, nullptr}}};
  CHECK(error(good_in, null_out, id) == "output binding 1 has a null data pointer");
}

TEST_CASE("Unloading frees the id; using it afterwards is an error", "[runtime][errors]") {
  Runtime<RefBackend> runtime;
  const NetworkId first = load(runtime, relu_plus_constant());
  const NetworkId second = load(runtime, relu_plus_constant());
  REQUIRE(runtime.unload(first));
  CHECK(runtime.unload(first).message() == "network 0 is not loaded; loaded networks: 1");
  CHECK_FALSE(runtime.input_info(first, 7));
  float x[3] = {1, 1, 1}, y[3];
  const InputBinding in[] = {{7, {{{3}}, x}}};
  const OutputBinding out[] = {{3, {{{3}}, y}}};
  CHECK(runtime.enqueue(first, in, out).code() == ErrorCode::NotFound);
  CHECK(runtime.enqueue(second, in, out));
}

TEST_CASE("Both memory strategies give the same results; greedy uses less", "[runtime][memory]") {
  Runtime<RefBackend> runtime;
  auto chain = [] {
    Network net;
    auto x = net.add_input(0, {{64}}, "x");
    for (int i = 0; i < 6; ++i) x = net.add<ops::Activation>({ops::ActivationFunction::LeakyReLU, 0.5f}, {x});
    net.add_output(0, x, "y");
    return net;
  };
  const NetworkId greedy = load(runtime, chain(), {MemoryPlanner::of<GreedyBySize>()});
  const NetworkId linear = load(runtime, chain(), {MemoryPlanner::of<OneBlockPerTensor>()});
  std::vector<float> x(64, -64.0f), y1(64), y2(64);
  const InputBinding in[] = {{0, {{{64}}, x.data()}}};
  const OutputBinding out1[] = {{0, {{{64}}, y1.data()}}};
  const OutputBinding out2[] = {{0, {{{64}}, y2.data()}}};
  REQUIRE(runtime.enqueue(greedy, in, out1));
  REQUIRE(runtime.enqueue(linear, in, out2));
  CHECK(y1 == std::vector<float>(64, -1.0f));  // -64 halved six times
  CHECK(y1 == y2);
  const MemorySummary g = *runtime.memory_summary(greedy);
  const MemorySummary l = *runtime.memory_summary(linear);
  CHECK(g.strategy == "greedy-by-size");
  CHECK(g.tensors == 7);
  CHECK(g.arena_bytes == 512);  // two 256-byte tensors alternate
  CHECK(g.lower_bound_bytes == 512);
  CHECK(l.arena_bytes == 7 * 256);
  CHECK(g.unplanned_bytes == l.arena_bytes);
}

TEST_CASE("Outputs may come straight from an input or a constant", "[runtime]") {
  Network net;
  auto x = net.add_input(0, {{2}}, "x");
  net.add_output(0, x, "copy");
  net.add_output(1, net.add_constant<float>({{2}}, std::vector<float>{4, 5}, "c"), "constant");
  Runtime<RefBackend> runtime;
  const NetworkId id = load(runtime, std::move(net));
  float in[2] = {1, 2}, copy[2] = {}, constant[2] = {};
  const InputBinding inputs[] = {{0, {{{2}}, in}}};
  const OutputBinding outputs[] = {{0, {{{2}}, copy}}, {1, {{{2}}, constant}}};
  REQUIRE(runtime.enqueue(id, inputs, outputs));
  CHECK(copy[1] == 2);
  CHECK(constant[1] == 5);
  CHECK(runtime.memory_summary(id)->constant_bytes == 8);
}

TEST_CASE("A constant that workloads packed at load is not held a second time", "[runtime]") {
  // y = (x * w^T + b) * b: w is read only by FullyConnected, b also by the Mul (an Add of b would
  // fold into the bias: passes::fold_bias_adds).
  const auto build = [] {
    Network net;
    auto x = net.add_input(0, {{1, 2}}, "x");
    auto w = net.add_constant<float>({{2, 2}}, std::vector<float>{1, 2, 3, 4}, "w");
    auto b = net.add_constant<float>({{2}}, std::vector<float>{10, 20}, "b");
    auto fc = net.add<ops::FullyConnected>({}, {x, w, b}, "fc");
    net.add_output(0, net.add<ops::ElementwiseBinary>({ops::BinaryOperation::Mul}, {fc, b}, "mul"), "y");
    return net;
  };
  const auto run = [](auto& runtime, NetworkId id) {
    float x[2] = {1, -1}, y[2] = {};
    const InputBinding inputs[] = {{0, {{{1, 2}}, x}}};
    const OutputBinding outputs[] = {{0, {{{1, 2}}, y}}};
    REQUIRE(runtime.enqueue(id, inputs, outputs));
    return std::vector<float>{y[0], y[1]};
  };
  Runtime<NeonBackend, RefBackend> packing;
  const NetworkId packed = load(packing, build());
  CHECK(run(packing, packed) == std::vector<float>{(1 - 2 + 10) * 10, (3 - 4 + 20) * 20});
  CHECK(packing.memory_summary(packed)->constant_bytes == 8);                // b, which the Mul reads
  CHECK(packing.memory_summary(packed)->constant_bytes_in_workloads == 16);  // w, packed by FullyConnected
  // Given the network, the loader lets w's data go once FullyConnected has packed it, and keeps b's.
  Runtime<NeonBackend, RefBackend> consuming;
  auto optimized = optimize<NeonBackend, RefBackend>(build());
  REQUIRE(optimized);
  const auto consumed = consuming.load(std::move(*optimized));
  REQUIRE(consumed);
  CHECK(run(consuming, *consumed) == std::vector<float>{90, 380});
  CHECK(consuming.memory_summary(*consumed)->constant_bytes == 8);
  Runtime<RefBackend> reading;
  const NetworkId read = load(reading, build());
  CHECK(run(reading, read) == std::vector<float>{90, 380});
  CHECK(reading.memory_summary(read)->constant_bytes == 24);
  CHECK(reading.memory_summary(read)->constant_bytes_in_workloads == 0);
}

TEST_CASE("enqueue is safe from several threads, also while the network is unloaded", "[runtime][threads]") {
  Runtime<RefBackend> runtime;
  const NetworkId id = load(runtime, relu_plus_constant());
  std::atomic<int> wrong{0}, done{0}, not_found{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 300; ++i) {
        float x[3] = {float(t), float(i), -1}, y[3] = {};
        const InputBinding in[] = {{7, {{{3}}, x}}};
        const OutputBinding out[] = {{3, {{{3}}, y}}};
        Status status = runtime.enqueue(id, in, out);
        if (!status) {
          if (status.code() == ErrorCode::NotFound)
            ++not_found;
          else
            ++wrong;
          continue;
        }
        if (y[0] != 10 + t || y[1] != 20 + i || y[2] != 30) ++wrong;
        ++done;
      }
    });
  while (done < 200) std::this_thread::yield();
  REQUIRE(runtime.unload(id));
  for (auto& thread : threads) thread.join();
  CHECK(wrong == 0);
  CHECK(done + not_found == 1200);
}
