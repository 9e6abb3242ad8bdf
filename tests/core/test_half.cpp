// SPDX-License-Identifier: Apache-2.0
// Float16 conversions: hand-computed bit patterns, and numpy's roundings (tests/fixtures/half.txt,
// tools/gen_half_fixture.py).
#include <bit>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <kiln/core/half.hpp>

using kiln::float_to_half;
using kiln::half_to_float;

TEST_CASE("Float16: hand-computed conversions", "[core][half]") {
  CHECK(float_to_half(1.0f) == 0x3c00);
  CHECK(float_to_half(-2.0f) == 0xc000);
  CHECK(float_to_half(0.0f) == 0x0000);
  CHECK(float_to_half(-0.0f) == 0x8000);
  CHECK(float_to_half(65504.0f) == 0x7bff);  // the largest Float16
  CHECK(float_to_half(65519.0f) == 0x7bff);  // below the tie with 65536
  CHECK(float_to_half(65520.0f) == 0x7c00);  // the tie rounds to even: infinity
  CHECK(float_to_half(std::numeric_limits<float>::infinity()) == 0x7c00);
  CHECK(float_to_half(-std::numeric_limits<float>::infinity()) == 0xfc00);
  CHECK(float_to_half(0x1p-14f) == 0x0400);         // the smallest normal
  CHECK(float_to_half(0x1p-24f) == 0x0001);         // the smallest subnormal
  CHECK(float_to_half(0x1p-25f) == 0x0000);         // a tie with zero: even
  CHECK(float_to_half(0x1.000002p-25f) == 0x0001);  // just past it
  CHECK(float_to_half(0x3p-25f) == 0x0002);         // 1.5 ulps: tie to even (2)
  CHECK(float_to_half(0x1.ffcp-15f) == 0x0400);     // subnormal rounding up to normal
  CHECK(float_to_half(1.0f + 0x1p-11f) == 0x3c00);  // tie: 1.0's mantissa is even
  CHECK(float_to_half(1.0f + 0x3p-11f) == 0x3c02);  // tie: rounds up to even
  CHECK(float_to_half(0x1.002002p+0f) == 0x3c01);   // one float past that tie
  CHECK(float_to_half(0.1f) == 0x2e66);
  const kiln::Half nan = float_to_half(std::numeric_limits<float>::quiet_NaN());
  CHECK((nan & 0x7c00) == 0x7c00);
  CHECK((nan & 0x03ff) != 0);
  CHECK(float_to_half(std::bit_cast<float>(0xff800001u)) == 0xfe00);  // a signalling NaN comes out quiet, sign kept

  CHECK(half_to_float(0x3c00) == 1.0f);
  CHECK(half_to_float(0x7bff) == 65504.0f);
  CHECK(half_to_float(0x0001) == 0x1p-24f);
  CHECK(half_to_float(0x03ff) == 0x1.ff8p-15f);  // the largest subnormal
  CHECK(half_to_float(0x8000) == 0.0f);
  CHECK(std::signbit(half_to_float(0x8000)));
  CHECK(half_to_float(0xfc00) == -std::numeric_limits<float>::infinity());
  CHECK(std::isnan(half_to_float(0x7e00)));
  static_assert(kiln::float_to_half(kiln::half_to_float(0x3555)) == 0x3555, "the conversions are constexpr");
}

TEST_CASE("Float16: every value survives widening and narrowing", "[core][half]") {
  std::size_t bad = 0;
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7c00) == 0x7c00 && (h & 0x03ff) != 0) continue;  // NaNs
    if (float_to_half(half_to_float(static_cast<kiln::Half>(h))) != h) ++bad;
  }
  CHECK(bad == 0);
}

TEST_CASE("Float16: the same roundings as numpy", "[core][half]") {
  const std::string path = std::string(KILN_TEST_FIXTURES) + "/half.txt";
  std::ifstream file(path);
  REQUIRE(file);
  std::size_t narrowed = 0, widened = 0;
  std::string line;
  while (std::getline(file, line)) {
    std::istringstream words(line);
    std::string kind;
    std::uint32_t from = 0, to = 0;
    words >> kind >> std::hex >> from >> to;
    if (kind == "narrow") {
      INFO("float bits " << std::hex << from);
      CHECK(float_to_half(std::bit_cast<float>(from)) == to);
      ++narrowed;
    } else if (kind == "widen") {
      INFO("half bits " << std::hex << from);
      CHECK(std::bit_cast<std::uint32_t>(half_to_float(static_cast<kiln::Half>(from))) == to);
      ++widened;
    }
  }
  CHECK(narrowed > 5000);
  CHECK(widened > 1500);
}
