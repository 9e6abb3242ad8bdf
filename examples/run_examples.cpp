// SPDX-License-Identifier: Apache-2.0
// kiln's main job on its embedded default: builds the example networks, runs each on every
// compiled-in backend, and prints outputs, timings and memory plans.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include <kiln/kiln.hpp>

#include "example_networks.hpp"

namespace {

struct Example {
  const char* name;
  kiln::Network (*build)();
};

kiln::Network mobilenet_v2_224() { return kiln::examples::mobilenet_v2(224); }
kiln::Network mobilenet_v1_like_224() { return kiln::examples::mobilenet_v1_like(224); }

template <class... Backends>
int run(const Example& example, int iterations) {
  using Clock = std::chrono::steady_clock;
  kiln::Runtime<Backends...> runtime;
  const auto load_start = Clock::now();
  auto optimized = kiln::optimize<Backends...>(example.build());
  if (!optimized) {
    std::fprintf(stderr, "%s: %s\n", example.name, optimized.status().message().c_str());
    return 1;
  }
  kiln::LoadOptions options;
  options.profiling = true;
  auto id = runtime.load(*optimized, options);
  if (!id) {
    std::fprintf(stderr, "%s: %s\n", example.name, id.status().message().c_str());
    return 1;
  }
  const double load_ms = std::chrono::duration<double, std::milli>(Clock::now() - load_start).count();

  const kiln::TensorInfo in_info = *runtime.input_info(*id, 0);
  const kiln::TensorInfo out_info = *runtime.output_info(*id, 0);
  kiln::examples::WeightGenerator inputs(42);
  std::vector<float> input = inputs.values(in_info.num_elements(), 1.0f);
  std::vector<float> output(out_info.num_elements());
  const kiln::InputBinding in[] = {{0, {in_info, input.data()}}};
  const kiln::OutputBinding out[] = {{0, {out_info, output.data()}}};

  std::vector<double> times;
  for (int i = 0; i < iterations; ++i) {
    const auto start = Clock::now();
    if (auto status = runtime.enqueue(*id, in, out); !status) {
      std::fprintf(stderr, "%s: %s\n", example.name, status.message().c_str());
      return 1;
    }
    times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  std::ranges::sort(times);
  const auto memory = *runtime.memory_summary(*id);
  const auto best = std::max_element(output.begin(), output.end()) - output.begin();
  std::printf("%-14s %-8s input %-22s load %7.1f ms  infer median %8.3f ms (min %8.3f, %d runs)\n", example.name,
              std::string(kiln::detail::backend_ids<Backends...>[0]).c_str(), in_info.shape.to_string().c_str(),
              load_ms, times[times.size() / 2], times.front(), iterations);
  std::printf(
      "%-14s          arena %9llu B (lower bound %9llu B, one block per tensor %9llu B), constants %llu B\n", "",
      static_cast<unsigned long long>(memory.arena_bytes), static_cast<unsigned long long>(memory.lower_bound_bytes),
      static_cast<unsigned long long>(memory.unplanned_bytes), static_cast<unsigned long long>(memory.constant_bytes));
  std::printf("%-14s          output %s: argmax %ld (p = %.4f), first values", "", out_info.shape.to_string().c_str(),
              static_cast<long>(best), output[static_cast<std::size_t>(best)]);
  for (std::size_t i = 0; i < std::min<std::size_t>(4, output.size()); ++i) std::printf(" %.5f", output[i]);
  // The profile's header and its three most expensive layers.
  const std::string table = runtime.profile(*id)->to_table();
  std::size_t end = 0;
  for (int line = 0; line < 4 && end != std::string::npos; ++line) end = table.find('\n', end + 1);
  std::printf("\n%s\n", table.substr(0, end).c_str());
  return 0;
}

}  // namespace

int main() {
  const Example examples[] = {{"mlp", kiln::examples::mlp},
                              {"small_cnn", kiln::examples::small_cnn},
                              {"mobilenet_v1", mobilenet_v1_like_224},
                              {"mobilenet_v2", mobilenet_v2_224}};
  std::printf("kiln %s: compiled-in backends: CpuRef (available)", KILN_VERSION);
#if KILN_WITH_NEON
  std::printf(", CpuAcc (%s)", kiln::NeonBackend::available() ? "available" : "unavailable");
#endif
#if KILN_WITH_CL
  std::printf(", GpuAcc (%s)", kiln::ClBackend::available() ? "available" : "unavailable: no OpenCL device");
#endif
  std::printf("\n\n");
  int failures = 0;
  for (const Example& example : examples) {
    const bool large = example.build == mobilenet_v2_224 || example.build == mobilenet_v1_like_224;
    failures += run<kiln::RefBackend>(example, large ? 3 : 20);
#if KILN_WITH_NEON
    failures += run<kiln::NeonBackend, kiln::RefBackend>(example, large ? 20 : 200);
#endif
#if KILN_WITH_CL
    if (kiln::ClBackend::available()) failures += run<kiln::ClBackend, kiln::RefBackend>(example, large ? 10 : 100);
#endif
  }
  return failures == 0 ? 0 : 1;
}
