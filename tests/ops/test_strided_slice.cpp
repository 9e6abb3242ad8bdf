// SPDX-License-Identifier: Apache-2.0
// StridedSlice: a hand-computed case, Python-slicing fixtures (negative indices and strides, clamping), errors.
#include "support/fixtures.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("StridedSlice: hand-computed reverse", "[ops][strided_slice]") {
  check_op<ops::StridedSlice>({.begin = {-1}, .end = {-100}, .strides = {-1}}, {TestTensor::f32({4}, {1, 2, 3, 4})},
                              {TestTensor::f32({4}, {4, 3, 2, 1})}, 0, 0);
}

TEMPLATE_LIST_TEST_CASE("StridedSlice matches Python slicing", "[ops][strided_slice]", tested_backends) {
  for (const auto& c : load_fixtures("strided_slice")) {
    SECTION(c.name) {
      ops::StridedSlice::Params p{c.list<std::int64_t>("begin"), c.list<std::int64_t>("end"),
                                  c.list<std::int64_t>("strides"), c.list<std::int64_t>("axes")};
      check_op<ops::StridedSlice, TestType>(p, {c.tensor("input")}, {c.tensor("output")}, 0, 0);
    }
  }
}

TEST_CASE("StridedSlice rejects a zero stride and mismatched lists", "[ops][strided_slice][errors]") {
  auto x = TestTensor::f32({4}, {1, 2, 3, 4});
  auto r1 = run_op<ops::StridedSlice>({.begin = {0}, .end = {4}, .strides = {0}}, {x});
  REQUIRE_FALSE(r1);
  CHECK_THAT(r1.status().message(), Catch::Contains("stride for axis 0 is zero"));
  auto r2 = run_op<ops::StridedSlice>({.begin = {0, 0}, .end = {4}}, {x});
  REQUIRE_FALSE(r2);
  CHECK_THAT(r2.status().message(), Catch::Contains("begin has 2 entries but end has 1"));
  CHECK_FALSE(run_op<ops::StridedSlice>({.begin = {0}, .end = {4}, .axes = {1}}, {x}));
}

TEMPLATE_LIST_TEST_CASE("StridedSlice matches RefBackend with steps, reversal and contiguous runs",
                        "[ops][strided_slice]", accelerated_backends) {
  auto x = random_f32({3, 9, 11, 17}, 5);
  using P = ops::StridedSlice::Params;
  const std::vector<P> cases = {
      P{{0, 1, 2, 0}, {3, 8, 11, 17}, {}, {}},                   // innermost whole: runs of rows
      P{{1, 0, 0, 3}, {3, 9, 11, 16}, {1, 2, 3, 1}},             // steps outside, a run inside
      P{{0, 0, 0, 1}, {3, 9, 11, 17}, {1, 1, 1, 2}},             // a step on the innermost axis
      P{{2, 8, 10, 16}, {-4, -10, -12, -18}, {-1, -1, -1, -1}},  // everything reversed
      P{{4}, {11}, {2}, {2}},                                    // one axis by name
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    INFO("case " << i);
    check_against_ref<ops::StridedSlice, TestType>(cases[i], {x}, 0, 0);
  }
}
