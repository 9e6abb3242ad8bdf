// SPDX-License-Identifier: Apache-2.0
// Reduce: hand-computed cases, numpy fixtures for every operation, errors.
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
