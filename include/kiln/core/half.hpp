// SPDX-License-Identifier: Apache-2.0
// Float16 (IEEE 754 binary16) elements: the conversions to and from float every backend shares.
#pragma once

#include <bit>
#include <cstdint>

namespace kiln {

/// One Float16 element, as its 16 bits: tensors store Float16 this way, and kernels widen it to
/// float to compute (half_to_float) and round their results back (float_to_half).
using Half = std::uint16_t;

/// The float a Float16 holds; exact (every binary16 value is a float), subnormals included.
constexpr float half_to_float(Half h) noexcept {
  const std::uint32_t sign = std::uint32_t{h & 0x8000u} << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  std::uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent != 0) return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
  if (mantissa == 0) return std::bit_cast<float>(sign);
  // A subnormal, mantissa x 2^-24: shifted up until its leading one is the implicit bit.
  std::uint32_t biased = 113;
  while ((mantissa & 0x400u) == 0) {
    mantissa <<= 1;
    --biased;
  }
  return std::bit_cast<float>(sign | (biased << 23) | ((mantissa & 0x3ffu) << 13));
}

/// `f` rounded to the nearest Float16, ties to even, as F16C's and Arm's conversions round: past
/// 65504 (from 65520 on) it is infinity, below 2^-14 a subnormal or zero of f's sign; a NaN stays a
/// quiet NaN with its sign and the top of its payload.
constexpr Half float_to_half(float f) noexcept {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  const auto sign = static_cast<Half>((bits >> 16) & 0x8000u);
  const std::uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return static_cast<Half>(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
  if (magnitude >= 0x477ff000u) return static_cast<Half>(sign | 0x7c00u);  // 65520 and up, infinity included
  if (magnitude >= 0x38800000u) {                                          // a normal Float16
    // Rebiasing the exponent (127 to 15) keeps the mantissa's bits; a carry out of the mantissa
    // while rounding steps the exponent, which is the right result.
    std::uint32_t h = (magnitude - 0x38000000u) >> 13;
    const std::uint32_t rest = magnitude & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u) != 0)) ++h;
    return static_cast<Half>(sign | h);
  }
  if (magnitude <= 0x33000000u) return sign;  // at most 2^-25, half the smallest subnormal: rounds to zero
  // A subnormal: f / 2^-24 rounded, from the 24-bit significand (exponent 102..112 here).
  const std::uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
  const std::uint32_t shift = 126 - (magnitude >> 23);
  std::uint32_t h = significand >> shift;
  const std::uint32_t rest = significand & ((1u << shift) - 1), halfway = 1u << (shift - 1);
  if (rest > halfway || (rest == halfway && (h & 1u) != 0)) ++h;
  return static_cast<Half>(sign | h);
}

}  // namespace kiln
