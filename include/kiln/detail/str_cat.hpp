// SPDX-License-Identifier: Apache-2.0
// Builds human-readable messages from strings and numbers, usable in constant expressions.
#pragma once

#include <algorithm>
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

/// 1 where numbers in messages are written with six significant digits by a few lines of code,
/// rather than exactly by std::to_chars, whose tables and exception paths would take some 150 KiB
/// of a microcontroller's flash: by default on Arm's M profile. A build may set it either way.
#ifndef KILN_SHORT_FLOAT_TEXT
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
#define KILN_SHORT_FLOAT_TEXT 1
#else
#define KILN_SHORT_FLOAT_TEXT 0
#endif
#endif

#if KILN_SHORT_FLOAT_TEXT
/// `value` to six significant digits, as printf's %g writes it ("0.5", "1.25e-07", "inf").
inline void append_floating(std::string& out, double value) {
  if (value != value) return void(out += "nan");
  if (value < 0) {
    out += '-';
    value = -value;
  }
  if (value > 1.7976931348623157e308) return void(out += "inf");
  if (value == 0) return void(out += '0');
  int exponent = 0;  // value = mantissa x 10^exponent with mantissa in [1, 10)
  while (value >= 10) value /= 10, ++exponent;
  while (value < 1) value *= 10, --exponent;
  auto digits = static_cast<std::uint32_t>(value * 100000 + 0.5);  // six digits
  if (digits >= 1000000) digits /= 10, ++exponent;
  char text[7];
  for (int i = 5; i >= 0; --i, digits /= 10) text[i] = static_cast<char>('0' + digits % 10);
  int last = 5;
  while (last > 0 && text[last] == '0') --last;
  if (exponent >= -4 && exponent < 6) {  // plain: 0.000123, 12.5, 123456
    if (exponent < 0) out.append("0.").append(static_cast<std::size_t>(-exponent - 1), '0');
    for (int i = 0; i <= std::max(last, exponent); ++i) {
      if (i == exponent + 1 && exponent >= 0) out += '.';
      out += text[i];
    }
  } else {  // scientific: 1.25e-07
    out += text[0];
    if (last > 0) out.append(".").append(text + 1, static_cast<std::size_t>(last));
    out += exponent < 0 ? "e-" : "e+";
    if (exponent < 0) exponent = -exponent;
    if (exponent < 10) out += '0';
    append_integer(out, exponent);
  }
}
#else
/// `value` exactly: the shortest text that reads back as the same double.
inline void append_floating(std::string& out, double value) {
  char buffer[32];
  auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, error == std::errc{} ? end : buffer);
}
#endif

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
