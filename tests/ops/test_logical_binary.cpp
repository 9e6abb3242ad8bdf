// SPDX-License-Identifier: Apache-2.0
// LogicalBinary: the truth tables of And, Or and Xor, broadcasting, and errors. On RefBackend, which runs it for every
// backend (decision 0025).
#include "support/fixtures.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("LogicalBinary: And, Or and Xor truth tables, broadcast", "[ops][logical_binary]") {
  using O = ops::LogicalOperation;
  // Rows p = 0, 1 against columns q = 0, 1: every pair once.
  const auto p = TestTensor::boolean({2, 1}, {0, 1});
  const auto q = TestTensor::boolean({1, 2}, {0, 1});
  check_op<ops::LogicalBinary>({O::And}, {p, q}, {TestTensor::boolean({2, 2}, {0, 0, 0, 1})});
  check_op<ops::LogicalBinary>({O::Or}, {p, q}, {TestTensor::boolean({2, 2}, {0, 1, 1, 1})});
  check_op<ops::LogicalBinary>({O::Xor}, {p, q}, {TestTensor::boolean({2, 2}, {0, 1, 1, 0})});
}

TEST_CASE("LogicalBinary refuses tensors that are not Boolean", "[ops][logical_binary][errors]") {
  auto r = run_op<ops::LogicalBinary>({}, {TestTensor::boolean({2}, {1, 0}), TestTensor::f32({2}, {1, 0})});
  REQUIRE_FALSE(r);
  CHECK_THAT(r.status().message(), Catch::Contains("takes Boolean tensors; input 1 is Float32"));
}
