// SPDX-License-Identifier: Apache-2.0
// Requantization: hand-computed multipliers and roundings, the saturation edges, and a sweep
// against the exact product in long double.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include <catch2/catch.hpp>
#include <kiln/core/requantization.hpp>

using namespace kiln;

namespace {
constexpr std::int32_t int32_min = std::numeric_limits<std::int32_t>::min();
constexpr std::int32_t int32_max = std::numeric_limits<std::int32_t>::max();
constexpr std::int32_t two_to_30 = std::int32_t{1} << 30;

Requantization make(double real) {
  auto r = Requantization::from_real(real);
  REQUIRE(r);
  return *r;
}
}  // namespace

TEST_CASE("Requantization: multipliers as mantissa and shift", "[core][quantization]") {
  CHECK(make(0.5).multiplier == two_to_30);
  CHECK(make(0.5).shift == 0);
  CHECK(make(1.0).multiplier == two_to_30);
  CHECK(make(1.0).shift == 1);
  CHECK(make(0.75).multiplier == 1610612736);  // 0.75 x 2^31
  CHECK(make(0.75).shift == 0);
  CHECK(make(3.0).multiplier == 1610612736);
  CHECK(make(3.0).shift == 2);
  // A mantissa that rounds up to 1 becomes 0.5 of the next power.
  const Requantization almost_one = make(1.0 - std::ldexp(1.0, -40));
  CHECK(almost_one.multiplier == two_to_30);
  CHECK(almost_one.shift == 1);
  // 2^-32: the smallest held; below it every accumulator maps to 0.
  CHECK(make(std::ldexp(1.0, -32)).shift == -31);
  CHECK(make(std::ldexp(1.0, -40)).multiplier == 0);
}

TEST_CASE("Requantization: ties round up, once", "[core][quantization]") {
  const Requantization half = make(0.5);
  CHECK(half.apply(3) == 2);    // 1.5
  CHECK(half.apply(-3) == -1);  // -1.5
  CHECK(half.apply(1) == 1);    // 0.5
  CHECK(half.apply(-1) == 0);   // -0.5
  CHECK(half.apply(4) == 2);
  const Requantization quarter = make(0.25);
  CHECK(quarter.apply(1) == 0);  // 0.25: a doubling high multiply and a rounding shift would give 1
  CHECK(quarter.apply(2) == 1);  // 0.5
  CHECK(quarter.apply(-2) == 0);
  CHECK(quarter.apply(6) == 2);  // 1.5
  CHECK(quarter.apply(-6) == -1);
  CHECK(quarter.apply(-7) == -2);  // -1.75
  const Requantization one = make(1.0);
  for (std::int32_t x : {int32_min, -7, 0, 12345, int32_max}) CHECK(one.apply(x) == x);
  CHECK(make(3.0).apply(1000) == 3000);
  // 0.1's 31-bit mantissa is a little under 0.1: 15 x M = 1.4999999996, not a tie.
  CHECK(make(0.1).apply(15) == 1);
  CHECK(make(0.1).apply(-15) == -1);
}

TEST_CASE("Requantization: saturation at int32's edges and at the output's range", "[core][quantization]") {
  CHECK(make(3.0).apply(int32_max) == int32_max);
  CHECK(make(3.0).apply(int32_min) == int32_min);
  CHECK(make(std::ldexp(1.0, 29)).apply(4) == int32_max);   // 2^31 does not fit
  CHECK(make(std::ldexp(1.0, -32)).apply(int32_max) == 0);  // 0.49999...
  CHECK(make(std::ldexp(1.0, -32)).apply(int32_min) == 0);  // -0.5, up
  CHECK(make(std::ldexp(1.0, -31)).apply(int32_min) == -1);
  CHECK(make(std::ldexp(1.0, -40)).apply(int32_max) == 0);
  // Zero point, then the output's range (uint8 here), narrowed by a fused ReLU to [zero point, 255].
  const Requantization half = make(0.5);
  CHECK(requantize(100, half, 10, 0, 255) == 60);
  CHECK(requantize(-100, half, 10, 0, 255) == 0);
  CHECK(requantize(-100, half, 10, 10, 255) == 10);
  CHECK(requantize(int32_max, make(3.0), 255, 0, 255) == 255);  // no overflow adding the zero point
  CHECK(requantize(int32_min, make(3.0), -128, -128, 127) == -128);
}

