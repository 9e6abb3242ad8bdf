// SPDX-License-Identifier: Apache-2.0
// Activation: hand-computed values of every function and PyTorch fixtures.
#include "support/fixtures.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("Activation: hand-computed values", "[ops][activation]") {
  using F = ops::ActivationFunction;
  auto x = TestTensor::f32({1, 5}, {-4, -1, 0, 2, 8});
  check_op<ops::Activation>({F::ReLU}, {x}, {TestTensor::f32({1, 5}, {0, 0, 0, 2, 8})});
  check_op<ops::Activation>(ops::Activation::relu6(), {x}, {TestTensor::f32({1, 5}, {0, 0, 0, 2, 6})});
  check_op<ops::Activation>({F::BoundedReLU, 1, -1}, {x}, {TestTensor::f32({1, 5}, {-1, -1, 0, 1, 1})});
  check_op<ops::Activation>({F::LeakyReLU, 0.5f}, {x}, {TestTensor::f32({1, 5}, {-2, -0.5f, 0, 2, 8})});
  check_op<ops::Activation>({F::HardSigmoid, 0.2f, 0.5f}, {x}, {TestTensor::f32({1, 5}, {0, 0.3f, 0.5f, 0.9f, 1})});
  // hardswish(-1) = -1 * 2 / 6; hardswish(2) = 2 * 5 / 6.
  check_op<ops::Activation>({F::HardSwish}, {x}, {TestTensor::f32({1, 5}, {0, -1.0f / 3, 0, 5.0f / 3, 8})});
  check_op<ops::Activation>({F::Sigmoid}, {TestTensor::f32({1}, {0})}, {TestTensor::f32({1}, {0.5f})});
  // silu(x) = x / (1 + e^-x): e^4 = 54.59815, e^1 = 2.7182817, e^-2 = 0.13533528, e^-8 = 3.3546263e-4.
  check_op<ops::Activation>(
      {F::SiLU}, {x}, {TestTensor::f32({1, 5}, {-4 / 55.59815f, -1 / 3.7182817f, 0, 2 / 1.13533528f, 8 / 1.00033546f})},
      1e-6, 1e-7);
}

TEMPLATE_LIST_TEST_CASE("Activation matches PyTorch", "[ops][activation]", tested_backends) {
  for (const auto& c : load_fixtures("activation")) {
    SECTION(c.name) {
      ops::Activation::Params p{static_cast<ops::ActivationFunction>(c.u32("function")), c.f32("a"), c.f32("b")};
      check_op<ops::Activation, TestType>(p, {c.tensor("input")}, {c.tensor("output")}, 2e-6, 1e-6);
    }
  }
}

TEST_CASE("Activation rejects a bounded ReLU whose lower bound exceeds its upper bound", "[ops][activation][errors]") {
  auto r = run_op<ops::Activation>({ops::ActivationFunction::BoundedReLU, 0, 1}, {TestTensor::f32({1}, {0})});
  REQUIRE_FALSE(r);
  CHECK_THAT(r.status().message(), Catch::Contains("lower bound b <= upper bound a"));
}

TEMPLATE_LIST_TEST_CASE("Activation matches RefBackend on every vector tail", "[ops][activation]",
                        accelerated_backends) {
  using F = ops::ActivationFunction;
  const ops::Activation::Params functions[] = {
      {F::ReLU}, ops::Activation::relu6(),     {F::LeakyReLU, 0.1f}, {F::ELU, 1.5f}, {F::Sigmoid},
      {F::Tanh}, {F::HardSigmoid, 0.2f, 0.5f}, {F::HardSwish},       {F::GELU},      {F::GELU, 1.0f},
      {F::SiLU}};
  for (std::uint32_t n : {1u, 3u, 4u, 5u, 7u, 8u, 9u, 15u, 16u, 17u, 33u, 40000u})
    for (const auto& p : functions) {
      INFO("function " << static_cast<int>(p.function) << ", " << n << " elements");
      check_against_ref<ops::Activation, TestType>(p, {random_f32({n}, n, -6.0f, 6.0f)}, 4e-6, 1e-6);
    }
}
