// SPDX-License-Identifier: Apache-2.0
// ElementwiseBinary: hand-computed broadcasting, PyTorch fixtures for every operation, errors.
#include <cmath>

#include "support/fixtures.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("ElementwiseBinary: hand-computed broadcasting", "[ops][elementwise_binary]") {
  using O = ops::BinaryOperation;
  auto column = TestTensor::f32({2, 1}, {1, 2});
  auto row = TestTensor::f32({3}, {10, 20, 30});
  check_op<ops::ElementwiseBinary>({O::Add}, {column, row}, {TestTensor::f32({2, 3}, {11, 21, 31, 12, 22, 32})});
  check_op<ops::ElementwiseBinary>({O::Sub}, {row, column}, {TestTensor::f32({2, 3}, {9, 19, 29, 8, 18, 28})});
  check_op<ops::ElementwiseBinary>({O::Power}, {column, TestTensor::f32({}, {3})}, {TestTensor::f32({2, 1}, {1, 8})});
  // Maximum and Minimum propagate NaN, as numpy does.
  auto with_nan = TestTensor::f32({2}, {NAN, 1});
  check_op<ops::ElementwiseBinary>({O::Maximum}, {with_nan, TestTensor::f32({2}, {5, 5})},
                                   {TestTensor::f32({2}, {NAN, 5})});
  // PRelu: negative elements times their channel's slope, the others as they are.
  check_op<ops::ElementwiseBinary>(
      {O::PRelu}, {TestTensor::f32({2, 3}, {-2, 0, 3, -4, 5, -6}), TestTensor::f32({3}, {0.5f, 2, -1})},
      {TestTensor::f32({2, 3}, {-1, 0, 3, -2, 5, 6})});
  // Mod takes the divisor's sign (Python's -7 % 3 == 2), FMod the dividend's (C's fmod(-7, 3) == -1).
  const auto dividends = TestTensor::f32({4}, {-7, 7, -7, 5.5f});
  const auto divisors = TestTensor::f32({4}, {3, -3, -3, 2});
  check_op<ops::ElementwiseBinary>({O::Mod}, {dividends, divisors}, {TestTensor::f32({4}, {2, -2, -1, 1.5f})});
  check_op<ops::ElementwiseBinary>({O::FMod}, {dividends, divisors}, {TestTensor::f32({4}, {-1, 1, -1, 1.5f})});
}

TEST_CASE("ElementwiseBinary on Signed32: wrap-around, truncation, remainders (hand-computed)",
          "[ops][elementwise_binary]") {
  using O = ops::BinaryOperation;
  const auto a = TestTensor::i32({5}, {-7, 7, 2147483647, -2147483647 - 1, 9});
  const auto b = TestTensor::i32({5}, {3, -3, 1, -1, 4});
  check_op<ops::ElementwiseBinary>({O::Add}, {a, b}, {TestTensor::i32({5}, {-4, 4, -2147483647 - 1, 2147483647, 13})});
  check_op<ops::ElementwiseBinary>({O::Div}, {a, b}, {TestTensor::i32({5}, {-2, -2, 2147483647, -2147483647 - 1, 2})});
  check_op<ops::ElementwiseBinary>({O::Mod}, {a, b}, {TestTensor::i32({5}, {2, -2, 0, 0, 1})});
  check_op<ops::ElementwiseBinary>({O::FMod}, {a, b}, {TestTensor::i32({5}, {-1, 1, 0, 0, 1})});
  check_op<ops::ElementwiseBinary>({O::Power}, {TestTensor::i32({3}, {-3, 2, 65536}), TestTensor::i32({}, {3})},
                                   {TestTensor::i32({3}, {-27, 8, 0})});
  // A zero divisor or a negative exponent is an error naming the element, never undefined behaviour.
  auto by_zero = run_op<ops::ElementwiseBinary>({O::Mod}, {a, TestTensor::i32({}, {0})});
  REQUIRE_FALSE(by_zero);
  CHECK_THAT(by_zero.status().message(), Catch::Contains("Signed32 Mod of -7 and 0 at element 0: division by zero"));
  auto negative = run_op<ops::ElementwiseBinary>({O::Power}, {a, TestTensor::i32({}, {-1})});
  REQUIRE_FALSE(negative);
  CHECK_THAT(negative.status().message(), Catch::Contains("negative exponent"));
}

