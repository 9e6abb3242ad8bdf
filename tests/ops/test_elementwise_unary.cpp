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
  // sin(pi/6) = 0.5, cos(pi/3) = 0.5, tan(pi/4) = 1, atan(1) = pi/4, cosh(0) = 1, asinh(sinh(1)) = 1.
  const float pi = 3.14159265f;
  auto angles = TestTensor::f32({3}, {pi / 6, pi / 3, pi / 4});
  check_op<ops::ElementwiseUnary>({O::Sin}, {angles}, {TestTensor::f32({3}, {0.5f, 0.8660254f, 0.70710678f})});
  check_op<ops::ElementwiseUnary>({O::Cos}, {angles}, {TestTensor::f32({3}, {0.8660254f, 0.5f, 0.70710678f})});
  check_op<ops::ElementwiseUnary>({O::Tan}, {angles}, {TestTensor::f32({3}, {0.57735027f, 1.7320508f, 1})});
  check_op<ops::ElementwiseUnary>({O::Atan}, {TestTensor::f32({2}, {1, -1})},
                                  {TestTensor::f32({2}, {pi / 4, -pi / 4})});
  check_op<ops::ElementwiseUnary>({O::Asinh}, {TestTensor::f32({1}, {1.17520119f})}, {TestTensor::f32({1}, {1})});
  check_op<ops::ElementwiseUnary>({O::Acos}, {TestTensor::f32({2}, {2, 0.5f})}, {TestTensor::f32({2}, {NAN, pi / 3})});
  // Halves round to the even neighbour; Sign keeps zero.
  auto ties = TestTensor::f32({6}, {-2.5f, -0.5f, 0.5f, 1.5f, 2.5f, 0});
  check_op<ops::ElementwiseUnary>({O::Round}, {ties}, {TestTensor::f32({6}, {-2, 0, 0, 2, 2, 0})});
  check_op<ops::ElementwiseUnary>({O::Floor}, {ties}, {TestTensor::f32({6}, {-3, -1, 0, 1, 2, 0})});
  check_op<ops::ElementwiseUnary>({O::Ceil}, {ties}, {TestTensor::f32({6}, {-2, 0, 1, 2, 3, 0})});
  check_op<ops::ElementwiseUnary>({O::Sign}, {ties}, {TestTensor::f32({6}, {-1, -1, 1, 1, 1, 0})});
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
  // Each function over its domain: what lies outside is NaN on every backend alike.
  auto domain = [](U op) -> std::pair<float, float> {
    switch (op) {
      case U::Log:
      case U::Sqrt:
      case U::Rsqrt: return {0.01f, 4.0f};
      case U::Asin:
      case U::Acos:
      case U::Atanh: return {-0.99f, 0.99f};
      case U::Acosh: return {1.0f, 5.0f};
      case U::Tan: return {-1.2f, 1.2f};  // away from its poles at +-pi/2, where no tolerance holds
      case U::Reciprocal: return {0.05f, 4.0f};
      default: return {-4.0f, 4.0f};
    }
  };
  for (auto id = 0; id <= static_cast<int>(U::Round); ++id)
    for (std::uint32_t n : {1u, 3u, 5u, 9u, 16u, 17u, 33u, 20001u}) {
      const auto op = static_cast<U>(id);
      INFO(to_string(op) << ", " << n << " elements");
      const auto [low, high] = domain(op);
      check_against_ref<ops::ElementwiseUnary, TestType>({op}, {random_f32({1, n}, n, low, high)}, 4e-6, 1e-6);
    }
}
