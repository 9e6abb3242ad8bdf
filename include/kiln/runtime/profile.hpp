// SPDX-License-Identifier: Apache-2.0
// Profile: the timings a network records when loaded with profiling, as a table or a Chrome trace.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/detail/compilation.hpp"
#include "kiln/detail/mutex.hpp"
#include "kiln/detail/str_cat.hpp"

namespace kiln {

/// One workload execution.
struct LayerTiming {
  std::string layer;
  std::string_view op;
  std::string_view backend;
  double start_us = 0;  ///< since the inference started
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
  std::string to_table() const;
  /// Chrome trace-event JSON (opens in Perfetto and chrome://tracing): one complete event per
  /// load, inference and layer, in microseconds.
  std::string to_chrome_trace() const;
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
      InferenceTiming& timing =
          profile.inferences.emplace_back(InferenceTiming{record.start_us, record.duration_us, {}});
      for (const StepTiming& step : record.steps) timing.layers.push_back(describe(step));
    }
    return profile;
  }

 private:
  double load_us_ = 0;
  mutable detail::Mutex mutex_;
  std::vector<InferenceRecord> ring_;
  std::size_t recorded_ = 0;
};

}  // namespace detail
}  // namespace kiln

#if !KILN_COMPILED_LIBRARY || KILN_BUILDING_LIBRARY
#include "kiln/runtime/profile_inl.hpp"
#endif