TEMPLATE_LIST_TEST_CASE("ElementwiseBinary matches PyTorch", "[ops][elementwise_binary]", tested_backends) {
  for (const auto& c : load_fixtures("elementwise_binary")) {
    SECTION(c.name) {
      check_op<ops::ElementwiseBinary, TestType>({static_cast<ops::BinaryOperation>(c.u32("operation"))},
                                                 {c.tensor("a"), c.tensor("b")}, {c.tensor("output")}, 2e-6, 1e-6);
    }
  }
}

TEST_CASE("ElementwiseBinary rejects shapes that do not broadcast and mixed types",
          "[ops][elementwise_binary][errors]") {
  auto r1 = run_op<ops::ElementwiseBinary>(
      {}, {TestTensor::f32({2, 3}, std::vector<float>(6)), TestTensor::f32({2}, {1, 2})});
  REQUIRE_FALSE(r1);
  CHECK_THAT(r1.status().message(), Catch::Contains("do not broadcast (dimension 3 vs 2)"));
  auto r2 = run_op<ops::ElementwiseBinary>({}, {TestTensor::f32({2}, {1, 2}), TestTensor::i32({2}, {1, 2})});
  REQUIRE_FALSE(r2);
  CHECK_THAT(r2.status().message(), Catch::Contains("Signed32"));
}

TEMPLATE_LIST_TEST_CASE("ElementwiseBinary matches RefBackend on broadcasts and tails", "[ops][elementwise_binary]",
                        accelerated_backends) {
  using O = ops::BinaryOperation;
  const std::pair<TensorShape, TensorShape> shapes[] = {
      {{17}, {17}},           {{2, 3, 5, 33}, {33}},        {{2, 3, 5, 33}, {1}},         {{1}, {3, 7}},
      {{4, 1, 9}, {1, 5, 1}}, {{3, 17, 1}, {3, 1, 16}},     {{2, 9, 9, 3}, {2, 9, 9, 3}}, {{40000}, {}},
      {{5, 7, 3}, {5, 1, 3}}, {{1, 1, 1, 31}, {6, 1, 1, 1}}};
  for (O op : {O::Add, O::Sub, O::Mul, O::Div, O::Maximum, O::Minimum, O::Power})
    for (const auto& [a, b] : shapes) {
      INFO("operation " << to_string(op) << ", " << a.to_string() << " and " << b.to_string());
      // Positive bases keep Power real; divisors stay away from zero.
      check_against_ref<ops::ElementwiseBinary, TestType>(
          {op}, {random_f32(a, 1, 0.5f, 2.0f), random_f32(b, 2, 0.5f, 2.0f)}, 4e-6, 1e-6);
    }
  for (const auto& [a, b] : shapes) {  // PRelu needs negative inputs to mean anything
    INFO("PRelu, " << a.to_string() << " and " << b.to_string());
    check_against_ref<ops::ElementwiseBinary, TestType>({O::PRelu}, {random_f32(a, 1), random_f32(b, 2)}, 4e-6, 1e-6);
  }
  for (O op : {O::Mod, O::FMod})  // mixed signs; remainders are exact, so every backend's agree exactly
    for (const auto& [a, b] : shapes) {
      INFO("operation " << to_string(op) << ", " << a.to_string() << " and " << b.to_string());
      check_against_ref<ops::ElementwiseBinary, TestType>({op}, {random_f32(a, 3, -9.0f, 9.0f), random_f32(b, 4)}, 0,
                                                          0);
    }
}

TEMPLATE_LIST_TEST_CASE("ElementwiseBinary with a fused activation", "[ops][elementwise_binary]", tested_backends) {
  // (a + b) clamped to [0, 6]: -3 + 1, 2 + 2, 5 + 4.
  auto a = TestTensor::f32({3}, {-3, 2, 5});
  auto b = TestTensor::f32({3}, {1, 2, 4});
  check_op<ops::ElementwiseBinary, TestType>({ops::BinaryOperation::Add, ops::Activation::relu6()}, {a, b},
                                             {TestTensor::f32({3}, {0, 4, 6})});
}

