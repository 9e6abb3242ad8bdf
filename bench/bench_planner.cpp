// SPDX-License-Identifier: Apache-2.0
// Memory planning on the example networks: for each strategy, arena bytes, the ratio to the lower
// bound (the anchor every plan is measured against, computed in the same run) and planning time.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <kiln/kiln.hpp>

#include "example_networks.hpp"

namespace {

void report(const char* network, const kiln::MemoryPlanner& planner, const std::vector<kiln::BufferRequest>& requests) {
  constexpr std::uint64_t alignment = kiln::RefBackend::alignment;
  std::vector<double> micros;
  kiln::MemoryPlan plan;
  for (int run = 0; run < 21; ++run) {
    const auto start = std::chrono::steady_clock::now();
    plan = planner.plan(requests, alignment);
    micros.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  std::ranges::sort(micros);
  const bool valid = kiln::validate_plan(requests, plan, alignment).is_ok();
  std::printf("%-16s %-22s %8zu %14llu %14llu %8.3f %12.1f %s\n", network, std::string(planner.name).c_str(),
              requests.size(), static_cast<unsigned long long>(plan.arena_size),
              static_cast<unsigned long long>(plan.lower_bound), double(plan.arena_size) / double(plan.lower_bound),
              micros[micros.size() / 2], valid ? "valid" : "INVALID");
}

}  // namespace

int main() {
  struct Case {
    const char* name;
    kiln::Network network;
  };
  Case cases[] = {{"mlp", kiln::examples::mlp()},
                  {"small_cnn", kiln::examples::small_cnn()},
                  {"mobilenet_v2_96", kiln::examples::mobilenet_v2(96)},
                  {"mobilenet_v2_224", kiln::examples::mobilenet_v2(224)}};
  std::printf("%-16s %-22s %8s %14s %14s %8s %12s\n", "network", "strategy", "tensors", "arena_bytes", "lower_bound",
              "ratio", "plan_us(med)");
  for (Case& c : cases) {
    if (auto status = c.network.infer_shapes(); !status) {
      std::printf("%s: %s\n", c.name, status.message().c_str());
      return 1;
    }
    std::vector<kiln::BufferRequest> requests;
    for (const auto& tensor : kiln::arena_tensors(c.network)) requests.push_back(tensor.request);
    for (const kiln::MemoryPlanner& planner : kiln::builtin_memory_planners) report(c.name, planner, requests);
  }
  return 0;
}
