// SPDX-License-Identifier: Apache-2.0
// CumulativeSum: hand-computed sums in both directions, numpy's cumsum fixtures, Signed32 wrap-around, errors.
// On RefBackend, which runs it for every backend.
#include "support/fixtures.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("CumulativeSum: ONNX's examples, every direction, along a middle axis", "[ops][cumulative_sum]") {
  const auto x = TestTensor::f32({5}, {1, 2, 3, 4, 5});
  check_op<ops::CumulativeSum>({0}, {x}, {TestTensor::f32({5}, {1, 3, 6, 10, 15})});
  check_op<ops::CumulativeSum>({0, true}, {x}, {TestTensor::f32({5}, {0, 1, 3, 6, 10})});
  check_op<ops::CumulativeSum>({0, false, true}, {x}, {TestTensor::f32({5}, {15, 14, 12, 9, 5})});
  check_op<ops::CumulativeSum>({0, true, true}, {x}, {TestTensor::f32({5}, {14, 12, 9, 5, 0})});
  // [2, 3] along axis 0 and, counted from the end, axis 1.
  const auto m = TestTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6});
  check_op<ops::CumulativeSum>({0}, {m}, {TestTensor::f32({2, 3}, {1, 2, 3, 5, 7, 9})});
  check_op<ops::CumulativeSum>({-1}, {m}, {TestTensor::f32({2, 3}, {1, 3, 6, 4, 9, 15})});
}

TEST_CASE("CumulativeSum matches numpy's cumsum", "[ops][cumulative_sum]") {
  for (const auto& c : load_fixtures("cumulative_sum")) {
    SECTION(c.name) {
      check_op<ops::CumulativeSum>({c.i64("axis"), c.u32("exclusive") != 0, c.u32("reverse") != 0}, {c.tensor("input")},
                                   {c.tensor("output")}, 1e-6, 1e-6);
    }
  }
}

TEST_CASE("CumulativeSum of Signed32: a mask's running count, wrapping as int32 does", "[ops][cumulative_sum]") {
  check_op<ops::CumulativeSum>({1}, {TestTensor::i32({2, 4}, {1, 1, 1, 0, 1, 1, 0, 0})},
                               {TestTensor::i32({2, 4}, {1, 2, 3, 3, 1, 2, 2, 2})});
  check_op<ops::CumulativeSum>({0}, {TestTensor::i32({2}, {2147483647, 1})},
                               {TestTensor::i32({2}, {2147483647, -2147483647 - 1})});
}

TEST_CASE("CumulativeSum refuses an axis out of range", "[ops][cumulative_sum][errors]") {
  auto r = run_op<ops::CumulativeSum>({2}, {TestTensor::f32({2, 3}, std::vector<float>(6))});
  REQUIRE_FALSE(r);
  CHECK_THAT(r.status().message(), Catch::Contains("axis 2"));
}
