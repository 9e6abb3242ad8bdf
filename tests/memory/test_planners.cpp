// SPDX-License-Identifier: Apache-2.0
// memory/: the strategies, the lower bound and the validator, on hand-made and random interval sets.
#include <random>

#include <catch2/catch.hpp>
#include <kiln/memory/planners.hpp>

using namespace kiln;

namespace {
constexpr BufferRequest chain[] = {{1000, 0, 1}, {500, 1, 2}, {1000, 2, 3}, {200, 3, 4}};

constexpr bool plans_at_compile_time() {
  const MemoryPlan plan = plan_memory<GreedyBySize>(chain, 64);
  return plan.arena_size == 1536 && plan.lower_bound == 1536 && plan.offsets[2] == 0;
}
static_assert(plans_at_compile_time(), "planning runs in constant expressions");
#if KILN_TEST_CONSTEXPR_STRING
static_assert(validate_plan(chain, plan_memory<GreedyBySize>(chain, 64), 64).is_ok(), "so does validation");
#endif
}  // namespace

TEST_CASE("Hand-made chain: greedy reuses memory, one block per tensor does not", "[memory]") {
  // Sizes rounded to 64: 1024, 512, 1024, 256. Peak live set: steps 1-2 and 2-3, 1536 bytes.
  CHECK(memory_lower_bound(chain, 64) == 1024 + 512);
  const MemoryPlan linear = plan_memory<OneBlockPerTensor>(chain, 64);
  CHECK(linear.arena_size == 1024 + 512 + 1024 + 256);
  CHECK(linear.offsets == std::vector<std::uint64_t>{0, 1024, 1536, 2560});
  CHECK(validate_plan(chain, linear, 64));
  const MemoryPlan greedy = plan_memory<GreedyBySize>(chain, 64);
  CHECK(validate_plan(chain, greedy, 64));
  // The two 1000-byte buffers never live at the same time and share offset 0; the others go above.
  CHECK(greedy.offsets == std::vector<std::uint64_t>{0, 1024, 0, 1024});
  CHECK(greedy.arena_size == 1536);
  CHECK(greedy.lower_bound == 1536);
}

TEST_CASE("Greedy reaches the lower bound when buffers can take turns", "[memory]") {
  // Two buffers alive at disjoint times share one offset.
  const BufferRequest turns[] = {{4096, 0, 0}, {4096, 1, 1}, {4096, 2, 2}};
  const MemoryPlan greedy = plan_memory<GreedyBySize>(turns, 64);
  CHECK(greedy.arena_size == 4096);
  CHECK(greedy.offsets == std::vector<std::uint64_t>{0, 0, 0});
}

TEST_CASE("Greedy fills the gap a buffer that is no longer alive left behind", "[memory]") {
  const BufferRequest requests[] = {
      {1024, 0, 4},  // placed first at 0
      {512, 0, 0},   // short-lived, at 1024
      {256, 0, 4},   // long-lived, at 1536
      {256, 1, 1},   // fits the 512 gap [1024, 1536) left by the short-lived buffer
  };
  const MemoryPlan plan = plan_memory<GreedyBySize>(requests, 64);
  REQUIRE(validate_plan(requests, plan, 64));
  CHECK(plan.offsets[3] == 1024);
  CHECK(plan.arena_size == 1792);
}

TEST_CASE("Greedy prefers the smallest gap that fits over the first one", "[memory]") {
  // Long-lived buffers end up at [512,768), [768,1024) and [1152,1280), leaving gaps [0,512) and [1024,1152)
  // once the short-lived fillers are gone; a 128-byte buffer goes to the snug 128-byte gap.
  const BufferRequest requests[] = {
      {512, 0, 0},  // short-lived filler
      {256, 0, 3}, {256, 0, 3}, {128, 0, 0}, {128, 0, 3}, {128, 2, 2},
  };
  const MemoryPlan plan = plan_memory<GreedyBySize>(requests, 64);
  REQUIRE(validate_plan(requests, plan, 64));
  // Placement order: 512@0, 256@512, 256@768, 128@1024, 128@1152, then the last one sees busy
  // [512,768) [768,1024) [1152,1280): gaps [0,512) and [1024,1152); best fit is 1024.
  CHECK(plan.offsets == std::vector<std::uint64_t>{0, 512, 768, 1024, 1152, 1024});
  CHECK(plan.arena_size == 1280);
}