TEMPLATE_LIST_TEST_CASE("ElementwiseBinary in int8: Add, Sub, Mul of different scales, ties up (hand-computed)",
                        "[ops][elementwise_binary][int8]", tested_backends) {
  // a at scale 0.5, zero point 10: 1, -1, 10, 0.5, -0.5. b at 0.25, zero point 100: 1, 0, -10,
  // -0.25, 0.25. Output at 0.5, zero point 20 (QAsymmU8).
  const auto a = TestTensor::q8({5}, DataType::QAsymmU8, {{0.5f}, 10, {}}, {12, 8, 30, 11, 9});
  const auto b = TestTensor::q8({5}, DataType::QAsymmU8, {{0.25f}, 100, {}}, {104, 100, 60, 99, 101});
  const QuantizationInfo y{{0.5f}, 20, {}};
  using O = ops::BinaryOperation;
  // a + b = 2, -1, 0, 0.25, -0.25: in output units 4, -2, 0, 0.5 -> 1, -0.5 -> 0 (ties go up).
  check_op<ops::ElementwiseBinary, TestType>({O::Add}, {a, b},
                                             {TestTensor::q8({5}, DataType::QAsymmU8, y, {24, 18, 20, 21, 20})});
  // A fused ReLU clamps at the zero point.
  check_op<ops::ElementwiseBinary, TestType>({O::Add, ops::Activation::Params{}}, {a, b},
                                             {TestTensor::q8({5}, DataType::QAsymmU8, y, {24, 20, 20, 21, 20})});
  // a - b = 0, -1, 20, 0.75, -0.75: 0, -2, 40, 1.5 -> 2, -1.5 -> -1.
  check_op<ops::ElementwiseBinary, TestType>({O::Sub}, {a, b},
                                             {TestTensor::q8({5}, DataType::QAsymmU8, y, {20, 18, 60, 22, 19})});
  // a b = 1, 0, -100, -0.125, -0.125: 2, 0, -200 (saturates at 0), -0.25 -> 0, -0.25 -> 0.
  check_op<ops::ElementwiseBinary, TestType>({O::Mul}, {a, b},
                                             {TestTensor::q8({5}, DataType::QAsymmU8, y, {22, 20, 0, 20, 20})});
}

TEST_CASE("ElementwiseBinary in int8 refuses what decision 0014 does not define, with reasons",
          "[ops][elementwise_binary][int8]") {
  const auto a = TestTensor::q8({2}, DataType::QAsymmU8, {{0.5f}, 10, {}}, {12, 8});
  auto divided = run_op<ops::ElementwiseBinary>({ops::BinaryOperation::Div}, {a, a});
  REQUIRE_FALSE(divided);
  CHECK_THAT(divided.status().message(), Catch::Contains("int8 Add, Sub and Mul only"));
  auto prelu = run_op<ops::ElementwiseBinary>({ops::BinaryOperation::PRelu}, {a, a});
  REQUIRE_FALSE(prelu);
  CHECK_THAT(prelu.status().message(), Catch::Contains("PRelu runs in Float32 behind a Dequantize"));
  auto sigmoid = run_op<ops::ElementwiseBinary>(
      {ops::BinaryOperation::Add, ops::Activation::Params{ops::ActivationFunction::Sigmoid}}, {a, a});
  REQUIRE_FALSE(sigmoid);
  CHECK_THAT(sigmoid.status().message(), Catch::Contains("ReLU-family clamps only"));
}

TEMPLATE_LIST_TEST_CASE("ElementwiseBinary in int8 is bit-exact with RefBackend: broadcasts, scales, clamps",
                        "[ops][elementwise_binary][int8]", accelerated_backends) {
  struct Case {
    TensorShape a, b;
  };
  const Case cases[] = {{{2, 3, 5, 17}, {2, 3, 5, 17}},
                        {{2, 3, 5, 17}, {17}},
                        {{1, 3, 1, 17}, {2, 1, 5, 1}},
                        {{4, 1}, {1, 33}},
                        {{1, 40, 40, 33}, {1, 40, 40, 33}}};  // the last is long enough to be split over threads
  std::uint32_t seed = 900;
  for (DataType type : {DataType::QAsymmU8, DataType::QAsymmS8})
    for (ops::BinaryOperation op : {ops::BinaryOperation::Add, ops::BinaryOperation::Sub, ops::BinaryOperation::Mul})
      for (const Case& c : cases) {
        INFO(to_string(type) << " " << ops::to_string(op) << ": " << c.a.to_string() << " and " << c.b.to_string());
        const bool u8 = type == DataType::QAsymmU8;
        const auto a = random_q8(c.a, type, {{0.037f}, u8 ? 131 : -5, {}}, ++seed);
        const auto b = random_q8(c.b, type, {{0.011f}, u8 ? 7 : 100, {}}, ++seed);
        const float y_scale = op == ops::BinaryOperation::Mul ? 0.13f : 0.029f;
        const std::vector<ops::OutputType> y{{type, {{y_scale}, u8 ? 128 : 0, {}}}};
        check_against_ref<ops::ElementwiseBinary, TestType>({op}, {a, b}, 0, 0, y);
        check_against_ref<ops::ElementwiseBinary, TestType>({op, ops::Activation::relu6()}, {a, b}, 0, 0, y);
      }
}