TEST_CASE("Requantization refuses multipliers it cannot hold, with the reason", "[core][quantization][errors]") {
  for (double bad : {0.0, -1.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
    auto r = Requantization::from_real(bad);
    REQUIRE_FALSE(r);
    CHECK_THAT(r.status().message(), Catch::Contains("must be positive and finite"));
  }
  auto big = Requantization::from_real(std::ldexp(1.0, 30));
  REQUIRE_FALSE(big);
  CHECK_THAT(big.status().message(), Catch::Contains("2^30 or more"));
}

TEST_CASE("Requantization is within half a unit of the exact product, plus M's rounding", "[core][quantization]") {
  // Independent of the representation: compares with acc x real in long double (64-bit mantissa,
  // so acc x real is exact to far below the tolerance).
  std::mt19937 random(2026);
  std::uniform_real_distribution<double> exponent(-20.0, 10.0);
  std::uniform_int_distribution<std::int32_t> any(int32_min, int32_max);
  std::uniform_int_distribution<std::int32_t> small(-100000, 100000);
  for (int trial = 0; trial < 20000; ++trial) {
    const double real = std::exp2(exponent(random));
    const std::int32_t acc = trial % 2 == 0 ? any(random) : small(random);
    const long double exact = static_cast<long double>(acc) * real;
    const long double expected = std::clamp<long double>(exact, int32_min, int32_max);
    const long double tolerance = 0.5L + std::fabs(exact) * std::ldexp(1.0L, -30);
    const std::int32_t got = make(real).apply(acc);
    INFO("acc " << acc << ", multiplier " << real);
    CHECK(std::fabs(static_cast<long double>(got) - expected) <= tolerance);
  }
}

namespace {
// TensorFlow Lite's MultiplyByQuantizedMultiplier as gemmlowp writes it, two steps, for the test:
// a rounding doubling high multiply (a nudge of 2^30, or 1 - 2^30 below zero, then a division that
// truncates), then a rounding right shift (ties away from zero).
std::int64_t gemmlowp_high_multiply(std::int64_t a, std::int64_t b) {
  const std::int64_t product = a * b;
  return (product + (product >= 0 ? (1 << 30) : 1 - (1 << 30))) / (std::int64_t{1} << 31);
}
std::int64_t gemmlowp_rounding_shift(std::int64_t x, int exponent) {
  const std::int64_t mask = (std::int64_t{1} << exponent) - 1;
  const std::int64_t remainder = x & mask, threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}
std::int64_t tflite_requantize(std::int32_t acc, const Requantization& r) {
  const int left = r.shift > 0 ? r.shift : 0, right = r.shift > 0 ? 0 : -r.shift;
  return gemmlowp_rounding_shift(gemmlowp_high_multiply(std::int64_t{acc} * (std::int64_t{1} << left), r.multiplier),
                                 right);
}
Requantization make_tflite(double real) {
  auto r = Requantization::from_real(real, QuantizedArithmetic::TfLite);
  REQUIRE(r);
  REQUIRE(r->round_twice);
  return *r;
}
}  // namespace

TEST_CASE("Requantization in TensorFlow Lite's arithmetic rounds twice, as gemmlowp does", "[core][quantization]") {
  const Requantization quarter = make_tflite(0.25);
  CHECK(quarter.apply(1) == 1);                  // 0.25: the high multiply makes it 0.5, the shift rounds that up
  CHECK(quarter.apply(-1) == 0);                 // -0.25
  CHECK(quarter.apply(-3) == -1);                // -0.75
  CHECK(quarter.apply(2) == 1);                  // 0.5 away from zero
  CHECK(quarter.apply(-2) == -1);                // -0.5 away from zero (kiln's one rounding: 0)
  CHECK(quarter.apply(6) == 2);                  // 1.5
  CHECK(quarter.apply(-6) == -2);                // -1.5
  const Requantization half = make_tflite(0.5);  // right shift 31: the high multiply alone, ties up
  CHECK(half.apply(3) == 2);
  CHECK(half.apply(-3) == -1);
  CHECK(make_tflite(3.0).apply(1000) == 3000);

  // Against the two steps, written out above, on random accumulators and multipliers and on
  // every tie of small ones.
  std::mt19937 random(2027);
  std::uniform_real_distribution<double> exponent(-31.0, 0.0);
  std::uniform_int_distribution<std::int32_t> any(int32_min, int32_max);
  std::uniform_int_distribution<std::int32_t> small(-100000, 100000);
  for (int trial = 0; trial < 50000; ++trial) {
    const Requantization r = make_tflite(std::exp2(exponent(random)));
    if (r.multiplier == 0) continue;
    const std::int32_t acc = trial % 2 == 0 ? any(random) : small(random);
    INFO("acc " << acc << ", multiplier " << r.multiplier << ", shift " << r.shift);
    CHECK(r.apply(acc) == tflite_requantize(acc, r));
  }
  for (int shift = -30; shift <= 0; ++shift)
    for (std::int32_t acc = -600; acc <= 600; ++acc) {
      const Requantization r = make_tflite(std::ldexp(0.75, shift));
      INFO("acc " << acc << ", shift " << shift);
      CHECK(r.apply(acc) == tflite_requantize(acc, r));
    }
}
