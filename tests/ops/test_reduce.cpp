// SPDX-License-Identifier: Apache-2.0
// Reduce: hand-computed cases, numpy fixtures for every operation, errors.
#include <limits>

#include "support/fixtures.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("Reduce: hand-computed over rows and columns", "[ops][reduce]") {
  using O = ops::ReduceOperation;
  auto x = TestTensor::f32({2, 3}, {1, 5, 3, 4, 2, 6});
  check_op<ops::Reduce>({O::Sum, {1}, false}, {x}, {TestTensor::f32({2}, {9, 12})});
  check_op<ops::Reduce>({O::Mean, {0}, true}, {x}, {TestTensor::f32({1, 3}, {2.5f, 3.5f, 4.5f})});
  check_op<ops::Reduce>({O::Max, {}, false}, {x}, {TestTensor::f32({}, {6})});
  check_op<ops::Reduce>({O::Min, {-1}, true}, {x}, {TestTensor::f32({2, 1}, {1, 2})});
  check_op<ops::Reduce>({O::Prod, {0}, false}, {x}, {TestTensor::f32({3}, {4, 10, 18})});
  // The product of nothing is 1.
  check_op<ops::Reduce>({O::Prod, {1}, false}, {TestTensor::f32({2, 0}, {})}, {TestTensor::f32({2}, {1, 1})});
}

TEMPLATE_LIST_TEST_CASE("Reduce matches numpy", "[ops][reduce]", tested_backends) {
  for (const auto& c : load_fixtures("reduce")) {
    SECTION(c.name) {
      ops::Reduce::Params p{static_cast<ops::ReduceOperation>(c.u32("operation")), c.list<std::int64_t>("axes"),
                            c.flag("keep_dims")};
      check_op<ops::Reduce, TestType>(p, {c.tensor("input")}, {c.tensor("output")}, 1e-5, 1e-6);
    }
  }
}

TEST_CASE("Reduce rejects repeated and out-of-range axes", "[ops][reduce][errors]") {
  auto x = TestTensor::f32({2, 3}, std::vector<float>(6));
  auto r1 = run_op<ops::Reduce>({.axes = {1, -1}}, {x});
  REQUIRE_FALSE(r1);
  CHECK_THAT(r1.status().message(), Catch::Contains("listed twice"));
  auto r2 = run_op<ops::Reduce>({.axes = {2}}, {x});
  REQUIRE_FALSE(r2);
  CHECK_THAT(r2.status().message(), Catch::Contains("axis 2 is out of range"));
}

TEMPLATE_LIST_TEST_CASE("Reduce matches RefBackend over kept and reduced innermost axes", "[ops][reduce]",
                        accelerated_backends) {
  using O = ops::ReduceOperation;
  auto x = random_f32({3, 5, 7, 17}, 9);
  auto with_nan = x;
  reinterpret_cast<float*>(with_nan.bytes.data())[40] = std::numeric_limits<float>::quiet_NaN();
  const std::vector<std::vector<std::int64_t>> axes_cases = {{1, 2}, {3}, {0, 2}, {1, 3}, {}, {0}, {0, 1, 2, 3}};
  for (O operation : {O::Sum, O::Mean, O::Max, O::Min})
    for (const auto& axes : axes_cases)
      for (bool keep : {true, false}) {
        INFO("operation " << static_cast<int>(operation) << ", " << axes.size() << " axes, keep " << keep);
        check_against_ref<ops::Reduce, TestType>({operation, axes, keep}, {x}, 1e-5, 1e-5);
        if (operation == O::Max || operation == O::Min)
          check_against_ref<ops::Reduce, TestType>({operation, axes, keep}, {with_nan}, 1e-5, 1e-5);
      }
  check_against_ref<ops::Reduce, TestType>({O::Mean, {1}, true}, {random_f32({4, 1, 33}, 3)}, 1e-5, 1e-5);
  // Products of factors near 1, so that 1785 of them neither overflow nor vanish.
  const auto near_one = random_f32({3, 5, 7, 17}, 11, 0.9f, 1.1f);
  for (const auto& axes : axes_cases)
    for (bool keep : {true, false}) {
      INFO("Prod, " << axes.size() << " axes, keep " << keep);
      check_against_ref<ops::Reduce, TestType>({O::Prod, axes, keep}, {near_one}, 1e-4, 1e-6);
    }
}

