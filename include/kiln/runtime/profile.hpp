// SPDX-License-Identifier: Apache-2.0
// Profile: the timings a network records when loaded with profiling, as a table or a Chrome trace.
#pragma once

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/detail/str_cat.hpp"

namespace kiln {

/// One workload execution.
struct LayerTiming {
  std::string layer;
  std::string_view op;
  std::string_view backend;
  double start_us = 0;       ///< since the inference started
  double duration_us = 0;
};

/// One inference.
struct InferenceTiming {
  double start_us = 0;  ///< since the network was loaded
  double duration_us = 0;
  std::vector<LayerTiming> layers;
};

/// What a profiled network recorded (Runtime::profile): its load, and its most recent inferences
/// (LoadOptions::profile_history of them), oldest first.
struct Profile {
  double load_us = 0;
  std::vector<InferenceTiming> inferences;
  std::size_t inferences_since_load = 0;  ///< including those no longer kept

  /// Per layer: total time over all inferences, sorted by it, largest first, with its share.
  std::string to_table() const {
    struct Row {
      std::string_view op, backend;
      double total = 0;
      std::size_t count = 0;
    };
    std::map<std::string_view, Row> rows;
    double all = 0;
    for (const auto& inference : inferences)
      for (const auto& layer : inference.layers) {
        Row& row = rows[layer.layer];
        row.op = layer.op;
        row.backend = layer.backend;
        row.total += layer.duration_us;
        ++row.count;
        all += layer.duration_us;
      }
    std::vector<std::pair<std::string_view, Row>> sorted(rows.begin(), rows.end());
    std::ranges::sort(sorted, [](const auto& a, const auto& b) { return a.second.total > b.second.total; });
    std::string text = line("layer", "op", "backend", "runs", "total us", "mean us", "share");
    for (const auto& [name, row] : sorted)
      text += line(name, row.op, row.backend, std::to_string(row.count), fixed(row.total), fixed(row.total / double(row.count)),
                   fixed(all > 0 ? 100.0 * row.total / all : 0.0) + " %");
    text += detail::str_cat("load ", fixed(load_us), " us; ", inferences.size(), " inferences");
    if (!inferences.empty()) {
      std::vector<double> totals;
      for (const auto& inference : inferences) totals.push_back(inference.duration_us);
      std::ranges::sort(totals);
      text += detail::str_cat(", median ", fixed(totals[totals.size() / 2]), " us, min ", fixed(totals.front()), " us");
    }
    return text + '\n';
  }

  /// Chrome trace-event JSON (opens in Perfetto and chrome://tracing): one complete event per
  /// load, inference and layer, in microseconds.
  std::string to_chrome_trace() const {
    std::string json = "{\"traceEvents\":[";
    json += event("load", "load", 0, load_us, "");
    for (std::size_t i = 0; i < inferences.size(); ++i) {
      const InferenceTiming& inference = inferences[i];
      json += ',' + event(detail::str_cat("inference ", i), "inference", inference.start_us, inference.duration_us, "");
      for (const LayerTiming& layer : inference.layers)
        json += ',' + event(layer.layer, "layer", inference.start_us + layer.start_us, layer.duration_us,
                            detail::str_cat(",\"args\":{\"op\":\"", layer.op, "\",\"backend\":\"", layer.backend, "\"}"));
    }
    return json + "],\"displayTimeUnit\":\"ms\"}";
  }

 private:
  static std::string fixed(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1f", value);
    return buffer;
  }
  static std::string line(std::string_view a, std::string_view b, std::string_view c, std::string_view d,
                          std::string_view e, std::string_view f, std::string_view g) {
    char buffer[256];
    std::snprintf(buffer, sizeof buffer, "%-32.*s %-22.*s %-8.*s %6.*s %12.*s %10.*s %8.*s\n", int(a.size()), a.data(),
                  int(b.size()), b.data(), int(c.size()), c.data(), int(d.size()), d.data(), int(e.size()), e.data(),
                  int(f.size()), f.data(), int(g.size()), g.data());
    return buffer;
  }
  static std::string escaped(std::string_view text) {
    std::string out;
    for (char c : text) {
      if (c == '"' || c == '\\') out += '\\';
      if (static_cast<unsigned char>(c) >= 0x20) out += c;
    }
    return out;
  }
  static std::string event(std::string_view name, std::string_view category, double start, double duration,
                           std::string_view args) {
    return detail::str_cat("{\"name\":\"", escaped(name), "\",\"cat\":\"", category, "\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":",
                           fixed(start), ",\"dur\":", fixed(duration), args, "}");
  }
};

namespace detail {

/// One layer run, as a profiled inference records it: which step, and when.
struct StepTiming {
  std::uint32_t step = 0;
  double start_us = 0;  ///< since the inference started
  double duration_us = 0;
};

/// One profiled inference. Each working memory has one to record into; its buffer is reserved once,
/// so recording allocates nothing.
struct InferenceRecord {
  double start_us = 0;
  double duration_us = 0;
  std::vector<StepTiming> steps;
};

/// The last `history` profiled inferences of a network, in a ring whose slots are reserved at load:
/// recording an inference copies it into the oldest slot and allocates nothing.
class ProfileRecorder {
 public:
  void reset(double load_us, std::size_t steps, std::size_t history) {
    load_us_ = load_us;
    ring_.assign(history, {});
    for (InferenceRecord& record : ring_) record.steps.reserve(steps);
  }
  void record(const InferenceRecord& inference) {
    std::lock_guard lock(mutex_);
    if (ring_.empty()) return;
    InferenceRecord& slot = ring_[recorded_ % ring_.size()];
    slot.start_us = inference.start_us;
    slot.duration_us = inference.duration_us;
    slot.steps.assign(inference.steps.begin(), inference.steps.end());
    ++recorded_;
  }
  double load_us() const noexcept { return load_us_; }

  /// The public Profile, naming each step's layer, op and backend with `describe(step, timing)`.
  template <class Describe>
  Profile snapshot(Describe&& describe) const {
    std::lock_guard lock(mutex_);
    Profile profile{load_us_, {}, recorded_};
    const std::size_t kept = std::min(recorded_, ring_.size());
    for (std::size_t i = recorded_ - kept; i < recorded_; ++i) {
      const InferenceRecord& record = ring_[i % ring_.size()];
      InferenceTiming& timing = profile.inferences.emplace_back(InferenceTiming{record.start_us, record.duration_us, {}});
      for (const StepTiming& step : record.steps) timing.layers.push_back(describe(step));
    }
    return profile;
  }

 private:
  double load_us_ = 0;
  mutable std::mutex mutex_;
  std::vector<InferenceRecord> ring_;
  std::size_t recorded_ = 0;
};

}  // namespace detail
}  // namespace kiln
