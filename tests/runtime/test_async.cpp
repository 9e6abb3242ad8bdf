// SPDX-License-Identifier: Apache-2.0
// Working-memory handles: asynchronous execution from several threads, lifecycle, and misuse.
#include <atomic>
#include <thread>

#include <catch2/catch.hpp>
#include <kiln/kiln.hpp>

#include "example_networks.hpp"

using namespace kiln;

namespace {
struct Loaded {
  NetworkId id;
  TensorInfo input, output;
};

Loaded load_small_cnn(Runtime<RefBackend>& runtime, bool async) {
  auto optimized = optimize<RefBackend>(examples::small_cnn());
  REQUIRE(optimized);
  LoadOptions options;
  options.async_execution = async;
  auto id = runtime.load(*optimized, options);
  REQUIRE(id);
  return {*id, *runtime.input_info(*id, 0), *runtime.output_info(*id, 0)};
}

std::vector<float> image(std::uint64_t seed, const TensorInfo& info) {
  return examples::WeightGenerator(seed).values(info.num_elements(), 1.0f);
}
}  // namespace

TEST_CASE("Handles of one network execute concurrently and match serial runs", "[runtime][async][threads]") {
  Runtime<RefBackend> runtime;
  const Loaded serial = load_small_cnn(runtime, false);
  const Loaded async = load_small_cnn(runtime, true);
  constexpr int threads = 4, inferences = 25;

  // Expected outputs from the synchronous path, one per distinct input.
  std::vector<std::vector<float>> expected;
  for (int i = 0; i < inferences; ++i) {
    const auto x = image(static_cast<std::uint64_t>(i), serial.input);
    std::vector<float> y(serial.output.num_elements());
    const InputBinding in[] = {{0, {serial.input, x.data()}}};
    const OutputBinding out[] = {{0, {serial.output, y.data()}}};
    REQUIRE(runtime.enqueue(serial.id, in, out));
    expected.push_back(y);
  }

  std::vector<int> mismatches(threads, 0), failures(threads, 0);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      auto handle = runtime.create_working_mem_handle(async.id);
      if (!handle) {
        ++failures[t];
        return;
      }
      for (int i = 0; i < inferences; ++i) {
        const int which = (i + t * 7) % inferences;
        const auto x = image(static_cast<std::uint64_t>(which), async.input);
        std::vector<float> y(async.output.num_elements());
        const InputBinding in[] = {{0, {async.input, x.data()}}};
        const OutputBinding out[] = {{0, {async.output, y.data()}}};
        if (!runtime.execute(**handle, in, out))
          ++failures[t];
        else if (y != expected[static_cast<std::size_t>(which)])
          ++mismatches[t];
      }
    });
  for (auto& thread : pool) thread.join();
  for (int t = 0; t < threads; ++t) {
    CHECK(failures[t] == 0);
    CHECK(mismatches[t] == 0);
  }
}

TEST_CASE("Working memory is allocated on first use, freed on request, and reusable", "[runtime][async]") {
  Runtime<RefBackend> runtime;
  const Loaded net = load_small_cnn(runtime, true);
  auto handle = runtime.create_working_mem_handle(net.id);
  REQUIRE(handle);
  CHECK((*handle)->network_id() == net.id);
  CHECK_FALSE((*handle)->is_allocated());
  const auto x = image(1, net.input);
  std::vector<float> first(net.output.num_elements()), second(net.output.num_elements());
  const InputBinding in[] = {{0, {net.input, x.data()}}};
  const OutputBinding out1[] = {{0, {net.output, first.data()}}};
  const OutputBinding out2[] = {{0, {net.output, second.data()}}};
  REQUIRE(runtime.execute(**handle, in, out1));
  CHECK((*handle)->is_allocated());
  (*handle)->free();
  CHECK_FALSE((*handle)->is_allocated());
  REQUIRE(runtime.execute(**handle, in, out2));
  CHECK(first == second);
  REQUIRE((*handle)->allocate());
  CHECK((*handle)->is_allocated());
}

