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
  check_op<ops::ElementwiseBinary>({O::Maximum}, {with_nan, TestTensor::f32({2}, {5, 5})}, {TestTensor::f32({2}, {NAN, 5})});
}

TEMPLATE_LIST_TEST_CASE("ElementwiseBinary matches PyTorch", "[ops][elementwise_binary]", tested_backends) {
  for (const auto& c : load_fixtures("elementwise_binary")) {
    SECTION(c.name) {
      check_op<ops::ElementwiseBinary, TestType>({static_cast<ops::BinaryOperation>(c.u32("operation"))},
                                                 {c.tensor("a"), c.tensor("b")}, {c.tensor("output")}, 2e-6, 1e-6);
    }
  }
}

TEST_CASE("ElementwiseBinary rejects shapes that do not broadcast and mixed types", "[ops][elementwise_binary][errors]") {
  auto r1 = run_op<ops::ElementwiseBinary>({}, {TestTensor::f32({2, 3}, std::vector<float>(6)), TestTensor::f32({2}, {1, 2})});
  REQUIRE_FALSE(r1);
  CHECK_THAT(r1.status().message(), Catch::Contains("do not broadcast (dimension 3 vs 2)"));
  auto r2 = run_op<ops::ElementwiseBinary>({}, {TestTensor::f32({2}, {1, 2}), TestTensor::i32({2}, {1, 2})});
  REQUIRE_FALSE(r2);
  CHECK_THAT(r2.status().message(), Catch::Contains("Signed32"));
}
