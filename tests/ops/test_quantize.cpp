// SPDX-License-Identifier: Apache-2.0
// Quantize, Dequantize, Requantize: hand-computed values at the rounding ties and saturation edges,
// and every accelerated backend bit-exact with RefBackend.
#include <cmath>
#include <limits>

#include "support/op_runner.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

QuantizationInfo per_tensor(float scale, std::int32_t zero_point) { return {{scale}, zero_point, {}}; }

// Integers spread over [lo, hi] in an order no kernel could guess.
std::vector<std::int32_t> spread_integers(std::uint32_t count, std::int32_t lo, std::int32_t hi) {
  std::vector<std::int32_t> v;
  for (std::uint32_t i = 0; i < count; ++i) v.push_back(lo + static_cast<std::int32_t>((i * 7919u) % (hi - lo + 1)));
  return v;
}

}  // namespace

TEST_CASE("Quantize: round half to even, saturation, NaN and infinities", "[ops][quantize]") {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const auto x = TestTensor::f32({10}, {-1.0f, 0.0f, 0.25f, 0.75f, 1.25f, 2.5f, 100.0f, -100.0f, nan, inf});
  // x / 0.5 = -2, 0, 0.5, 1.5, 2.5, 5, 200, -200: ties go to the even neighbour, then + zero point, saturated.
  check_op<ops::Quantize>(
      {}, {x},
      {TestTensor::q8({10}, DataType::QAsymmU8, per_tensor(0.5f, 10), {8, 10, 10, 12, 12, 15, 210, 0, 10, 255})});
  check_op<ops::Quantize>(
      {}, {x},
      {TestTensor::q8({10}, DataType::QAsymmS8, per_tensor(0.5f, -3), {-5, -3, -3, -1, -1, 2, 127, -128, -3, 127})});
}

TEST_CASE("Quantize in TensorFlow Lite's arithmetic rounds halves away from zero", "[ops][quantize]") {
  const auto x = TestTensor::f32({6}, {0.25f, -0.25f, 0.75f, -0.75f, 1.25f, 0.3f});
  // x / 0.5 = 0.5, -0.5, 1.5, -1.5, 2.5, 0.6: away from zero 1, -1, 2, -2, 3, 1 (to even: 0, 0, 2, -2, 2, 1).
  auto y = run_op<ops::Quantize>({}, {x}, 0, nullptr, {{DataType::QAsymmS8, per_tensor(0.5f, -3)}},
                                 QuantizedArithmetic::TfLite);
  REQUIRE(y);
  CHECK(y->front().integers() == std::vector<std::int32_t>{-2, -4, -1, -5, 0, -2});
}

TEST_CASE("Quantize per axis: one scale per slice", "[ops][quantize]") {
  const auto x = TestTensor::f32({2, 3}, {1, 1, 1, -2, 0.3f, 33});
  check_op<ops::Quantize>(
      {}, {x}, {TestTensor::q8({2, 3}, DataType::QSymmS8, {{1.0f, 0.5f, 0.25f}, 0, 1u}, {1, 2, 4, -2, 1, 127})});
}

TEST_CASE("Dequantize: (q - zero point) x scale for every input type", "[ops][quantize]") {
  check_op<ops::Dequantize>({}, {TestTensor::q8({3}, DataType::QAsymmU8, per_tensor(0.5f, 10), {0, 10, 255})},
                            {TestTensor::f32({3}, {-5.0f, 0.0f, 122.5f})});
  check_op<ops::Dequantize>({}, {TestTensor::q8({3}, DataType::QAsymmS8, per_tensor(0.25f, -3), {-128, 0, 127})},
                            {TestTensor::f32({3}, {-31.25f, 0.75f, 32.5f})});
  check_op<ops::Dequantize>(
      {}, {TestTensor::q8({2, 2}, DataType::QSymmS8, {{0.5f, 2.0f}, 0, 0u}, {-4, 6, 3, -1}).as_constant()},
      {TestTensor::f32({2, 2}, {-2, 3, 6, -2})});
  auto bias = TestTensor::i32({3}, {-1000, 7, 2147483647});
  bias.info.quantization = per_tensor(0.25f, 0);
  check_op<ops::Dequantize>({}, {bias}, {TestTensor::f32({3}, {-250.0f, 1.75f, 536870912.0f})});
}

