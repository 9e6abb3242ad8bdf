// SPDX-License-Identifier: Apache-2.0
// Comparison: hand-computed values of every operation, broadcasting, NaN, and errors. On RefBackend, which runs it for
// every backend (decision 0025).
#include <cmath>

#include "support/fixtures.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("Comparison: every operation on Float32, hand-computed, with broadcasting", "[ops][comparison]") {
  using O = ops::ComparisonOperation;
  // A column of 2 against a row of 3: [[1], [2]] against [0, 2, NaN].
  const auto a = TestTensor::f32({2, 1}, {1, 2});
  const auto b = TestTensor::f32({3}, {0, 2, NAN});
  // NaN compares unequal to everything: only NotEqual holds.
  check_op<ops::Comparison>({O::Equal}, {a, b}, {TestTensor::boolean({2, 3}, {0, 0, 0, 0, 1, 0})});
  check_op<ops::Comparison>({O::NotEqual}, {a, b}, {TestTensor::boolean({2, 3}, {1, 1, 1, 1, 0, 1})});
  check_op<ops::Comparison>({O::Less}, {a, b}, {TestTensor::boolean({2, 3}, {0, 1, 0, 0, 0, 0})});
  check_op<ops::Comparison>({O::LessOrEqual}, {a, b}, {TestTensor::boolean({2, 3}, {0, 1, 0, 0, 1, 0})});
  check_op<ops::Comparison>({O::Greater}, {a, b}, {TestTensor::boolean({2, 3}, {1, 0, 0, 1, 0, 0})});
  check_op<ops::Comparison>({O::GreaterOrEqual}, {a, b}, {TestTensor::boolean({2, 3}, {1, 0, 0, 1, 1, 0})});
}

TEST_CASE("Comparison of Signed32 and Boolean tensors", "[ops][comparison]") {
  using O = ops::ComparisonOperation;
  // Values far apart in magnitude: a comparison through float would call 2^24 + 1 and 2^24 equal.
  const auto a = TestTensor::i32({4}, {16777217, -5, 7, 2147483647});
  const auto b = TestTensor::i32({4}, {16777216, -5, 8, -2147483647 - 1});
  check_op<ops::Comparison>({O::Equal}, {a, b}, {TestTensor::boolean({4}, {0, 1, 0, 0})});
  check_op<ops::Comparison>({O::Greater}, {a, b}, {TestTensor::boolean({4}, {1, 0, 0, 1})});
  const auto p = TestTensor::boolean({2, 2}, {0, 1, 1, 0}), q = TestTensor::boolean({2}, {1, 0});
  check_op<ops::Comparison>({O::Equal}, {p, q}, {TestTensor::boolean({2, 2}, {0, 0, 1, 1})});
}

TEST_CASE("Comparison refuses mixed and unsupported types and shapes that do not broadcast",
          "[ops][comparison][errors]") {
  auto mixed = run_op<ops::Comparison>({}, {TestTensor::f32({2}, {1, 2}), TestTensor::i32({2}, {1, 2})});
  REQUIRE_FALSE(mixed);
  CHECK_THAT(mixed.status().message(), Catch::Contains("input 1 has type Signed32 but input 0 has type Float32"));
  const auto q = TestTensor::q8({2}, DataType::QAsymmU8, {{1.0f}, 0, {}}, {1, 2});
  auto bytes = run_op<ops::Comparison>({}, {q, q});
  REQUIRE_FALSE(bytes);
  CHECK_THAT(bytes.status().message(), Catch::Contains("compares Float32, Signed32 and Boolean tensors"));
  auto shapes = run_op<ops::Comparison>({}, {TestTensor::f32({2}, {1, 2}), TestTensor::f32({3}, {1, 2, 3})});
  REQUIRE_FALSE(shapes);
  CHECK_THAT(shapes.status().message(), Catch::Contains("do not broadcast"));
}
