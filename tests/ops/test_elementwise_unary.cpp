// SPDX-License-Identifier: Apache-2.0
// ElementwiseUnary: hand-computed values and PyTorch fixtures for every operation.
#include <cmath>

#include "support/fixtures.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("ElementwiseUnary: hand-computed values and IEEE edge cases", "[ops][elementwise_unary]") {
  using O = ops::UnaryOperation;
  auto x = TestTensor::f32({4}, {-2, 0.25f, 1, 4});
  check_op<ops::ElementwiseUnary>({O::Abs}, {x}, {TestTensor::f32({4}, {2, 0.25f, 1, 4})});
  check_op<ops::ElementwiseUnary>({O::Neg}, {x}, {TestTensor::f32({4}, {2, -0.25f, -1, -4})});
  check_op<ops::ElementwiseUnary>({O::Sqrt}, {x}, {TestTensor::f32({4}, {NAN, 0.5f, 1, 2})});
  check_op<ops::ElementwiseUnary>({O::Rsqrt}, {x}, {TestTensor::f32({4}, {NAN, 2, 1, 0.5f})});
  check_op<ops::ElementwiseUnary>({O::Reciprocal}, {x}, {TestTensor::f32({4}, {-0.5f, 4, 1, 0.25f})});
  check_op<ops::ElementwiseUnary>({O::Log}, {TestTensor::f32({2}, {1, 0})}, {TestTensor::f32({2}, {0, -INFINITY})});
  // erf(-2) = -0.99532227, erf(0.25) = 0.27632639, erf(1) = 0.84270079, erf(4) = 0.99999998 (A&S table 7.1)
  check_op<ops::ElementwiseUnary>({O::Erf}, {x},
                                  {TestTensor::f32({4}, {-0.99532227f, 0.27632639f, 0.84270079f, 0.99999998f})});
}

TEMPLATE_LIST_TEST_CASE("ElementwiseUnary matches PyTorch", "[ops][elementwise_unary]", tested_backends) {
  for (const auto& c : load_fixtures("elementwise_unary")) {
    SECTION(c.name) {
      check_op<ops::ElementwiseUnary, TestType>({static_cast<ops::UnaryOperation>(c.u32("operation"))},
                                                {c.tensor("input")}, {c.tensor("output")}, 2e-6, 1e-6);
    }
  }
}

TEMPLATE_LIST_TEST_CASE("ElementwiseUnary matches RefBackend on every vector tail", "[ops][elementwise_unary]",
                        accelerated_backends) {
  using U = ops::UnaryOperation;
  for (U op : {U::Abs, U::Neg, U::Exp, U::Log, U::Sqrt, U::Rsqrt, U::Reciprocal, U::Erf})
    for (std::uint32_t n : {1u, 3u, 5u, 9u, 16u, 17u, 33u, 20001u}) {
      INFO("operation " << static_cast<int>(op) << ", " << n << " elements");
      // Positive inputs keep Log, Sqrt and Rsqrt in their domain; the others see the same data.
      check_against_ref<ops::ElementwiseUnary, TestType>({op}, {random_f32({1, n}, n, 0.01f, 4.0f)}, 4e-6, 1e-6);
    }
}
