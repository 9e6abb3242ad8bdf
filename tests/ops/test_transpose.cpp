// SPDX-License-Identifier: Apache-2.0
// Transpose: a hand-computed case, numpy fixtures (rank 2 to 5, default reversal), errors.
#include "support/fixtures.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("Transpose: hand-computed matrix", "[ops][transpose]") {
  check_op<ops::Transpose>({{1, 0}}, {TestTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6})},
                           {TestTensor::f32({3, 2}, {1, 4, 2, 5, 3, 6})}, 0, 0);
}

TEMPLATE_LIST_TEST_CASE("Transpose matches numpy.transpose", "[ops][transpose]", tested_backends) {
  for (const auto& c : load_fixtures("transpose")) {
    SECTION(c.name) {
      check_op<ops::Transpose, TestType>({c.list<std::uint32_t>("permutation")}, {c.tensor("input")},
                                         {c.tensor("output")}, 0, 0);
    }
  }
}

TEST_CASE("Transpose moves Signed32 data too", "[ops][transpose]") {
  auto r = run_op<ops::Transpose>({{1, 0}}, {TestTensor::i32({2, 2}, {1, 2, 3, 4})});
  REQUIRE(r);
  const auto* values = reinterpret_cast<const std::int32_t*>((*r)[0].bytes.data());
  CHECK(std::vector<std::int32_t>(values, values + 4) == std::vector<std::int32_t>{1, 3, 2, 4});
}

TEST_CASE("Transpose rejects a non-permutation", "[ops][transpose][errors]") {
  auto x = TestTensor::f32({2, 3}, std::vector<float>(6));
  auto r1 = run_op<ops::Transpose>({{0, 0}}, {x});
  REQUIRE_FALSE(r1);
  CHECK_THAT(r1.status().message(), Catch::Contains("is not a permutation of 0..1"));
  CHECK_FALSE(run_op<ops::Transpose>({{0, 1, 2}}, {x}));
}