TEST_CASE("Requantize: one rounding of the exact product, ties up, saturated", "[ops][quantize]") {
  // M = 0.625 / 0.25 = 2.5 (both scales exact in binary): q - 10 = -10, -1, 0, 1, 50, 245 ->
  // -25, -2.5 -> -2, 0, 2.5 -> 3, 125, 612.5 -> 613; then - 5, saturated.
  const auto x = TestTensor::q8({6}, DataType::QAsymmU8, per_tensor(0.625f, 10), {0, 9, 10, 11, 60, 255});
  check_op<ops::Requantize>(
      {}, {x}, {TestTensor::q8({6}, DataType::QAsymmS8, per_tensor(0.25f, -5), {-30, -7, -5, -2, 120, 127})});
  // M = 16 saturates below as well; the output type may be the input's.
  check_op<ops::Requantize>(
      {}, {x}, {TestTensor::q8({6}, DataType::QAsymmU8, per_tensor(0.0390625f, 3), {0, 0, 3, 19, 255, 255})});
}

TEST_CASE("Conversions refuse what they cannot do, with reasons", "[ops][quantize]") {
  const auto x = TestTensor::f32({2}, {1, 2});
  auto undeclared = run_op<ops::Quantize>({}, {x});
  REQUIRE_FALSE(undeclared);
  CHECK_THAT(undeclared.status().message(), Catch::Contains("Network::set_output_type"));
  auto to_float = run_op<ops::Quantize>({}, {x}, 0, nullptr, {{DataType::Float32, {}}});
  REQUIRE_FALSE(to_float);
  CHECK_THAT(to_float.status().message(), Catch::Contains("is not QAsymmU8, QAsymmS8 or QSymmS8"));
  auto bad_zero = run_op<ops::Quantize>({}, {x}, 0, nullptr, {{DataType::QAsymmU8, per_tensor(1.0f, 300)}});
  REQUIRE_FALSE(bad_zero);
  CHECK_THAT(bad_zero.status().message(), Catch::Contains("zero point 300"));
  auto from_float = run_op<ops::Dequantize>({}, {x});
  REQUIRE_FALSE(from_float);
  CHECK_THAT(from_float.status().message(), Catch::Contains("input 0 is Float32"));
  const auto q = TestTensor::q8({2}, DataType::QAsymmS8, {{1.0f, 2.0f}, 0, 0u}, {1, 2});
  auto per_axis = run_op<ops::Requantize>({}, {q}, 0, nullptr, {{DataType::QAsymmS8, per_tensor(1.0f, 0)}});
  REQUIRE_FALSE(per_axis);
  CHECK_THAT(per_axis.status().message(), Catch::Contains("per tensor"));
  const auto small = TestTensor::q8({2}, DataType::QAsymmS8, per_tensor(1.0f, 0), {1, 2});
  auto huge = run_op<ops::Requantize>({}, {small}, 0, nullptr, {{DataType::QAsymmS8, per_tensor(1e-10f, 0)}});
  REQUIRE_FALSE(huge);
  CHECK_THAT(huge.status().message(), Catch::Contains("2^30 or more"));
}

TEMPLATE_LIST_TEST_CASE("Conversions are bit-exact with RefBackend on every vector tail", "[ops][quantize]",
                        accelerated_backends) {
  for (std::uint32_t n : {1u, 3u, 15u, 17u, 33u, 255u, 20001u}) {
    INFO(n << " elements");
    // Values of [-3, 3); every other one a tie of the scale 1/32. Some saturate.
    const auto x = random_f32({1, n}, n, -3.0f, 3.0f);
    std::vector<float> halves = x.floats();
    for (std::size_t i = 0; i < halves.size(); i += 2) halves[i] = (std::floor(halves[i] * 32.0f) + 0.5f) / 32.0f;
    const auto with_ties = TestTensor::f32({1, n}, halves);
    check_against_ref<ops::Quantize, TestType>({}, {with_ties}, 0, 0,
                                               {{DataType::QAsymmU8, per_tensor(1.0f / 32, 77)}});
    check_against_ref<ops::Quantize, TestType>({}, {with_ties}, 0, 0, {{DataType::QAsymmS8, per_tensor(0.03f, -9)}});
    const auto u8 = TestTensor::q8({1, n}, DataType::QAsymmU8, per_tensor(0.37f, 131), spread_integers(n, 0, 255));
    const auto s8 = TestTensor::q8({1, n}, DataType::QAsymmS8, per_tensor(0.05f, -20), spread_integers(n, -128, 127));
    check_against_ref<ops::Dequantize, TestType>({}, {u8}, 0, 0);
    check_against_ref<ops::Dequantize, TestType>({}, {s8}, 0, 0);
    check_against_ref<ops::Requantize, TestType>({}, {u8}, 0, 0, {{DataType::QAsymmS8, per_tensor(0.11f, 4)}});
    check_against_ref<ops::Requantize, TestType>({}, {s8}, 0, 0, {{DataType::QAsymmU8, per_tensor(0.9f, 128)}});
  }
}
