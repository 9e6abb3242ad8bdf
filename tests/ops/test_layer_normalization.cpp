// SPDX-License-Identifier: Apache-2.0
// LayerNormalization: hand-computed, PyTorch's F.layer_norm (fixtures), the accelerated backends
// against RefBackend on odd row lengths, errors.
#include <cmath>

#include "support/fixtures.hpp"

using namespace kiln;
using namespace kiln::test;

TEMPLATE_LIST_TEST_CASE("LayerNormalization: hand-computed", "[ops][layer_normalization]", tested_backends) {
  // Row [1, 2, 3, 4]: mean 2.5, variance (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25, so with epsilon 0
  // the row becomes (x - 2.5) / sqrt(1.25) = +-0.4472136, +-1.3416408. Row [5, 5, 5, 5]: 0 everywhere
  // before the bias (variance 0, epsilon 1e-4 keeps the division finite).
  const float a = 0.4472136f, b = 1.3416408f;
  check_op<ops::LayerNormalization, TestType>(
      {.axis = -1, .epsilon = 0.0f},
      {TestTensor::f32({1, 4}, {1, 2, 3, 4}), TestTensor::f32({4}, {1, 1, 1, 1}).as_constant()},
      {TestTensor::f32({1, 4}, {-b, -a, a, b})}, 1e-6, 1e-6);
  check_op<ops::LayerNormalization, TestType>(
      {.axis = 1, .epsilon = 1e-4f},
      {TestTensor::f32({2, 1, 4}, {1, 2, 3, 4, 5, 5, 5, 5}), TestTensor::f32({1, 4}, {2, 2, 2, 2}).as_constant(),
       TestTensor::f32({1, 4}, {1, 0, 0, -1}).as_constant()},
      {TestTensor::f32({2, 1, 4}, {1 - 2 * b, -2 * a, 2 * a, 2 * b - 1, 1, 0, 0, -1})}, 1e-4, 1e-5);
  // With the statistics: each row's mean and 1 / sqrt(variance + epsilon), 1 / sqrt(1.25) = 0.8944272.
  check_op<ops::LayerNormalization, TestType>(
      {.axis = -1, .epsilon = 0.0f, .statistics = true},
      {TestTensor::f32({2, 4}, {1, 2, 3, 4, 4, 3, 2, 1}), TestTensor::f32({4}, {1, 1, 1, 1}).as_constant()},
      {TestTensor::f32({2, 4}, {-b, -a, a, b, b, a, -a, -b}), TestTensor::f32({2, 1}, {2.5f, 2.5f}),
       TestTensor::f32({2, 1}, {0.8944272f, 0.8944272f})},
      1e-6, 1e-6);
}

TEMPLATE_LIST_TEST_CASE("LayerNormalization matches PyTorch's layer_norm", "[ops][layer_normalization]",
                        tested_backends) {
  for (const auto& c : load_fixtures("layer_normalization")) {
    SECTION(c.name) {
      std::vector<TestTensor> inputs{c.tensor("input"), c.tensor("scale").as_constant()};
      if (c.has("bias")) inputs.push_back(c.tensor("bias").as_constant());
      check_op<ops::LayerNormalization, TestType>({c.i64("axis"), c.f32("epsilon")}, inputs, {c.tensor("output")}, 1e-5,
                                                  1e-5);
    }
  }
}

TEMPLATE_LIST_TEST_CASE("LayerNormalization matches RefBackend on every row length a vector loop meets",
                        "[ops][layer_normalization]", accelerated_backends) {
  for (std::uint32_t n : {1u, 3u, 7u, 8u, 15u, 16u, 17u, 33u, 100u, 768u})
    for (bool bias : {false, true}) {
      INFO(n << " elements a row, bias " << bias);
      // Rows away from zero (mean 40): the variance must come from the deviations, not E[x^2] - E[x]^2.
      std::vector<TestTensor> inputs{random_f32({5, n}, n, 38.0f, 42.0f), random_f32({n}, n + 1, 0.5f, 1.5f)};
      if (bias) inputs.push_back(random_f32({n}, n + 2));
      check_against_ref<ops::LayerNormalization, TestType>({.axis = -1, .epsilon = 1e-5f}, inputs, 1e-4, 1e-5);
    }
  // Rows of two dimensions, the tensor's batch and sequence before them; weights as constants; the
  // statistics too.
  check_against_ref<ops::LayerNormalization, TestType>(
      {.axis = 2, .epsilon = 1e-6f, .statistics = true},
      {random_f32({2, 3, 5, 13}, 1), random_f32({5, 13}, 2).as_constant(), random_f32({5, 13}, 3).as_constant()}, 1e-4,
      1e-5);
}

TEST_CASE("LayerNormalization refuses scales of another shape, a negative epsilon and an axis out of range",
          "[ops][layer_normalization][errors]") {
  const TestTensor x = TestTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto wrong = run_op<ops::LayerNormalization>({}, {x, TestTensor::f32({2}, {1, 1})});
  REQUIRE_FALSE(wrong);
  CHECK_THAT(wrong.status().message(),
             Catch::Contains("input 1 (scale) has shape [2]; it needs x's dimensions from axis 1 on, [3]"));
  auto broadcast = run_op<ops::LayerNormalization>({.axis = 0}, {x, TestTensor::f32({1, 3}, {1, 1, 1})});
  REQUIRE_FALSE(broadcast);
  CHECK_THAT(broadcast.status().message(), Catch::Contains("input 1 (scale) has shape [1, 3]"));
  auto epsilon = run_op<ops::LayerNormalization>({.epsilon = -1.0f}, {x, TestTensor::f32({3}, {1, 1, 1})});
  REQUIRE_FALSE(epsilon);
  CHECK_THAT(epsilon.status().message(), Catch::Contains("epsilon must be >= 0"));
  auto axis = run_op<ops::LayerNormalization>({.axis = 2}, {x, TestTensor::f32({3}, {1, 1, 1})});
  REQUIRE_FALSE(axis);
  CHECK_THAT(axis.status().message(), Catch::Contains("axis 2 is out of range for a tensor of rank 2"));
}
