// SPDX-License-Identifier: Apache-2.0
// ArgMinMax: hand-computed ties, NaN and axes; numpy fixtures over odd shapes; errors. On RefBackend, which runs it for
// every backend (decision 0025).
#include <cmath>

#include "support/fixtures.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("ArgMinMax: hand-computed axes, ties and NaN", "[ops][arg_min_max]") {
  using F = ops::ArgFunction;
  // [[3, 9, 9], [4, 1, 1]]: rows tie at 9 and at 1.
  const auto x = TestTensor::f32({2, 3}, {3, 9, 9, 4, 1, 1});
  check_op<ops::ArgMinMax>({F::Max, 1, false}, {x}, {TestTensor::i32({2}, {1, 0})});
  check_op<ops::ArgMinMax>({F::Max, -1, true, true}, {x}, {TestTensor::i32({2, 1}, {2, 0})});
  check_op<ops::ArgMinMax>({F::Min, 1, false}, {x}, {TestTensor::i32({2}, {0, 1})});
  check_op<ops::ArgMinMax>({F::Min, 1, false, true}, {x}, {TestTensor::i32({2}, {0, 2})});
  check_op<ops::ArgMinMax>({F::Max, 0, true}, {x}, {TestTensor::i32({1, 3}, {1, 0, 0})});
  // numpy: argmax and argmin both return the first NaN.
  const auto with_nan = TestTensor::f32({5}, {1, NAN, 7, NAN, -1});
  check_op<ops::ArgMinMax>({F::Max, 0, false}, {with_nan}, {TestTensor::i32({}, {1})});
  check_op<ops::ArgMinMax>({F::Min, 0, false}, {with_nan}, {TestTensor::i32({}, {1})});
}

TEST_CASE("ArgMinMax of Signed32 and 8-bit tensors", "[ops][arg_min_max]") {
  using F = ops::ArgFunction;
  check_op<ops::ArgMinMax>({F::Max, 0, false}, {TestTensor::i32({3}, {-2147483647 - 1, 2147483647, 5})},
                           {TestTensor::i32({}, {1})});
  // Signed bytes: -128 is the smallest value, 127 the largest.
  const auto s = TestTensor::q8({4}, DataType::QAsymmS8, {{0.1f}, -3, {}}, {5, -128, 127, 0});
  check_op<ops::ArgMinMax>({F::Min, 0, false}, {s}, {TestTensor::i32({}, {1})});
  check_op<ops::ArgMinMax>({F::Max, 0, false}, {s}, {TestTensor::i32({}, {2})});
}

TEST_CASE("ArgMinMax matches numpy over odd shapes and every axis", "[ops][arg_min_max]") {
  for (const auto& c : load_fixtures("arg_min_max")) {
    SECTION(c.name) {
      ops::ArgMinMax::Params p{static_cast<ops::ArgFunction>(c.u32("function")), c.i64("axis"), c.flag("keep_dims"),
                               c.flag("select_last_index")};
      check_op<ops::ArgMinMax>(p, {c.tensor("input")}, {c.tensor("output").to_i32()});
    }
  }
}

TEST_CASE("ArgMinMax refuses an axis out of range and an empty axis", "[ops][arg_min_max][errors]") {
  auto axis = run_op<ops::ArgMinMax>({.axis = 2}, {TestTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6})});
  REQUIRE_FALSE(axis);
  CHECK_THAT(axis.status().message(), Catch::Contains("axis 2 is out of range"));
  auto empty = run_op<ops::ArgMinMax>({.axis = 1}, {TestTensor::f32({2, 0}, {})});
  REQUIRE_FALSE(empty);
  CHECK_THAT(empty.status().message(), Catch::Contains("the axis 1 is empty"));
}
