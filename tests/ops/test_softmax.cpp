// SPDX-License-Identifier: Apache-2.0
// Softmax and LogSoftmax: hand-computed cases, PyTorch fixtures (axis, beta, large values), errors.
#include <cmath>

#include "support/fixtures.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("Softmax: hand-computed", "[ops][softmax]") {
  // softmax([0, ln 3]) = [1/4, 3/4]; it is shift-invariant, so [16, 16 + ln 3] gives the same.
  const float ln3 = std::log(3.0f);
  check_op<ops::Softmax>({}, {TestTensor::f32({2, 2}, {0, ln3, 16, 16 + ln3})},
                         {TestTensor::f32({2, 2}, {0.25f, 0.75f, 0.25f, 0.75f})}, 1e-5, 1e-6);
  check_op<ops::Softmax>({.log = true}, {TestTensor::f32({1, 2}, {0, ln3})},
                         {TestTensor::f32({1, 2}, {std::log(0.25f), std::log(0.75f)})}, 1e-5, 1e-6);
}

TEMPLATE_LIST_TEST_CASE("Softmax matches PyTorch softmax and log_softmax", "[ops][softmax]", tested_backends) {
  for (const auto& c : load_fixtures("softmax")) {
    SECTION(c.name) {
      ops::Softmax::Params p{c.i64("axis"), c.f32("beta"), c.flag("log")};
      check_op<ops::Softmax, TestType>(p, {c.tensor("input")}, {c.tensor("output")}, 1e-5, 1e-6);
    }
  }
}

TEST_CASE("Softmax rejects an axis out of range", "[ops][softmax][errors]") {
  auto r = run_op<ops::Softmax>({.axis = 2}, {TestTensor::f32({2, 2}, {1, 2, 3, 4})});
  REQUIRE_FALSE(r);
  CHECK_THAT(r.status().message(), Catch::Contains("axis 2 is out of range for a tensor of rank 2"));
}

TEMPLATE_LIST_TEST_CASE("Softmax matches RefBackend along the innermost axis", "[ops][softmax]", accelerated_backends) {
  for (std::uint32_t n : {1u, 3u, 7u, 16u, 17u, 33u, 1000u})
    for (bool log : {false, true}) {
      INFO(n << " classes, log " << log);
      check_against_ref<ops::Softmax, TestType>({.axis = -1, .beta = 0.7f, .log = log},
                                                {random_f32({3, n}, n, -20.0f, 20.0f)}, 1e-5, 1e-6);
    }
}
