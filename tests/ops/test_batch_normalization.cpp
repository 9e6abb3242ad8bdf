// SPDX-License-Identifier: Apache-2.0
// BatchNormalization: a hand-computed case, PyTorch batch_norm fixtures, errors.
#include "support/fixtures.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("BatchNormalization: hand-computed", "[ops][batch_normalization]") {
  // channel 0: (x - 1) / sqrt(4) * 2 + 1; channel 1: (x - 0) / sqrt(1) * 1 - 1 (epsilon 0).
  auto x = TestTensor::f32({2, 2}, {3, 5, -1, 0});
  auto c = [](std::vector<float> v) { return TestTensor::f32({2}, v).as_constant(); };
  check_op<ops::BatchNormalization>({.epsilon = 0}, {x, c({1, 0}), c({4, 1}), c({1, -1}), c({2, 1})},
                                    {TestTensor::f32({2, 2}, {3, 4, -1, -1})});
}

TEMPLATE_LIST_TEST_CASE("BatchNormalization matches PyTorch batch_norm", "[ops][batch_normalization]",
                        tested_backends) {
  for (const auto& c : load_fixtures("batch_normalization")) {
    SECTION(c.name) {
      check_op<ops::BatchNormalization, TestType>(
          {c.f32("epsilon")},
          {c.tensor("input"), c.tensor("mean").as_constant(), c.tensor("variance").as_constant(),
           c.tensor("beta").as_constant(), c.tensor("gamma").as_constant()},
          {c.tensor("output")}, 1e-5, 1e-6);
    }
  }
}

TEST_CASE("BatchNormalization rejects statistics of the wrong length", "[ops][batch_normalization][errors]") {
  auto x = TestTensor::f32({1, 3}, {1, 2, 3});
  auto ok = TestTensor::f32({3}, {1, 1, 1});
  auto r = run_op<ops::BatchNormalization>({}, {x, ok, TestTensor::f32({2}, {1, 1}), ok, ok});
  REQUIRE_FALSE(r);
  CHECK_THAT(r.status().message(), Catch::Contains("input 2 (variance) has 2 elements but x has 3 channels"));
}

TEMPLATE_LIST_TEST_CASE("BatchNormalization matches RefBackend on channel tails", "[ops][batch_normalization]",
                        accelerated_backends) {
  for (std::uint32_t c : {1u, 3u, 16u, 17u, 35u}) {
    INFO(c << " channels");
    check_against_ref<ops::BatchNormalization, TestType>(
        {.epsilon = 1e-3f},
        {random_f32({2, 3, 5, c}, c), random_f32({c}, 10).as_constant(), random_f32({c}, 11, 0.1f, 2.0f).as_constant(),
         random_f32({c}, 12).as_constant(), random_f32({c}, 13).as_constant()},
        1e-5, 1e-5);
  }
}
