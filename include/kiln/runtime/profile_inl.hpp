// SPDX-License-Identifier: Apache-2.0
// Profile's printouts (see profile.hpp).
#pragma once

#include <algorithm>
#include <cstdio>
#include <map>

#include "kiln/runtime/profile.hpp"

namespace kiln {

namespace detail {
KILN_INLINE std::string profile_fixed(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f", value);
  return buffer;
}
KILN_INLINE std::string profile_line(std::string_view a, std::string_view b, std::string_view c, std::string_view d,
                                     std::string_view e, std::string_view f, std::string_view g) {
  char buffer[256];
  std::snprintf(buffer, sizeof buffer, "%-32.*s %-22.*s %-8.*s %6.*s %12.*s %10.*s %8.*s\n", int(a.size()), a.data(),
                int(b.size()), b.data(), int(c.size()), c.data(), int(d.size()), d.data(), int(e.size()), e.data(),
                int(f.size()), f.data(), int(g.size()), g.data());
  return buffer;
}
KILN_INLINE std::string profile_escaped(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out;
}
KILN_INLINE std::string profile_event(std::string_view name, std::string_view category, double start, double duration,
                                      std::string_view args) {
  return detail::str_cat("{\"name\":\"", profile_escaped(name), "\",\"cat\":\"", category,
                         "\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":", profile_fixed(start),
                         ",\"dur\":", profile_fixed(duration), args, "}");
}
}  // namespace detail

KILN_INLINE std::string Profile::to_table() const {
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
  std::string text = detail::profile_line("layer", "op", "backend", "runs", "total us", "mean us", "share");
  for (const auto& [name, row] : sorted)
    text += detail::profile_line(name, row.op, row.backend, std::to_string(row.count), detail::profile_fixed(row.total),
                                 detail::profile_fixed(row.total / double(row.count)),
                                 detail::profile_fixed(all > 0 ? 100.0 * row.total / all : 0.0) + " %");
  text += detail::str_cat("load ", detail::profile_fixed(load_us), " us; ", inferences.size(), " inferences");
  if (!inferences.empty()) {
    std::vector<double> totals;
    for (const auto& inference : inferences) totals.push_back(inference.duration_us);
    std::ranges::sort(totals);
    text += detail::str_cat(", median ", detail::profile_fixed(totals[totals.size() / 2]), " us, min ",
                            detail::profile_fixed(totals.front()), " us");
  }
  return text + '\n';
}

KILN_INLINE std::string Profile::to_chrome_trace() const {
  std::string json = "{\"traceEvents\":[";
  json += detail::profile_event("load", "load", 0, load_us, "");
  for (std::size_t i = 0; i < inferences.size(); ++i) {
    const InferenceTiming& inference = inferences[i];
    json += ',' + detail::profile_event(detail::str_cat("inference ", i), "inference", inference.start_us,
                                        inference.duration_us, "");
    for (const LayerTiming& layer : inference.layers)
      json += ',' + detail::profile_event(
                        layer.layer, "layer", inference.start_us + layer.start_us, layer.duration_us,
                        detail::str_cat(",\"args\":{\"op\":\"", layer.op, "\",\"backend\":\"", layer.backend, "\"}"));
  }
  return json + "],\"displayTimeUnit\":\"ms\"}";
}

}  // namespace kiln
