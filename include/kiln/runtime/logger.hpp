// SPDX-License-Identifier: Apache-2.0
// Logger: what the runtime reports about its work, at a severity the user picks; silent by default.
#pragma once

#include <cstdio>
#include <functional>
#include <string_view>

#include "kiln/detail/str_cat.hpp"

namespace kiln {

enum class LogSeverity : unsigned char { Trace, Debug, Info, Warning, Error, Off };

constexpr std::string_view to_string(LogSeverity severity) noexcept {
  constexpr std::string_view names[] = {"trace", "debug", "info", "warning", "error", "off"};
  return names[static_cast<unsigned>(severity)];
}

/// Messages at `level` or above go to `sink`, or to stderr when no sink is set. The default level
/// is Off: kiln prints nothing unless asked.
struct Logger {
  LogSeverity level = LogSeverity::Off;
  std::function<void(LogSeverity, std::string_view)> sink;

  bool enabled(LogSeverity severity) const noexcept { return severity >= level && level != LogSeverity::Off; }

  /// Formats and emits the message only when its severity is enabled.
  template <class... Pieces>
  void log(LogSeverity severity, const Pieces&... pieces) const {
    if (!enabled(severity)) return;
    const std::string message = detail::str_cat(pieces...);
    if (sink)
      sink(severity, message);
    else
      std::fprintf(stderr, "kiln %s: %s\n", std::string(to_string(severity)).c_str(), message.c_str());
  }
};

}  // namespace kiln