TEST_CASE("Synchronous and asynchronous paths reject each other's networks", "[runtime][async][errors]") {
  Runtime<RefBackend> runtime;
  const Loaded sync = load_small_cnn(runtime, false);
  const Loaded async = load_small_cnn(runtime, true);
  const auto x = image(1, async.input);
  std::vector<float> y(async.output.num_elements());
  const InputBinding in[] = {{0, {async.input, x.data()}}};
  const OutputBinding out[] = {{0, {async.output, y.data()}}};
  CHECK(runtime.enqueue(async.id, in, out).message() ==
        "network 1 was loaded for asynchronous execution; run it with execute() and a working memory handle");
  auto refused = runtime.create_working_mem_handle(sync.id);
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.status().message(), Catch::Contains("network 0 was loaded without async_execution"));
  CHECK(runtime.create_working_mem_handle(7).status().code() == ErrorCode::NotFound);
}

TEST_CASE("A handle stays usable after a failed execute and refuses once its network is unloaded",
          "[runtime][async][errors]") {
  Runtime<RefBackend> runtime;
  const Loaded net = load_small_cnn(runtime, true);
  auto handle = runtime.create_working_mem_handle(net.id);
  REQUIRE(handle);
  const auto x = image(1, net.input);
  std::vector<float> y(net.output.num_elements());
  const InputBinding in[] = {{0, {net.input, x.data()}}};
  const OutputBinding out[] = {{0, {net.output, y.data()}}};
  const InputBinding wrong[] = {{3, {net.input, x.data()}}};
  CHECK(runtime.execute(**handle, wrong, out).message() ==
        "input binding 3 does not exist; this network has inputs [0]");
  CHECK(runtime.execute(**handle, in, out));
  REQUIRE(runtime.unload(net.id));
  CHECK(runtime.execute(**handle, in, out).message() ==
        "the working memory handle belongs to network 0, which is no longer loaded");
}

TEST_CASE("Loads, unloads and executions from several threads at once", "[runtime][threads]") {
  Runtime<RefBackend> runtime;
  const Loaded resident = load_small_cnn(runtime, true);
  const auto x = image(3, resident.input);
  std::vector<float> expected(resident.output.num_elements());
  {
    auto handle = runtime.create_working_mem_handle(resident.id);
    REQUIRE(handle);
    const InputBinding in[] = {{0, {resident.input, x.data()}}};
    const OutputBinding out[] = {{0, {resident.output, expected.data()}}};
    REQUIRE(runtime.execute(**handle, in, out));
  }
  std::atomic<int> errors{0};
  std::vector<std::thread> pool;
  // Two threads load, run and unload their own networks over and over...
  for (int t = 0; t < 2; ++t)
    pool.emplace_back([&] {
      for (int i = 0; i < 5; ++i) {
        auto optimized = optimize<RefBackend>(examples::mlp());
        auto id = optimized ? runtime.load(*optimized) : Expected<NetworkId>(optimized.status());
        if (!id) {
          ++errors;
          continue;
        }
        std::vector<float> in(64, 0.5f), out(12);
        const InputBinding inputs[] = {{0, {*runtime.input_info(*id, 0), in.data()}}};
        const OutputBinding outputs[] = {{0, {*runtime.output_info(*id, 0), out.data()}}};
        if (!runtime.enqueue(*id, inputs, outputs) || !runtime.unload(*id)) ++errors;
      }
    });
  // ...while two others execute the resident network on their own handles.
  for (int t = 0; t < 2; ++t)
    pool.emplace_back([&] {
      auto handle = runtime.create_working_mem_handle(resident.id);
      if (!handle) {
        ++errors;
        return;
      }
      for (int i = 0; i < 10; ++i) {
        std::vector<float> y(resident.output.num_elements());
        const InputBinding in[] = {{0, {resident.input, x.data()}}};
        const OutputBinding out[] = {{0, {resident.output, y.data()}}};
        if (!runtime.execute(**handle, in, out) || y != expected) ++errors;
      }
    });
  for (auto& thread : pool) thread.join();
  CHECK(errors == 0);
}
