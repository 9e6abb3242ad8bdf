// SPDX-License-Identifier: Apache-2.0
// Split: a hand-computed case, numpy fixtures, errors.
#include "support/fixtures.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("Split: hand-computed uneven pieces", "[ops][split]") {
  check_op<ops::Split>({.axis = 1, .sizes = {1, 2}}, {TestTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6})},
                       {TestTensor::f32({2, 1}, {1, 4}), TestTensor::f32({2, 2}, {2, 3, 5, 6})}, 0, 0);
}

TEMPLATE_LIST_TEST_CASE("Split matches numpy.split", "[ops][split]", tested_backends) {
  for (const auto& c : load_fixtures("split")) {
    SECTION(c.name) {
      std::vector<TestTensor> outputs;
      for (int i = 0; c.has("output" + std::to_string(i)); ++i)
        outputs.push_back(c.tensor("output" + std::to_string(i)));
      check_op<ops::Split, TestType>({c.i64("axis"), c.list<std::uint32_t>("sizes")}, {c.tensor("input")}, outputs, 0,
                                     0);
    }
  }
}

TEST_CASE("Split rejects sizes that do not add up", "[ops][split][errors]") {
  auto r = run_op<ops::Split>({.axis = 0, .sizes = {1, 1}}, {TestTensor::f32({3}, {1, 2, 3})});
  REQUIRE_FALSE(r);
  CHECK_THAT(r.status().message(), Catch::Contains("add up to 2 but dimension 0 of [3] is 3"));
}

TEMPLATE_LIST_TEST_CASE("Split matches RefBackend along every axis, with odd pieces", "[ops][split]",
                        accelerated_backends) {
  for (std::int64_t axis : {0, 1, 2, -1}) {
    INFO("axis " << axis);
    check_against_ref<ops::Split, TestType>({axis, {1, 4, 2}}, {random_f32({7, 7, 7, 7}, 3)}, 0, 0);
  }
}
