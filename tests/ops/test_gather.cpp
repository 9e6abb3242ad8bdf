// SPDX-License-Identifier: Apache-2.0
// Gather: a hand-computed case, numpy.take fixtures, and out-of-range indices at execution.
#include "support/fixtures.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("Gather: hand-computed rows with a negative index", "[ops][gather]") {
  auto x = TestTensor::f32({3, 2}, {1, 2, 3, 4, 5, 6});
  check_op<ops::Gather>({.axis = 0}, {x, TestTensor::i32({2}, {-1, 0})}, {TestTensor::f32({2, 2}, {5, 6, 1, 2})}, 0, 0);
}

TEMPLATE_LIST_TEST_CASE("Gather matches numpy.take", "[ops][gather]", tested_backends) {
  for (const auto& c : load_fixtures("gather")) {
    SECTION(c.name) {
      check_op<ops::Gather, TestType>({c.i64("axis")}, {c.tensor("input"), c.tensor("indices").to_i32().as_constant()},
                                      {c.tensor("output")}, 0, 0);
    }
  }
}

TEST_CASE("Gather reports an out-of-range index at execution and stays usable", "[ops][gather][errors]") {
  auto x = TestTensor::f32({3}, {1, 2, 3});
  auto r = run_op<ops::Gather>({.axis = 0}, {x, TestTensor::i32({2}, {0, 3})});
  REQUIRE_FALSE(r);
  CHECK_THAT(r.status().message(),
             Catch::Contains("Gather index 3 at position 1 is out of range for axis 0 of size 3"));
  auto r2 = run_op<ops::Gather>({.axis = 0}, {x, TestTensor::f32({1}, {0})});
  REQUIRE_FALSE(r2);
  CHECK_THAT(r2.status().message(), Catch::Contains("indices must be Signed32"));
}