TEST_CASE("The validator catches overlap, misalignment and overflow", "[memory][errors]") {
  const BufferRequest requests[] = {{100, 0, 2}, {100, 1, 3}};
  MemoryPlan plan{{0, 64}, 256, 0};
  CHECK_THAT(validate_plan(requests, plan, 64).message(),
             Catch::Contains("buffers 0 and 1 are alive at the same time but overlap"));
  plan.offsets = {0, 130};
  CHECK_THAT(validate_plan(requests, plan, 64).message(), Catch::Contains("not aligned to 64"));
  plan.offsets = {0, 192};
  CHECK_THAT(validate_plan(requests, plan, 64).message(), Catch::Contains("ends past the arena of 256 bytes"));
  plan.offsets = {0, 128};
  CHECK(validate_plan(requests, plan, 64));
  const BufferRequest backwards[] = {{10, 3, 1}};
  CHECK_THAT(validate_plan(backwards, MemoryPlan{{0}, 64, 0}, 64).message(), Catch::Contains("before it starts"));
}

TEST_CASE("Random interval sets: every plan validates and respects the bounds", "[memory][property]") {
  std::mt19937_64 rng(1234);
  for (int trial = 0; trial < 300; ++trial) {
    const int count = std::uniform_int_distribution<int>(1, 60)(rng);
    const std::uint32_t steps = std::uniform_int_distribution<std::uint32_t>(1, 40)(rng);
    std::vector<BufferRequest> requests;
    for (int i = 0; i < count; ++i) {
      const std::uint32_t first = std::uniform_int_distribution<std::uint32_t>(0, steps - 1)(rng);
      const std::uint32_t last =
          std::uniform_int_distribution<std::uint32_t>(first, std::min(steps - 1, first + 8))(rng);
      const std::uint64_t size = std::uniform_int_distribution<std::uint64_t>(0, 1 << 16)(rng);
      requests.push_back({size, first, last});
    }
    const std::uint64_t alignment = trial % 2 ? 64 : 16;
    INFO("trial " << trial << ", " << count << " buffers");
    const MemoryPlan linear = plan_memory<OneBlockPerTensor>(requests, alignment);
    const MemoryPlan greedy = plan_memory<GreedyBySize>(requests, alignment);
    const MemoryPlan breadth = plan_memory<GreedyByBreadth>(requests, alignment);
    REQUIRE(validate_plan(requests, linear, alignment));
    REQUIRE(validate_plan(requests, greedy, alignment));
    REQUIRE(validate_plan(requests, breadth, alignment));
    CHECK(breadth.arena_size >= breadth.lower_bound);
    CHECK(breadth.arena_size <= linear.arena_size);
    CHECK(greedy.arena_size >= greedy.lower_bound);
    CHECK(greedy.arena_size <= linear.arena_size);
    CHECK(linear.lower_bound == greedy.lower_bound);
    std::uint64_t total = 0;
    for (const auto& r : requests) total += (r.size + alignment - 1) / alignment * alignment;
    CHECK(linear.arena_size == total);
  }
}

TEST_CASE("Strategies can be chosen by type or by name", "[memory]") {
  CHECK(MemoryPlanner::of<GreedyBySize>().name == "greedy-by-size");
  auto by_name = memory_planner_by_name("one-block-per-tensor");
  REQUIRE(by_name);
  CHECK(by_name->plan(chain, 64).arena_size == 2816);
  CHECK(memory_planner_by_name("greedy-by-breadth")->plan(chain, 64).arena_size == 1536);
  CHECK(memory_planner_by_name("best").status().message() ==
        "memory strategy 'best' does not exist; kiln has one-block-per-tensor, greedy-by-size, greedy-by-breadth");
}

TEST_CASE("Greedy by breadth packs the widest step first", "[memory]") {
  // Step 1 is the widest (A, B, C live); its buffers are placed first, largest first: B, A, C.
  const BufferRequest requests[] = {{256, 0, 1}, {512, 1, 2}, {128, 1, 1}, {640, 3, 3}};
  const MemoryPlan plan = plan_memory<GreedyByBreadth>(requests, 64);
  REQUIRE(validate_plan(requests, plan, 64));
  CHECK(plan.offsets == std::vector<std::uint64_t>{512, 0, 768, 0});
  CHECK(plan.arena_size == 896);
  CHECK(plan.lower_bound == 896);
}
