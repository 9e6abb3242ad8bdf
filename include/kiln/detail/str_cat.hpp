// SPDX-License-Identifier: Apache-2.0
// Builds human-readable messages from strings and numbers, usable in constant expressions.
#pragma once

#include <charconv>
#include <concepts>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

namespace kiln::detail {

template <std::integral Int>
constexpr void append_integer(std::string& out, Int value) {
  if constexpr (std::same_as<Int, bool>) {
    out += value ? "true" : "false";
  } else {
    // Work in the unsigned domain so that the most negative value does not overflow.
    using Unsigned = std::make_unsigned_t<Int>;
    Unsigned magnitude = static_cast<Unsigned>(value);
    if constexpr (std::is_signed_v<Int>) {
      if (value < 0) {
        out += '-';
        magnitude = static_cast<Unsigned>(Unsigned{0} - magnitude);
      }
    }
    char digits[24];
    int count = 0;
    do {
      digits[count++] = static_cast<char>('0' + magnitude % 10);
      magnitude /= 10;
    } while (magnitude != 0);
    while (count > 0) out += digits[--count];
  }
}

inline void append_floating(std::string& out, double value) {
  char buffer[32];
  auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, error == std::errc{} ? end : buffer);
}

template <class T>
constexpr void append_piece(std::string& out, const T& piece) {
  if constexpr (std::is_same_v<T, char>) {
    out += piece;
  } else if constexpr (std::integral<T>) {
    append_integer(out, piece);
  } else if constexpr (std::floating_point<T>) {
    append_floating(out, static_cast<double>(piece));
  } else if constexpr (std::is_enum_v<T>) {
    append_integer(out, static_cast<std::underlying_type_t<T>>(piece));
  } else {
    out += std::string_view(piece);
  }
}

/// Concatenates strings, characters and numbers into one std::string.
template <class... Pieces>
constexpr std::string str_cat(const Pieces&... pieces) {
  std::string out;
  (append_piece(out, pieces), ...);
  return out;
}

/// Writes a list of numbers as "[a, b, c]".
template <class T>
constexpr std::string list_to_string(std::span<const T> values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i != 0) out += ", ";
    append_piece(out, values[i]);
  }
  out += ']';
  return out;
}

}  // namespace kiln::detail
