// SPDX-License-Identifier: Apache-2.0
// What kiln's benchmarks share: timing, the result table and its CSV, test data, loading a network.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <kiln/kiln.hpp>

namespace kiln::bench {

using Clock = std::chrono::steady_clock;

/// Median, minimum and mean seconds of f over repeated runs (at least `runs`, and at least 0.3 s).
struct Timing {
  double median, min, mean;
};
inline Timing measure(const std::function<void()>& f, int runs = 7) {
  f();  // warm-up: caches, page faults, lazy thread pools
  std::vector<double> seconds;
  const auto start = Clock::now();
  while (static_cast<int>(seconds.size()) < runs || std::chrono::duration<double>(Clock::now() - start).count() < 0.3) {
    const auto t0 = Clock::now();
    f();
    seconds.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    if (seconds.size() > 2000) break;
  }
  std::ranges::sort(seconds);
  double total = 0;
  for (double s : seconds) total += s;
  return {seconds[seconds.size() / 2], seconds.front(), total / static_cast<double>(seconds.size())};
}

struct Row {
  std::string name, variant;
  double kiln;
  std::string anchor;
  double anchor_value;
  std::string unit;
  bool higher_is_better;
  double ratio() const { return higher_is_better ? kiln / anchor_value : anchor_value / kiln; }
};
inline std::vector<Row> rows;

inline void add(Row row) {
  std::printf("%-34s %-26s %12.4g %-18s %12.4g %-8s %7.3f\n", row.name.c_str(), row.variant.c_str(), row.kiln,
              row.anchor.c_str(), row.anchor_value, row.unit.c_str(), row.ratio());
  rows.push_back(std::move(row));
}

/// A CSV field, quoted when it holds a comma or a quote ("latency median, 1 thread").
inline std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

inline std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 2654435761u + seed) % 2001) / 1000.0f - 1.0f;
  return v;
}

/// Writes every row added so far as CSV (case, variant, kiln_value, anchor, anchor_value, unit,
/// ratio), after `extra` lines (the machine's limits) in the same format.
inline bool write_csv(const char* path, const std::string& extra) {
  FILE* csv = std::fopen(path, "w");
  if (!csv) return false;
  std::fprintf(csv, "case,variant,kiln_value,anchor,anchor_value,unit,ratio\n%s", extra.c_str());
  for (const Row& r : rows)
    std::fprintf(csv, "%s,%s,%g,%s,%g,%s,%g\n", csv_field(r.name).c_str(), csv_field(r.variant).c_str(), r.kiln,
                 csv_field(r.anchor).c_str(), r.anchor_value, csv_field(r.unit).c_str(), r.ratio());
  std::fclose(csv);
  std::printf("wrote %s\n", path);
  return true;
}

struct Loaded {
  double load_ms;
  std::function<void()> infer;
  std::uint64_t arena_bytes;  ///< the memory plan's working memory
};

/// Floats aligned for zero-copy import and export, so that the runtime reads and writes them in
/// place as the anchors do, instead of copying through its arena.
struct AlignedFloats {
  std::unique_ptr<float[], decltype(&std::free)> data{nullptr, &std::free};
  std::size_t size = 0;
  void resize(std::size_t n) {
    data.reset(static_cast<float*>(std::aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64)));
    size = n;
  }
  float& operator[](std::size_t i) { return data[i]; }
};

/// Optimizes and loads `network` on Runtime<Bs...> (NeonBackend with `threads` threads), with
/// zero-copy input and output buffers sized and filled here; `infer` runs one inference.
template <class... Bs>
Loaded load_network(kiln::Network network, unsigned threads, AlignedFloats& input, AlignedFloats& output,
                    kiln::BackendOptions<Bs...> options = {}, const kiln::OptimizerOptions& optimizer = {}) {
  auto optimized = kiln::optimize<Bs...>(std::move(network), optimizer);
  if (!optimized) {
    std::printf("optimize failed: %s\n", optimized.status().message().c_str());
    std::exit(1);
  }
#if KILN_WITH_NEON
  if constexpr ((std::same_as<Bs, kiln::NeonBackend> || ...))
    options.template get<kiln::NeonBackend>().threads = threads;
#else
  (void)threads;
#endif
  auto runtime = std::make_shared<kiln::Runtime<Bs...>>(kiln::RuntimeOptions{}, options);
  const auto t0 = Clock::now();
  auto id = runtime->load(*optimized, {.import_inputs = true, .export_outputs = true});
  const double load_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  if (!id) {
    std::printf("load failed: %s\n", id.status().message().c_str());
    std::exit(1);
  }
  const auto values = random_floats(runtime->input_info(*id, 0)->num_elements(), 7);
  input.resize(values.size());
  std::copy(values.begin(), values.end(), input.data.get());
  output.resize(runtime->output_info(*id, 0)->num_elements());
  const kiln::InputBinding in{0, {*runtime->input_info(*id, 0), input.data.get()}};
  const kiln::OutputBinding out{0, {*runtime->output_info(*id, 0), output.data.get()}};
  return {load_ms,
          [runtime, id = *id, in, out] {
            if (auto s = runtime->enqueue(id, {&in, 1}, {&out, 1}); !s) std::printf("%s\n", s.message().c_str());
          },
          runtime->memory_summary(*id)->arena_bytes};
}

}  // namespace kiln::bench
