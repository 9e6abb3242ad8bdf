// SPDX-License-Identifier: Apache-2.0
// The shipped example networks and the MobileNet-v2 shape: they run, and their memory plans are tight.
#include <cmath>
#include <numeric>

#include <catch2/catch.hpp>
#include <kiln/kiln.hpp>

#include "example_networks.hpp"

using namespace kiln;

namespace {
struct Outcome {
  std::vector<float> output;
  MemorySummary memory;
};

Outcome run_on_ref(Network net, MemoryPlanner planner = MemoryPlanner::of<GreedyBySize>()) {
  auto optimized = optimize<RefBackend>(std::move(net));
  REQUIRE(optimized);
  for (LayerId id : optimized->execution_order())
    if (optimized->backend_index(id) != OptimizedNetwork<RefBackend>::no_backend)
      CHECK(optimized->backend_id(id) == "CpuRef");
  Runtime<RefBackend> runtime;
  auto id = runtime.load(*optimized, {planner});
  REQUIRE(id);
  const TensorInfo in_info = *runtime.input_info(*id, 0), out_info = *runtime.output_info(*id, 0);
  std::vector<float> input = examples::WeightGenerator(7).values(in_info.num_elements(), 1.0f);
  Outcome outcome{std::vector<float>(out_info.num_elements()), *runtime.memory_summary(*id)};
  const InputBinding in[] = {{0, {in_info, input.data()}}};
  const OutputBinding out[] = {{0, {out_info, outcome.output.data()}}};
  REQUIRE(runtime.enqueue(*id, in, out));
  return outcome;
}

void check_probabilities(const std::vector<float>& p) {
  for (float v : p) REQUIRE((v >= 0.0f && v <= 1.0f));
  CHECK(std::accumulate(p.begin(), p.end(), 0.0) == Approx(1.0).epsilon(1e-5));
}
}  // namespace

TEST_CASE("The example networks run on RefBackend and plan memory at the lower bound", "[runtime][examples]") {
  for (auto [name, build] : {std::pair{"mlp", &examples::mlp}, std::pair{"small_cnn", &examples::small_cnn}}) {
    SECTION(name) {
      const Outcome greedy = run_on_ref(build());
      check_probabilities(greedy.output);
      INFO("arena " << greedy.memory.arena_bytes << " lower bound " << greedy.memory.lower_bound_bytes);
      CHECK(double(greedy.memory.arena_bytes) <= 1.05 * double(greedy.memory.lower_bound_bytes));
      CHECK(greedy.memory.arena_bytes < greedy.memory.unplanned_bytes);
      const Outcome linear = run_on_ref(build(), MemoryPlanner::of<OneBlockPerTensor>());
      CHECK(linear.output == greedy.output);
    }
  }
}

TEST_CASE("A MobileNet-v2-shaped network builds, optimizes, loads and runs on RefBackend", "[runtime][examples]") {
  const Outcome outcome = run_on_ref(examples::mobilenet_v2(64, 100));
  CHECK(outcome.output.size() == 100);
  check_probabilities(outcome.output);
  INFO("arena " << outcome.memory.arena_bytes << " lower bound " << outcome.memory.lower_bound_bytes);
  CHECK(double(outcome.memory.arena_bytes) <= 1.05 * double(outcome.memory.lower_bound_bytes));
}

TEST_CASE("MobileNet-v2 at 224x224: the greedy plan is within 5% of the lower bound", "[runtime][examples][memory]") {
  auto optimized = optimize<RefBackend>(examples::mobilenet_v2(224));
  REQUIRE(optimized);
  Runtime<RefBackend> runtime;
  auto id = runtime.load(*optimized);
  REQUIRE(id);
  const MemorySummary memory = *runtime.memory_summary(*id);
  INFO("arena " << memory.arena_bytes << " lower bound " << memory.lower_bound_bytes << " unplanned "
                << memory.unplanned_bytes);
  CHECK(double(memory.arena_bytes) <= 1.05 * double(memory.lower_bound_bytes));
  // The largest live pair is the stem output and the first depthwise output: 2 x 112 x 112 x 32 floats.
  CHECK(memory.lower_bound_bytes >= 2ull * 112 * 112 * 32 * 4);
  CHECK(memory.unplanned_bytes > 4 * memory.arena_bytes);
}

#if KILN_WITH_NEON
TEST_CASE("The example networks on NeonBackend match RefBackend, every layer with a Neon kernel on NeonBackend",
          "[runtime][examples][neon]") {
  for (auto [name, build] : {std::pair{"small_cnn", +[] { return examples::small_cnn(); }},
                             std::pair{"mobilenet_v1_like 64", +[] { return examples::mobilenet_v1_like(64); }},
                             std::pair{"mobilenet_v2 64", +[] { return examples::mobilenet_v2(64, 100); }}}) {
    SECTION(name) {
      auto optimized = optimize<NeonBackend, RefBackend>(build());
      REQUIRE(optimized);
      // Reshape has no Neon kernel (RefBackend's is a copy already), so it goes to RefBackend.
      for (LayerId id : optimized->execution_order()) {
        const Layer& layer = optimized->network().layer(id);
        if (optimized->backend_index(id) == LayerAssignment::no_backend) continue;
        INFO(layer.name);
        CHECK(optimized->backend_id(id) == (layer.is<ops::Reshape>() ? "CpuRef" : "CpuAcc"));
      }
      for (unsigned threads : {1u, 2u}) {
        BackendOptions<NeonBackend, RefBackend> options;
        options.get<NeonBackend>().threads = threads;
        Runtime<NeonBackend, RefBackend> runtime({}, options);
        auto id = runtime.load(*optimized);
        REQUIRE(id);
        const TensorInfo in_info = *runtime.input_info(*id, 0), out_info = *runtime.output_info(*id, 0);
        std::vector<float> input = examples::WeightGenerator(7).values(in_info.num_elements(), 1.0f);
        std::vector<float> output(out_info.num_elements());
        const InputBinding in[] = {{0, {in_info, input.data()}}};
        const OutputBinding out[] = {{0, {out_info, output.data()}}};
        REQUIRE(runtime.enqueue(*id, in, out));
        const Outcome reference = run_on_ref(build());
        check_probabilities(output);
        for (std::size_t i = 0; i < output.size(); ++i)
          REQUIRE(output[i] == Approx(reference.output[i]).margin(1e-6).epsilon(1e-4));
      }
    }
  }
}
#endif