TEMPLATE_LIST_TEST_CASE("Reduce in int8: sums, means and extremes requantized (hand-computed)", "[ops][reduce][int8]",
                        tested_backends) {
  using O = ops::ReduceOperation;
  // u8 at scale 0.5, zero point 10: bytes 12, 20, 16 / 10, 40, 13 are 1, 5, 3 / 0, 15, 1.5.
  const auto x = TestTensor::q8({2, 3}, DataType::QAsymmU8, {{0.5f}, 10, {}}, {12, 20, 16, 10, 40, 13});
  // Mean over rows at scale 0.25, zero point 3: 3 -> 12 + 3 = 15; 16.5 / 3 = 5.5 -> 22 + 3 = 25.
  check_op<ops::Reduce, TestType>({O::Mean, {1}, false}, {x},
                                  {TestTensor::q8({2}, DataType::QAsymmU8, {{0.25f}, 3, {}}, {15, 25})});
  // Mean over columns: 0.5, 10, 2.25 -> 2, 40, 9 (+ 3); 2.25 / 0.25 = 9 exactly.
  check_op<ops::Reduce, TestType>({O::Mean, {0}, true}, {x},
                                  {TestTensor::q8({1, 3}, DataType::QAsymmU8, {{0.25f}, 3, {}}, {5, 43, 12})});
  // Sums over rows at scale 1: 9, and 16.5, a tie, which rounds up (decision 0014) -> 17.
  check_op<ops::Reduce, TestType>({O::Sum, {1}, false}, {x},
                                  {TestTensor::q8({2}, DataType::QAsymmU8, {{1.0f}, 0, {}}, {9, 17})});
  // Max and min keep the input's quantisation: the bytes themselves.
  check_op<ops::Reduce, TestType>({O::Max, {1}, true}, {x},
                                  {TestTensor::q8({2, 1}, DataType::QAsymmU8, {{0.5f}, 10, {}}, {20, 40})});
  check_op<ops::Reduce, TestType>({O::Min, {0}, false}, {x},
                                  {TestTensor::q8({3}, DataType::QAsymmU8, {{0.5f}, 10, {}}, {10, 20, 13})});
  // s8 at scale 1, zero point 0, summed at scale 0.5: -128 + 127 - 1 = -2 -> -4; 127 x 3 = 381 ->
  // 762, saturated to 127.
  const auto s = TestTensor::q8({2, 3}, DataType::QAsymmS8, {{1.0f}, 0, {}}, {-128, 127, -1, 127, 127, 127});
  check_op<ops::Reduce, TestType>({O::Sum, {1}, false}, {s},
                                  {TestTensor::q8({2}, DataType::QAsymmS8, {{0.5f}, 0, {}}, {-4, 127})});
  // A product of 8-bit values has no int8 arithmetic in decision 0014: refused, naming the way round.
  auto product = run_op<ops::Reduce, TestType>({O::Prod, {1}, false}, {x});
  REQUIRE_FALSE(product);
  CHECK_THAT(product.status().message(), Catch::Contains("a product runs in Float32 behind a Dequantize"));
}

TEMPLATE_LIST_TEST_CASE("Reduce mean in TensorFlow Lite's int8 arithmetic: its count multiplier and two roundings",
                        "[ops][reduce][int8]", tested_backends) {
  // Nine elements summing to 13 at one scale in and out: 13 / 9 = 1.44. TensorFlow Lite's
  // multiplier is 1 (2^30 x 2^(1 - 31)) shifted left 3 bits and divided by 9, 954437176 x 2^-33;
  // its first rounding takes 13 x that to 5.78 / 4, rounded to 6 / 4 = 1.5, the second to 2. kiln's
  // arithmetic rounds 1.44 once: 1.
  const QuantizationInfo q{{0.5f}, 0, {}};
  const auto x = TestTensor::q8({1, 9}, DataType::QAsymmS8, q, {1, 2, 3, 0, 1, 2, 3, 0, 1});
  const ops::Reduce::Params mean{ops::ReduceOperation::Mean, {1}, false};
  auto tflite =
      run_op<ops::Reduce, TestType>(mean, {x}, 0, nullptr, {{DataType::QAsymmS8, q}}, QuantizedArithmetic::TfLite);
  REQUIRE(tflite);
  CHECK(tflite->front().integers() == std::vector<std::int32_t>{2});
  auto kiln = run_op<ops::Reduce, TestType>(mean, {x}, 0, nullptr, {{DataType::QAsymmS8, q}});
  REQUIRE(kiln);
  CHECK(kiln->front().integers() == std::vector<std::int32_t>{1});
}

TEMPLATE_LIST_TEST_CASE("Reduce in int8 is bit-exact with RefBackend over kept and reduced innermost axes",
                        "[ops][reduce][int8]", accelerated_backends) {
  using O = ops::ReduceOperation;
  const std::vector<std::vector<std::int64_t>> axes_cases = {{1, 2}, {3}, {0, 2}, {1, 3}, {}, {0}, {0, 1, 2, 3}};
  std::uint32_t seed = 6100;
  for (DataType type : {DataType::QAsymmU8, DataType::QAsymmS8}) {
    const bool u8 = type == DataType::QAsymmU8;
    const auto x = random_q8({3, 5, 7, 67}, type, {{0.047f}, u8 ? 140 : 12, {}}, ++seed);
    for (O operation : {O::Sum, O::Mean, O::Max, O::Min})
      for (const auto& axes : axes_cases)
        for (float y_scale : {0.047f, 0.013f, 0.9f}) {
          INFO(to_string(type) << " operation " << static_cast<int>(operation) << ", " << axes.size()
                               << " axes, output scale " << y_scale);
          const std::vector<ops::OutputType> y{{type, {{y_scale}, u8 ? 100 : -7, {}}}};
          check_against_ref<ops::Reduce, TestType>({operation, axes, true}, {x}, 0, 0, y);
        }
  }
}
