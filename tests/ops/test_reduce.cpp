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
}
