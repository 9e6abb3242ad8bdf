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
}

TEMPLATE_LIST_TEST_CASE("ElementwiseBinary with a fused activation", "[ops][elementwise_binary]", tested_backends) {
  // (a + b) clamped to [0, 6]: -3 + 1, 2 + 2, 5 + 4.
  auto a = TestTensor::f32({3}, {-3, 2, 5});
  auto b = TestTensor::f32({3}, {1, 2, 4});
  check_op<ops::ElementwiseBinary, TestType>({ops::BinaryOperation::Add, ops::Activation::relu6()}, {a, b},
                                             {TestTensor::f32({3}, {0, 4, 6})});
}
