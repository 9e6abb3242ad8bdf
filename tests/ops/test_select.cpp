// SPDX-License-Identifier: Apache-2.0
// Select: hand-computed three-way broadcasting on every element size, and errors. On RefBackend, which runs it for
// every backend (decision 0025).
#include "support/fixtures.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("Select broadcasts its condition, x and other together (hand-computed)", "[ops][select]") {
  // condition [2, 1], x [3], other [2, 3] -> [2, 3]: row 0 from other, row 1 from x.
  const auto condition = TestTensor::boolean({2, 1}, {0, 1});
  const auto x = TestTensor::f32({3}, {1, 2, 3});
  const auto other = TestTensor::f32({2, 3}, {-1, -2, -3, -4, -5, -6});
  check_op<ops::Select>({}, {condition, x, other}, {TestTensor::f32({2, 3}, {-1, -2, -3, 1, 2, 3})});
  // A causal mask: the lower triangle of a [3, 3] score matrix kept, -inf above it.
  const auto lower = TestTensor::boolean({3, 3}, {1, 0, 0, 1, 1, 0, 1, 1, 1});
  const auto scores = TestTensor::f32({1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  const float inf = std::numeric_limits<float>::infinity();
  check_op<ops::Select>({}, {lower, scores, TestTensor::f32({}, {-inf})},
                        {TestTensor::f32({1, 3, 3}, {1, -inf, -inf, 4, 5, -inf, 7, 8, 9})});
}

TEST_CASE("Select moves Signed32, Boolean and 8-bit elements too", "[ops][select]") {
  const auto condition = TestTensor::boolean({4}, {1, 0, 0, 1});
  check_op<ops::Select>({}, {condition, TestTensor::i32({4}, {1, 2, 3, 4}), TestTensor::i32({1}, {-7})},
                        {TestTensor::i32({4}, {1, -7, -7, 4})});
  check_op<ops::Select>({}, {condition, TestTensor::boolean({1}, {1}), TestTensor::boolean({4}, {0, 1, 0, 0})},
                        {TestTensor::boolean({4}, {1, 1, 0, 1})});
  const QuantizationInfo q{{0.5f}, 3, {}};
  check_op<ops::Select>({},
                        {condition, TestTensor::q8({4}, DataType::QAsymmS8, q, {-128, 1, 2, 127}),
                         TestTensor::q8({4}, DataType::QAsymmS8, q, {9, 8, 7, 6})},
                        {TestTensor::q8({4}, DataType::QAsymmS8, q, {-128, 8, 7, 127})});
}

TEST_CASE("Select refuses a condition that is not Boolean and branches of two types", "[ops][select][errors]") {
  const auto x = TestTensor::f32({2}, {1, 2});
  auto condition = run_op<ops::Select>({}, {x, x, x});
  REQUIRE_FALSE(condition);
  CHECK_THAT(condition.status().message(), Catch::Contains("input 0 (condition) must be Boolean, got Float32"));
  auto branches = run_op<ops::Select>({}, {TestTensor::boolean({2}, {1, 0}), x, TestTensor::i32({2}, {1, 2})});
  REQUIRE_FALSE(branches);
  CHECK_THAT(branches.status().message(), Catch::Contains("input 2 has type Signed32 but input 1 has type Float32"));
}
